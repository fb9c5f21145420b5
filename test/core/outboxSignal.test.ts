/**
 * OutboxSignal around a transactor whose COMMIT cannot be interrupted (as in @effect/sql): an
 * interruption that arrives during the commit still announces the committed events. The store
 * contract suite (test/adapters) covers commit, rollback and nesting on every adapter.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import * as Signal from "../../core/events/signal.ts"
import type { Transactor } from "../../core/kernel/transactor.ts"

it.live("an interruption during COMMIT still wakes the worker for the committed events", () =>
  Effect.gen(function*() {
    const signal = yield* Effect.provide(Signal.OutboxSignal, Signal.layer)
    const committing = yield* Deferred.make<void>()
    let committed = false
    const slowCommit: Transactor = {
      lock: () => Effect.void,
      exclusive: () => (self) => self,
      withTransaction: (self) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.zipLeft(
            restore(self),
            Effect.zipRight(Deferred.succeed(committing, undefined), Effect.sleep("50 millis")).pipe(
              Effect.tap(() => (committed = true))
            )
          )
        )
    }
    const tx = Signal.announcingCommits(signal, slowCommit)
    const fiber = yield* Effect.fork(tx.withTransaction(Signal.announceAppend(signal)))
    yield* Deferred.await(committing)
    yield* Fiber.interrupt(fiber)
    assert.isTrue(committed)
    assert.isTrue(Option.isSome(yield* Effect.timeoutOption(signal.wait, "1 second")), "committed events are announced")
  }))
