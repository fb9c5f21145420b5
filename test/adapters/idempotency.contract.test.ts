/**
 * The IdempotencyStore contract, run unchanged against memory, PGlite (in-memory, migrated) and a
 * real Postgres (a fresh database, migrated, a pool of 10 connections): reserve / in progress /
 * mismatch / replay / release, expiry after the window, takeover of a stale reservation, scoping by
 * workspace and key kind, and races (50 concurrent reserves of one key, 50 concurrent takeovers of
 * one stale key) that must yield exactly one Reserved. Without a Postgres URL the Postgres suite is
 * skipped, except under CI=true where that fails.
 */
import type { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as MemoryIdempotency from "../../adapters/memory/idempotency.ts"
import * as SqlIdempotency from "../../adapters/sql/idempotency.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import {
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_WINDOW_MS,
  IdempotencyStore,
  type Reservation
} from "../../core/idempotency/store.ts"
import { sqlContract } from "../support/sqlContract.ts"

const uuid = () => crypto.randomUUID()
const T0 = Date.UTC(2024, 0, 1, 12, 0, 0, 123)

/** One request's hold on a fresh key; `owner` is the request's token. */
const scopeOf = (workspaceId = uuid(), keyKind = "live", key = `key_${uuid()}`, owner = uuid()) => ({
  workspaceId,
  keyKind,
  key,
  owner
})

const tags = (rs: ReadonlyArray<Reservation>) => rs.map((r) => r._tag)
const count = (rs: ReadonlyArray<Reservation>, tag: Reservation["_tag"]) => rs.filter((r) => r._tag === tag).length

