/**
 * `idempotent` (adapters/http/idempotency.ts) driven directly over the memory store: replay with
 * `Idempotency-Replayed: true`, key validation, mismatch, scoping, 50 parallel calls with one key
 * (the effect runs once; the 49 duplicates wait for it and replay), 409 for a duplicate whose first
 * request is still running after the wait, no failure stored (400, 404, 409, 5xx, defects,
 * 401-403-429: a retry runs, with a fixed body too), an error stored by an earlier version replayed
 * as the envelope with the current request id, a key whose release failed released once the
 * store is back, and a client disconnect that cannot leave the key without an answer.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Clock, Deferred, Effect, Exit, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { idempotent } from "../../adapters/http/idempotency.ts"
import { beginRequest } from "../../adapters/http/platform.ts"
import * as MemoryClock from "../../adapters/memory/clock.ts"
import { layerDb } from "../../adapters/memory/db.ts"
import * as MemoryIdempotency from "../../adapters/memory/idempotency.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { IN_PROGRESS_WAIT_MS, requestHash } from "../../core/idempotency/runner.ts"
import { IDEMPOTENCY_LOCK_MS, IdempotencyStore } from "../../core/idempotency/store.ts"
import {
  FailedPrecondition,
  Internal,
  InvalidArgument,
  NotFound,
  PermissionDenied,
  ResourceExhausted,
  Unauthenticated
} from "../../core/kernel/errors.ts"

const principal = (patch: Partial<Principal> = {}): Principal => ({
  workspaceId: "8b0c1f5e-3f7a-4d52-9d1c-0d7f3f2b9a11",
  keyId: "key_1",
  kind: "live",
  scopes: new Set(),
  ...patch
})

interface Sent {
  readonly id: string
  readonly to: string
}

/** A "send" whose runs are counted; each run answers a new id. */
const sender = (opts: { delayMs?: number; fail?: (n: number) => Effect.Effect<never, unknown> } = {}) => {
  let runs = 0
  const run = Effect.suspend(() => {
    const n = ++runs
    return Effect.sleep(opts.delayMs ?? 0).pipe(
      Effect.zipRight(opts.fail ? opts.fail(n) : Effect.succeed<Sent>({ id: `msg_${n}`, to: "+15550100" }))
    )
  })
  return { run, runs: () => runs }
}

/** A request whose id the platform middleware would have assigned. */
const request = (requestId: string) => {
  const req = HttpServerRequest.fromWeb(new Request("http://localhost/v1/api/messages", { method: "POST" }))
  beginRequest(req, requestId)
  return req
}

/** The answer schema of the tests' "send": a result encodes as `{ message: result }`. */
const InMessage = Schema.transform(Schema.Struct({ message: Schema.Unknown }), Schema.Unknown, {
  strict: true,
  decode: ({ message }) => message,
  encode: (message) => ({ message })
})

const call = <A, E>(
  run: Effect.Effect<A, E>,
  opts: { key?: string | undefined; request?: unknown; requestId?: string; principal?: Principal } = {}
) =>
  idempotent({
    principal: opts.principal ?? principal(),
    key: "key" in opts ? opts.key : "idem-1",
    request: opts.request ?? { to: "+15550100", body: "hi" },
    status: 201,
    success: InMessage as Schema.Schema<A, unknown>,
    run
  }).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request(opts.requestId ?? "req_first")))

const read = (res: HttpServerResponse.HttpServerResponse) =>
  Effect.promise(async () => {
    const web = HttpServerResponse.toWeb(res)
    return { status: web.status, headers: web.headers, body: JSON.parse(await web.text()) as unknown }
  })

const asResponse = (u: unknown) => {
  assert.isTrue(HttpServerResponse.isServerResponse(u), `expected a raw response, got ${JSON.stringify(u)}`)
  return u as HttpServerResponse.HttpServerResponse
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>) => {
  assert.isTrue(Exit.isFailure(exit), "expected a failure")
  return Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
}

const live = <A, E>(name: string, self: () => Effect.Effect<A, E, never>, timeout?: number) =>
  it.live(name, self, timeout)
const withStore = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.provide(self, Layer.merge(MemoryIdempotency.layer, MemoryClock.layer.pipe(Layer.provide(layerDb))))

