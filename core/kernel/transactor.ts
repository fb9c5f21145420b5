import { Context, Effect, FiberRef, GlobalValue } from "effect"

/**
 * A unit of work: state changes and the domain events they cause commit together (transactional
 * outbox). The SQL adapter maps this to a database transaction; the memory adapter to a lock.
 * Keep nested calls sequential: concurrent nested transactions collide on savepoints in Effect 3.
 */
export interface Transactor {
  /**
   * Runs `self` in a transaction. With `lock`, the transaction holds that key from its start, as if
   * `lock(key)` were its first step (the SQL adapter takes it with BEGIN, in one round trip).
   */
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>, lock?: string) => Effect.Effect<A, E, R>
  /**
   * Holds `key` until the enclosing transaction ends. Transactions taking the same key run one after
   * the other from that point, and each sees what the previous one committed: for check-then-write
   * steps no constraint can guard (one placeholder contact per phone, a thread's unread count).
   * Call it inside withTransaction. Keys are taken in one global order, so no two transactions wait
   * on each other: phone keys (sorted), then a contact's; never a phone key after a contact key.
   */
  readonly lock: (key: string) => Effect.Effect<void>
  /**
   * Runs `self`, which may call outside the process (a carrier) between its own transactions,
   * holding `key` against every other `exclusive(key)`: a check, an outside call and the record of
   * its outcome, with no other holder of the key in between. Call it outside any transaction. On
   * Postgres it is a transaction holding the key's lock (so it holds a connection), on a database
   * this process alone opens (PGlite, memory) a lock in the process, so the one connection stays free.
   */
  readonly exclusive: (key: string) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const Transactor = Context.GenericTag<Transactor>("core/Transactor")

/**
 * Set (`Effect.locally(Urgent, true)`) around database work that must not queue behind other work
 * for a connection: the webhook worker's recording of finished attempts, which until written are
 * sent again after a crash. The embedded database (one connection) runs it before every statement
 * still waiting; a pool of connections ignores it.
 */
export const Urgent: FiberRef.FiberRef<boolean> = GlobalValue.globalValue(
  Symbol.for("switchboard/core/Urgent"),
  () => FiberRef.unsafeMake(false)
)