// excludeTestServices: `it.effect` runs on the live clock (the store takes `now` as an argument anyway).
const contract = (name: string, adapter: Layer.Layer<IdempotencyStore, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("reserve, in progress, mismatch, replay after complete", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const s = scopeOf()
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h1", now: T0 }), { _tag: "Reserved" })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h1", now: T0 + 10 }), { _tag: "InProgress" })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h2", now: T0 + 10 }), { _tag: "Mismatch" })
        const body = JSON.stringify({ message: { id: "m_1", body: "héllo ✓" } })
        yield* store.complete(s, { status: 201, body })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h1", now: T0 + 20 }), {
          _tag: "Replay",
          answer: { status: 201, body }
        })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h2", now: T0 + 20 }), { _tag: "Mismatch" })
        // a second complete (a late, stale owner) does not overwrite a done answer
        yield* store.complete(s, { status: 500, body: "{}" })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h1", now: T0 + 30 }), {
          _tag: "Replay",
          answer: { status: 201, body }
        })
        // a stored error answer replays like any other
        const e = scopeOf()
        yield* store.reserve({ ...e, requestHash: "h", now: T0 })
        yield* store.complete(e, { status: 409, body: JSON.stringify({ code: "failed_precondition", message: "No" }) })
        assert.deepStrictEqual(yield* store.reserve({ ...e, requestHash: "h", now: T0 + 1 }), {
          _tag: "Replay",
          answer: { status: 409, body: JSON.stringify({ code: "failed_precondition", message: "No" }) }
        })
      }))

    it.effect("release frees a running reservation (even for another body); it never drops a stored answer", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const s = scopeOf()
        assert.strictEqual((yield* store.reserve({ ...s, requestHash: "h1", now: T0 }))._tag, "Reserved")
        yield* store.release(s)
        assert.strictEqual((yield* store.reserve({ ...s, requestHash: "h2", now: T0 + 1 }))._tag, "Reserved")
        yield* store.complete(s, { status: 200, body: "{}" })
        yield* store.release(s)
        assert.strictEqual((yield* store.reserve({ ...s, requestHash: "h2", now: T0 + 2 }))._tag, "Replay")
        // releasing or completing a key nobody holds is a no-op
        const none = scopeOf()
        yield* store.release(none)
        yield* store.complete(none, { status: 200, body: "{}" })
        assert.strictEqual((yield* store.reserve({ ...none, requestHash: "h", now: T0 }))._tag, "Reserved")
      }))

    it.effect("a stored answer expires after 24 h: the key is reserved again, with any body", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const s = scopeOf()
        yield* store.reserve({ ...s, requestHash: "h1", now: T0 })
        yield* store.complete(s, { status: 201, body: "{\"a\":1}" })
        assert.strictEqual(
          (yield* store.reserve({ ...s, requestHash: "h1", now: T0 + IDEMPOTENCY_WINDOW_MS }))._tag,
          "Replay",
          "still inside the window"
        )
        assert.strictEqual(
          (yield* store.reserve({ ...s, requestHash: "h2", now: T0 + IDEMPOTENCY_WINDOW_MS }))._tag,
          "Mismatch"
        )
        const later = T0 + IDEMPOTENCY_WINDOW_MS + 1
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h2", now: later }), { _tag: "Reserved" })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h2", now: later + 1 }), {
          _tag: "InProgress"
        })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h1", now: later + 1 }), { _tag: "Mismatch" })
        yield* store.complete(s, { status: 201, body: "{\"a\":2}" })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h2", now: later + 2 }), {
          _tag: "Replay",
          answer: { status: 201, body: "{\"a\":2}" }
        })
      }))

    it.effect("a reservation still running after the lock is taken over; the new owner's answer is kept", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const s = scopeOf()
        yield* store.reserve({ ...s, requestHash: "h1", now: T0 })
        assert.strictEqual(
          (yield* store.reserve({ ...s, requestHash: "h1", now: T0 + IDEMPOTENCY_LOCK_MS }))._tag,
          "InProgress",
          "lock still held"
        )
        const later = T0 + IDEMPOTENCY_LOCK_MS + 1
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h1", now: later }), { _tag: "Reserved" })
        assert.deepStrictEqual(yield* store.reserve({ ...s, requestHash: "h1", now: later + 1 }), {
          _tag: "InProgress"
        }, "the new lock holds")
        yield* store.complete(s, { status: 201, body: "{}" })
        assert.deepStrictEqual(
          yield* store.reserve({ ...s, requestHash: "h1", now: later + 2 * IDEMPOTENCY_LOCK_MS }),
          {
            _tag: "Replay",
            answer: { status: 201, body: "{}" }
          },
          "a done answer is not stale"
        )
        // a stale reservation is free even for another body (nothing was answered for it)
        const t = scopeOf()
        yield* store.reserve({ ...t, requestHash: "h1", now: T0 })
        assert.strictEqual((yield* store.reserve({ ...t, requestHash: "h2", now: later }))._tag, "Reserved")
      }))

    it.effect("after a takeover the previous holder's late complete, release and renew change nothing", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const first = scopeOf()
        const second = { ...first, owner: uuid() }
        assert.deepStrictEqual(yield* store.reserve({ ...first, requestHash: "h", now: T0 }), { _tag: "Reserved" })
        const later = T0 + IDEMPOTENCY_LOCK_MS + 1
        assert.deepStrictEqual(
          yield* store.reserve({ ...second, requestHash: "h", now: later }),
          { _tag: "Reserved" },
          "taken over"
        )
        assert.isFalse(yield* store.renew(first, later + 1), "the first holder lost it")
        yield* store.release(first)
        yield* store.complete(first, { status: 201, body: "{\"from\":\"first\"}" })
        assert.deepStrictEqual(yield* store.reserve({ ...second, owner: uuid(), requestHash: "h", now: later + 2 }), {
          _tag: "InProgress"
        }, "still the second holder's")
        assert.isTrue(yield* store.renew(second, later + 3))
        yield* store.complete(second, { status: 201, body: "{\"from\":\"second\"}" })
        assert.deepStrictEqual(yield* store.reserve({ ...second, owner: uuid(), requestHash: "h", now: later + 4 }), {
          _tag: "Replay",
          answer: { status: 201, body: "{\"from\":\"second\"}" }
        })
        assert.isFalse(yield* store.renew(second, later + 5), "a done key is not renewed")
      }))

    it.effect("renew keeps a long-running reservation from being taken over", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const s = scopeOf()
        yield* store.reserve({ ...s, requestHash: "h", now: T0 })
        // renewed just before each lock would lapse, for three locks' worth of time
        for (let i = 1; i <= 3; i++) assert.isTrue(yield* store.renew(s, T0 + i * IDEMPOTENCY_LOCK_MS - 1))
        const other = { ...s, owner: uuid() }
        assert.deepStrictEqual(
          yield* store.reserve({ ...other, requestHash: "h", now: T0 + 3 * IDEMPOTENCY_LOCK_MS + 10 }),
          { _tag: "InProgress" }
        )
        // once renewals stop, the lock lapses and another request takes over
        assert.deepStrictEqual(
          yield* store.reserve({ ...other, requestHash: "h", now: T0 + 4 * IDEMPOTENCY_LOCK_MS }),
          { _tag: "Reserved" }
        )
      }))

    it.effect("scopes isolate workspaces and key kinds", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const ws = uuid()
        const key = "shared-key"
        const live = scopeOf(ws, "live", key)
        yield* store.reserve({ ...live, requestHash: "h1", now: T0 })
        yield* store.complete(live, { status: 201, body: "{\"live\":true}" })
        assert.strictEqual(
          (yield* store.reserve({ ...scopeOf(ws, "test", key), requestHash: "h2", now: T0 }))._tag,
          "Reserved",
          "other key kind"
        )
        assert.strictEqual(
          (yield* store.reserve({ ...scopeOf(uuid(), "live", key), requestHash: "h2", now: T0 }))._tag,
          "Reserved",
          "other workspace"
        )
        assert.strictEqual(
          (yield* store.reserve({ ...scopeOf(ws, "live", `${key}2`), requestHash: "h2", now: T0 }))._tag,
          "Reserved",
          "other key"
        )
        // releasing or completing another scope leaves this one alone
        yield* store.release(scopeOf(ws, "test", key))
        yield* store.complete(scopeOf(uuid(), "live", key), { status: 500, body: "{}" })
        assert.deepStrictEqual(yield* store.reserve({ ...live, requestHash: "h1", now: T0 + 1 }), {
          _tag: "Replay",
          answer: { status: 201, body: "{\"live\":true}" }
        })
        // keys are compared exactly (case and length)
        assert.strictEqual(
          (yield* store.reserve({ ...scopeOf(ws, "live", "SHARED-KEY"), requestHash: "h1", now: T0 }))._tag,
          "Reserved"
        )
        const long = "k".repeat(255)
        assert.strictEqual(
          (yield* store.reserve({ ...scopeOf(ws, "live", long), requestHash: "h1", now: T0 }))._tag,
          "Reserved"
        )
        assert.strictEqual(
          (yield* store.reserve({ ...scopeOf(ws, "live", long), requestHash: "h1", now: T0 }))._tag,
          "InProgress"
        )
      }))

    it.effect("race: 50 concurrent reserves of one key yield exactly one Reserved", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const s = scopeOf()
        const rs = yield* Effect.all(
          Array.from({ length: 50 }, () => store.reserve({ ...s, requestHash: "h", now: T0 })),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(count(rs, "Reserved"), 1, tags(rs).join(","))
        assert.strictEqual(count(rs, "InProgress"), 49)
      }))

    it.effect("race: 50 concurrent takeovers of one expired answer and of one stale reservation yield exactly one Reserved each", () =>
      Effect.gen(function*() {
        const store = yield* IdempotencyStore
        const expired = scopeOf()
        yield* store.reserve({ ...expired, requestHash: "old", now: T0 })
        yield* store.complete(expired, { status: 201, body: "{}" })
        const stale = scopeOf()
        yield* store.reserve({ ...stale, requestHash: "old", now: T0 })
        const race = (s: typeof expired, now: number) =>
          Effect.all(Array.from({ length: 50 }, () => store.reserve({ ...s, requestHash: "new", now })), {
            concurrency: "unbounded"
          })
        const [a, b] = yield* Effect.all(
          [race(expired, T0 + IDEMPOTENCY_WINDOW_MS + 1), race(stale, T0 + IDEMPOTENCY_LOCK_MS + 1)],
          { concurrency: "unbounded" }
        )
        assert.strictEqual(count(a, "Reserved"), 1, tags(a).join(","))
        assert.strictEqual(count(a, "InProgress"), 49)
        assert.strictEqual(count(b, "Reserved"), 1, tags(b).join(","))
        assert.strictEqual(count(b, "InProgress"), 49)
      }))
  })

const sqlAdapter = (client: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  SqlIdempotency.layer.pipe(Layer.provide(Migrate.layer), Layer.provide(client))

contract("IdempotencyStore: memory", MemoryIdempotency.layer)

sqlContract({
  name: (db) => `IdempotencyStore: ${db}`,
  adapter: sqlAdapter,
  suite: contract,
  database: "idempotency",
  maxConnections: 10
})