describe("idempotent (HTTP wrapper)", () => {
  live("without a key it just runs, every time", () =>
    withStore(Effect.gen(function*() {
      const s = sender()
      assert.deepStrictEqual(yield* call(s.run, { key: undefined }), { id: "msg_1", to: "+15550100" })
      assert.deepStrictEqual(yield* call(s.run, { key: undefined }), { id: "msg_2", to: "+15550100" })
    })))

  live("a key must be 1 to 255 characters", () =>
    withStore(Effect.gen(function*() {
      const s = sender()
      for (const key of ["", "k".repeat(256)]) {
        const e = failureOf(yield* Effect.exit(call(s.run, { key })))
        assert.instanceOf(e, InvalidArgument)
        assert.strictEqual((e as InvalidArgument).message, "Idempotency-Key must be 1 to 255 characters")
      }
      assert.strictEqual(s.runs(), 0)
      assert.deepStrictEqual(yield* call(s.run, { key: "k".repeat(255) }), { id: "msg_1", to: "+15550100" })
    })))

  live(
    "a replay answers the stored status and body with Idempotency-Replayed: true, without running again",
    () =>
      withStore(Effect.gen(function*() {
        const s = sender()
        const first = yield* call(s.run, { request: { to: "+15550100", body: "hi", media: { b: 2, a: 1 } } })
        assert.deepStrictEqual(first, { id: "msg_1", to: "+15550100" })
        // the same payload with its keys in another order hashes the same
        const again = yield* read(
          asResponse(
            yield* call(s.run, {
              request: { media: { a: 1, b: 2 }, body: "hi", to: "+15550100" },
              requestId: "req_second"
            })
          )
        )
        assert.strictEqual(again.status, 201)
        assert.deepStrictEqual(again.body, { message: { id: "msg_1", to: "+15550100" } })
        assert.strictEqual(again.headers.get("idempotency-replayed"), "true")
        assert.match(again.headers.get("content-type") ?? "", /^application\/json/)
        assert.strictEqual(s.runs(), 1)
      }))
  )

  live(
    "the same key with another body is 400; another workspace or key kind has its own keys",
    () =>
      withStore(Effect.gen(function*() {
        const s = sender()
        yield* call(s.run)
        const e = failureOf(yield* Effect.exit(call(s.run, { request: { to: "+15550100", body: "other" } })))
        assert.instanceOf(e, InvalidArgument)
        assert.strictEqual((e as InvalidArgument).message, "Idempotency-Key was used with a different request body")
        assert.deepStrictEqual(yield* call(s.run, { principal: principal({ kind: "test" }) }), {
          id: "msg_2",
          to: "+15550100"
        })
        assert.deepStrictEqual(
          yield* call(s.run, { principal: principal({ workspaceId: "0f6e6a52-1b1c-4bb0-8d0c-2f2a7f0b5c22" }) }),
          { id: "msg_3", to: "+15550100" }
        )
        // another key of the same workspace and kind shares the key space
        assert.isTrue(
          HttpServerResponse.isServerResponse(yield* call(s.run, { principal: principal({ keyId: "key_2" }) }))
        )
        assert.strictEqual(s.runs(), 3)
      }))
  )

  live(
    "50 parallel calls with one key: the effect runs once, 49 wait for it and replay",
    () =>
      withStore(Effect.gen(function*() {
        const s = sender({ delayMs: 150 })
        const results = yield* Effect.all(
          Array.from({ length: 50 }, (_, i) => call(s.run, { requestId: `req_${i}` })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(s.runs(), 1)
        const values = results.filter((r) => !HttpServerResponse.isServerResponse(r))
        assert.deepStrictEqual(values, [{ id: "msg_1", to: "+15550100" }])
        const replays = yield* Effect.forEach(results.filter(HttpServerResponse.isServerResponse), read)
        assert.strictEqual(replays.length, 49)
        for (const r of replays) {
          assert.strictEqual(r.status, 201)
          assert.strictEqual(r.headers.get("idempotency-replayed"), "true")
          assert.deepStrictEqual(r.body, { message: { id: "msg_1", to: "+15550100" } })
        }
      }))
  )

  live(
    "a duplicate whose first request is still running after the wait answers 409",
    () =>
      withStore(Effect.gen(function*() {
        const s = sender({ delayMs: IN_PROGRESS_WAIT_MS + 800 })
        const first = yield* Effect.fork(call(s.run))
        yield* Effect.sleep(50)
        const started = Date.now()
        const e = failureOf(yield* Effect.exit(call(s.run)))
        const waited = Date.now() - started
        assert.instanceOf(e, FailedPrecondition)
        assert.strictEqual(
          (e as FailedPrecondition).message,
          "A request with this Idempotency-Key is still in progress"
        )
        assert.isAtLeast(waited, IN_PROGRESS_WAIT_MS - 50, "it waited for the first request")
        assert.isBelow(waited, IN_PROGRESS_WAIT_MS + 500)
        assert.deepStrictEqual(yield* Fiber.join(first), { id: "msg_1", to: "+15550100" })
        assert.isTrue(HttpServerResponse.isServerResponse(yield* call(s.run)), "then it replays")
        assert.strictEqual(s.runs(), 1)
      })),
    10_000
  )

  live(
    "an error stored by an earlier version replays as the envelope with the current request id",
    () =>
      withStore(Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const hold = {
          workspaceId: principal().workspaceId,
          keyKind: "live",
          key: "idem-old",
          owner: "an-earlier-version"
        }
        const hash = yield* requestHash({ to: "+15550100", body: "hi" })
        yield* store.reserve({ ...hold, requestHash: hash, now: yield* Clock.currentTimeMillis })
        yield* store.complete(hold, {
          status: 409,
          body: JSON.stringify({ code: "failed_precondition", message: "No active number" })
        })
        const s = sender()
        const again = yield* read(asResponse(yield* call(s.run, { key: "idem-old", requestId: "req_second" })))
        assert.strictEqual(again.status, 409)
        assert.deepStrictEqual(again.body, {
          error: { code: "failed_precondition", message: "No active number", requestId: "req_second" }
        })
        assert.strictEqual(again.headers.get("idempotency-replayed"), "true")
        assert.strictEqual(s.runs(), 0)
      }))
  )

  live(
    "a failure before any side effect (400, 404, a gate's 409) is not stored: the retry runs, with a fixed body too",
    () =>
      withStore(Effect.gen(function*() {
        const s = sender({
          fail: (n) => (n === 1
            ? Effect.fail(new InvalidArgument({ message: "to: is required" }))
            : Effect.succeed({ id: `msg_${n}`, to: "+15550100" }) as never)
        })
        assert.instanceOf(
          failureOf(yield* Effect.exit(call(s.run, { key: "fixed", request: { body: "hi" } }))),
          InvalidArgument
        )
        // Not the same-key-other-request refusal: nothing was stored under the key.
        assert.deepStrictEqual(yield* call(s.run, { key: "fixed", request: { to: "+15550100", body: "hi" } }), {
          id: "msg_2",
          to: "+15550100"
        })
        // Now it holds the success, and the other body is refused.
        const e = failureOf(yield* Effect.exit(call(s.run, { key: "fixed", request: { body: "hi" } })))
        assert.strictEqual((e as InvalidArgument).message, "Idempotency-Key was used with a different request body")
        assert.strictEqual(s.runs(), 2)
      }))
  )

  live(
    "no failure is stored (400, 404, 409, 5xx, defects, non-domain failures, 401/403/429): a retry runs again",
    () =>
      withStore(Effect.gen(function*() {
        const failures: ReadonlyArray<[string, Effect.Effect<never, unknown>]> = [
          ["400", Effect.fail(new InvalidArgument({ message: "from: not a phone number" }))],
          ["404", Effect.fail(new NotFound({ message: "No such conversation" }))],
          ["409", Effect.fail(new FailedPrecondition({ message: "No active number" }))],
          ["internal", Effect.fail(new Internal({ message: "carrier down" }))],
          ["defect", Effect.die(new Error("boom"))],
          ["untyped", Effect.fail(new Error("not a domain error"))],
          ["401", Effect.fail(new Unauthenticated({ message: "no" }))],
          ["403", Effect.fail(new PermissionDenied({ message: "no" }))],
          ["429", Effect.fail(new ResourceExhausted({ message: "slow down", retryAfterSeconds: 3 }))]
        ]
        for (const [key, failure] of failures) {
          const s = sender({
            fail: (n) => (n === 1 ? failure : Effect.succeed({ id: "msg_ok", to: "+15550100" }) as never)
          })
          const exit = yield* Effect.exit(call(s.run, { key }))
          assert.isTrue(Exit.isFailure(exit), key)
          assert.deepStrictEqual(yield* call(s.run, { key }), { id: "msg_ok", to: "+15550100" }, key)
          assert.strictEqual(s.runs(), 2, key)
        }
      }))
  )

  live(
    "a duplicate waiting on a first request that fails with a 5xx then runs itself",
    () =>
      withStore(Effect.gen(function*() {
        const s = sender({
          delayMs: 100,
          fail: (n) => (n === 1
            ? Effect.fail(new Internal({ message: "x" }))
            : Effect.succeed({ id: `msg_${n}`, to: "+1" }) as never)
        })
        const [a, b] = yield* Effect.all([
          Effect.exit(call(s.run)),
          Effect.exit(Effect.zipRight(Effect.sleep(10), call(s.run)))
        ], { concurrency: "unbounded" })
        assert.instanceOf(failureOf(a), Internal)
        assert.deepStrictEqual(b, Exit.succeed({ id: "msg_2", to: "+1" }))
        assert.strictEqual(s.runs(), 2)
      }))
  )

  live(
    "a key whose release failed (the database away) is released once it can be: a retry runs within seconds, not refused as still running",
    () =>
      Effect.gen(function*() {
        // The memory store, its first release lost as a release is while Postgres is away.
        let releases = 0
        const flaky = Layer.effect(
          IdempotencyStore,
          Effect.map(IdempotencyStore, (store) =>
            IdempotencyStore.of({
              ...store,
              release: (hold) =>
                ++releases === 1 ? Effect.die(new Error("Connection terminated unexpectedly")) : store.release(hold)
            }))
        ).pipe(Layer.provide(MemoryIdempotency.layer))
        yield* Effect.gen(function*() {
          const s = sender({
            fail: (n) => (n === 1
              ? Effect.die(new Error("Connection terminated unexpectedly"))
              : Effect.succeed({ id: "msg_ok", to: "+1" }) as never)
          })
          assert.isTrue(Exit.isFailure(yield* Effect.exit(call(s.run))))
          // Retried as a 503's Retry-After says: answered well before IDEMPOTENCY_LOCK_MS.
          const started = Date.now()
          for (;;) {
            const exit = yield* Effect.exit(call(s.run))
            if (Exit.isSuccess(exit)) {
              assert.deepStrictEqual(exit.value, { id: "msg_ok", to: "+1" })
              break
            }
            assert.instanceOf(failureOf(exit), FailedPrecondition)
            assert.isBelow(Date.now() - started, 15_000, "still refused as running")
            yield* Effect.sleep(200)
          }
          assert.strictEqual(s.runs(), 2)
        }).pipe(Effect.provide(Layer.merge(flaky, MemoryClock.layer.pipe(Layer.provide(layerDb)))))
      }),
    60_000
  )

  live(
    "a client disconnect (interruption) after the reservation cannot leave the key without an answer",
    () =>
      withStore(Effect.gen(function*() {
        const s = sender({ delayMs: 100 })
        const fiber = yield* Effect.fork(call(s.run))
        // Interrupted once the run has begun (after the reservation), however slow the machine.
        while (s.runs() === 0) yield* Effect.sleep(1)
        yield* Fiber.interrupt(fiber) // waits for the uninterruptible run and settle to finish
        assert.strictEqual(s.runs(), 1)
        const r = yield* read(asResponse(yield* call(s.run)))
        assert.deepStrictEqual([r.status, r.body], [201, { message: { id: "msg_1", to: "+15550100" } }])
        assert.strictEqual(s.runs(), 1)
      }))
  )

  it.effect("a request running longer than the lock keeps renewing it: a retry meanwhile is told to wait, never runs it again", () =>
    withStore(Effect.gen(function*() {
      const store = yield* IdempotencyStore
      const started = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const slow = Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Deferred.await(finish)),
        Effect.as({ id: "msg_1", to: "+15550100" })
      )
      const first = yield* Effect.fork(call(slow))
      yield* Deferred.await(started)
      // The renewer has scheduled its first renewal.
      while ((yield* TestClock.sleeps()).length === 0) yield* Effect.yieldNow()
      // Three locks' worth of (test) time: the renewals keep the reservation alive.
      yield* TestClock.adjust(3 * IDEMPOTENCY_LOCK_MS)
      const retry = { workspaceId: principal().workspaceId, keyKind: "live", key: "idem-1", owner: "a-retry" }
      const hash = yield* requestHash({ to: "+15550100", body: "hi" })
      assert.deepStrictEqual(
        yield* store.reserve({ ...retry, requestHash: hash, now: yield* Clock.currentTimeMillis }),
        { _tag: "InProgress" }
      )
      yield* Deferred.succeed(finish, undefined)
      assert.deepStrictEqual(yield* Fiber.join(first), { id: "msg_1", to: "+15550100" })
      const replay = yield* store.reserve({ ...retry, requestHash: hash, now: yield* Clock.currentTimeMillis })
      assert.strictEqual(replay._tag, "Replay")
    })))
})
