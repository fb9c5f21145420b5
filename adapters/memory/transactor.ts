/** The in-memory Transactor: transactions are serialised; nesting joins the outer one; a failure restores the snapshot. */
import { Effect, FiberRef, Layer } from "effect"
import { announcingCommits, OutboxSignal } from "../../core/events/signal.ts"
import { makeKeyedLock } from "../../core/kernel/keyedLock.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { clone, MemoryDb } from "./db.ts"

const inTransaction = FiberRef.unsafeMake(false)

export const layer = Layer.effect(
  Transactor,
  Effect.gen(function*() {
    const db = yield* MemoryDb
    const signal = yield* OutboxSignal
    const lock = yield* Effect.makeSemaphore(1)
    const keyed = makeKeyedLock()
    return announcingCommits(signal, {
      // Transactions already run one at a time under `lock`.
      lock: () => Effect.void,
      exclusive: keyed,
      withTransaction: (self) =>
        Effect.flatMap(FiberRef.get(inTransaction), (nested) =>
          nested
            ? self
            : lock.withPermits(1)(
              Effect.suspend(() => {
                const snapshot = clone(db.state)
                return Effect.locally(self, inTransaction, true).pipe(
                  Effect.onExit((exit) =>
                    Effect.sync(() => {
                      if (exit._tag === "Failure") db.state = snapshot
                    })
                  )
                )
              })
            ))
    })
  })
)
