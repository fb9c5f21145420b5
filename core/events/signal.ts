/**
 * "Events committed", within one process. The outbox worker waits on it between polls, so events
 * written here fan out at once and the worker can poll rarely (an idle poll is a transaction every
 * time). On Postgres, other processes' commits reach it too (adapters/sql/outboxNotices.ts).
 */
import { Cause, Context, Effect, Exit, Layer, Option, Queue } from "effect"
import type { Transactor } from "../kernel/transactor.ts"

export interface OutboxSignal {
  /** Announces committed events; never call it inside a transaction (the worker could not see them yet). */
  readonly notify: Effect.Effect<void>
  /** Resumes once something was announced since the previous `wait` returned. */
  readonly wait: Effect.Effect<void>
  /**
   * Forgets what was announced so far. Called right before looking for events: those commits are
   * visible to the look, so waking for them again would only cost an empty round.
   */
  readonly clear: Effect.Effect<void>
}

export const OutboxSignal = Context.GenericTag<OutboxSignal>("core/OutboxSignal")

/** Announcements coalesce: one pending wake-up is enough, however many commits happened. */
export const layer = Layer.effect(
  OutboxSignal,
  Effect.map(
    Queue.sliding<void>(1),
    (queue) =>
      OutboxSignal.of({
        notify: Queue.offer(queue, undefined),
        wait: Queue.take(queue),
        clear: Effect.asVoid(Queue.takeAll(queue))
      })
  )
)

/** The outermost open transaction's note that it appended events. A cell, so nested transactions share it. */
interface OpenTransaction {
  appended: boolean
}
const OpenTransaction = Context.GenericTag<OpenTransaction>("core/OutboxSignal/OpenTransaction")

/** Call after an outbox append: announces it now, or when the enclosing transaction commits. */
export const announceAppend = (signal: OutboxSignal): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(OpenTransaction), (open) => {
    if (Option.isNone(open)) return signal.notify
    open.value.appended = true
    return Effect.void
  })

/**
 * Wraps a store's transactor so that an outermost commit announces the events appended inside it.
 * An interruption can land just after COMMIT (the commit itself is uninterruptible), so an
 * interrupted transaction announces too: at worst a wake-up for nothing, never committed events
 * left waiting for the poll. A failure rolled back, so it announces nothing.
 */
export const announcingCommits = (signal: OutboxSignal, transactor: Transactor): Transactor => ({
  // Outside a transaction the lock would be released at once: a programming error, not a no-op.
  lock: (key) =>
    Effect.flatMap(
      Effect.serviceOption(OpenTransaction),
      (open) =>
        Option.isSome(open) ? transactor.lock(key) : Effect.dieMessage(`Transactor.lock(${key}) outside a transaction`)
    ),
  // Inside a transaction an in-process lock could wait on the connection that transaction holds.
  exclusive: (key) => (self) =>
    Effect.flatMap(
      Effect.serviceOption(OpenTransaction),
      (open) =>
        Option.isSome(open)
          ? Effect.dieMessage(`Transactor.exclusive(${key}) inside a transaction`)
          : transactor.exclusive(key)(self)
    ),
  withTransaction: (self, lock) =>
    Effect.flatMap(Effect.serviceOption(OpenTransaction), (open) => {
      if (Option.isSome(open)) return transactor.withTransaction(self, lock)
      const cell: OpenTransaction = { appended: false }
      return transactor
        .withTransaction(Effect.provideService(self, OpenTransaction, cell), lock)
        .pipe(
          Effect.onExit((exit) =>
            cell.appended && (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) ? signal.notify : Effect.void
          )
        )
    })
})
