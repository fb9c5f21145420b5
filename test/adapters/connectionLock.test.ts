/** The embedded database's connection lock: one holder, waiters in order, `Urgent` work first, interruption safe. */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeConnectionLock } from "../../adapters/pglite/connectionLock.ts"
import { Urgent } from "../../core/kernel/transactor.ts"

describe("PGlite connection lock", () => {
  it.effect("hands the connection over in order, urgent waiters first", () =>
    Effect.gen(function*() {
      const lock = makeConnectionLock()
      const order: Array<string> = []
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(lock.withLock(Deferred.await(gate)))
      yield* Effect.yieldNow()
      const waiter = (name: string, urgent: boolean) =>
        Effect.fork(
          lock.withLock(Effect.sync(() => order.push(name))).pipe(Effect.locally(Urgent, urgent))
        )
      const fibers = [
        yield* waiter("a", false),
        yield* waiter("b", false),
        yield* waiter("recording", true),
        yield* waiter("c", false),
        yield* waiter("recording 2", true)
      ]
      yield* Effect.yieldNow()
      expect(order).toEqual([])
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      for (const f of fibers) yield* Fiber.join(f)
      expect(order).toEqual(["recording", "recording 2", "a", "b", "c"])
    }))

  it.effect("a waiter interrupted in the queue, or as the connection reaches it, does not keep it", () =>
    Effect.gen(function*() {
      const lock = makeConnectionLock()
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(lock.withLock(Deferred.await(gate)))
      yield* Effect.yieldNow()
      const gone = yield* Effect.fork(lock.withLock(Effect.void))
      const next = yield* Effect.fork(lock.withLock(Effect.succeed("ran")))
      yield* Effect.yieldNow()
      // Released and interrupted in the same step: the connection may be handed to `gone` first.
      yield* Effect.zip(Deferred.succeed(gate, undefined), Fiber.interrupt(gone), { concurrent: true })
      yield* Fiber.join(holder)
      expect(yield* Fiber.join(next)).toBe("ran")
      // And free again afterwards.
      expect(yield* lock.withLock(Effect.succeed(1)).pipe(Effect.timeout("1 second"))).toBe(1)
    }))
})
