import { Context, Effect } from "effect"

/**
 * A unit of work: state changes and the domain events they cause commit together (transactional
 * outbox). The SQL adapter maps this to a database transaction; the memory adapter to a lock.
 * Keep nested calls sequential: concurrent nested transactions collide on savepoints in Effect 3.
 */
export interface Transactor {
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const Transactor = Context.GenericTag<Transactor>("core/Transactor")
