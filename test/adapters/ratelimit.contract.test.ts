/**
 * The RateLimiter contract, run unchanged against the in-memory limiter, and the SQL one on PGlite
 * and a real Postgres: every decision equals the pure token bucket's (core/ratelimit/bucket.ts) over a
 * schedule of bursts and pauses on the TestClock, buckets are independent, concurrent requests on
 * one key take each token once. The SQL limiter also shares one bucket between limiters (processes)
 * on one database and sweeps buckets idle for a window. Without a Postgres URL the Postgres suite
 * is skipped, except under CI=true where that fails.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, TestClock } from "effect"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import * as MemoryRateLimit from "../../adapters/ratelimit/memory.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as SqlRateLimit from "../../adapters/sql/ratelimit.ts"
import { type Bucket, consume, type Decision, RateLimiter, requestCost } from "../../core/ratelimit/bucket.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlContract } from "../support/sqlContract.ts"

/** A limiter at `limit` a minute over the suite's environment (a migrated client, or nothing). */
type MakeLimiter<R> = (limit: number) => Layer.Layer<RateLimiter, never, R>

const bucketKey = () => `key:${crypto.randomUUID()}`

/** Bursts of `n` requests, each after a pause of `gap` ms: decisions from the port and from the pure bucket. */
const schedule: ReadonlyArray<readonly [gap: number, n: number]> = [
  [0, 7],
  [0, 1],
  [5, 35],
  [1, 1],
  [99, 1],
  [100, 2],
  [2_500, 5],
  [59_999, 3],
  [1, 9],
  [60_000, 12],
  [7, 1],
  [3_600_000, 11],
  [333, 4]
]

/** `stored` counts a bucket's rows, for a limiter whose buckets live in the database (shared by processes). */
interface Row {
  readonly tokens: number
  readonly granted: number
  readonly at_ms: number
}

const contract = <R>(
  name: string,
  env: Layer.Layer<R, unknown>,
  limiter: MakeLimiter<R>,
  stored?: (key: string) => Effect.Effect<number, unknown, R>,
  row: (key: string) => Effect.Effect<Row, unknown, R> = () => Effect.die("no stored buckets")
) =>
  layer(env, { timeout: "60 seconds" })(name, (it) => {
    const withLimiter = <A, E, R2>(limit: number, f: (l: RateLimiter) => Effect.Effect<A, E, R2>) =>
      Effect.provide(Effect.flatMap(RateLimiter, f), limiter(limit))

    it.effect("every decision is the pure token bucket's, at limits 1, 10 and 30", () =>
      Effect.gen(function*() {
        for (const limit of [1, 10, 30]) {
          const key = bucketKey()
          const got = yield* withLimiter(limit, (l) =>
            Effect.gen(function*() {
              const decisions: Array<Decision> = []
              for (const [gap, n] of schedule) {
                yield* TestClock.adjust(gap)
                for (let i = 0; i < n; i++) decisions.push(yield* l.consume(key))
              }
              return decisions
            }))
          // The same schedule through the pure bucket, starting at the TestClock's time.
          const start = (yield* TestClock.currentTimeMillis) - schedule.reduce((t, [gap]) => t + gap, 0)
          let bucket: Bucket | undefined
          let now = start
          const expected: Array<Decision> = []
          for (const [gap, n] of schedule) {
            now += gap
            for (let i = 0; i < n; i++) {
              const [next, d] = consume(bucket, now, limit)
              bucket = next
              expected.push(d)
            }
          }
          assert.deepStrictEqual(got, expected, `limit ${limit}`)
          assert.isTrue(
            got.some((d) => !d.allowed) && got.some((d) => d.allowed),
            `limit ${limit} both allows and refuses`
          )
        }
      }))

    it.effect("a request costing several tokens takes them all or none, as the pure bucket decides", () =>
      Effect.gen(function*() {
        // Costs as requestCost gives them: 1, a 20 KiB body (2), a 256 KiB body (17), more than the limit (capped).
        const costs = [1, 2, 17, 1, 17, 45, 1, 2]
        for (const limit of [1, 10, 30]) {
          const key = bucketKey()
          const got = yield* withLimiter(limit, (l) =>
            Effect.gen(function*() {
              const decisions: Array<Decision> = []
              for (const [i, [gap, n]] of schedule.entries()) {
                yield* TestClock.adjust(gap)
                for (let j = 0; j < n; j++) decisions.push(yield* l.consume(key, costs[(i + j) % costs.length]))
              }
              return decisions
            }))
          const start = (yield* TestClock.currentTimeMillis) - schedule.reduce((t, [gap]) => t + gap, 0)
          let bucket: Bucket | undefined
          let now = start
          const expected: Array<Decision> = []
          for (const [i, [gap, n]] of schedule.entries()) {
            now += gap
            for (let j = 0; j < n; j++) {
              const [next, d] = consume(bucket, now, limit, Math.min(limit, costs[(i + j) % costs.length]!))
              bucket = next
              expected.push(d)
            }
          }
          assert.deepStrictEqual(got, expected, `limit ${limit}`)
        }
      }))

    it.effect("a 256 KiB body's 17 tokens: refused while fewer are left, Retry-After until 17 are back", () =>
      withLimiter(600, (l) =>
        Effect.gen(function*() {
          const key = bucketKey()
          for (let i = 0; i < 590; i++) yield* l.consume(key)
          const refused = yield* l.consume(key, requestCost(256 * 1024))
          assert.deepStrictEqual([refused.allowed, refused.retryAfterSeconds], [false, 1])
          assert.isTrue((yield* l.consume(key)).allowed, "a one-token request still passes")
          yield* TestClock.adjust(1_000)
          const taken = yield* l.consume(key, 17)
          assert.deepStrictEqual([taken.allowed, taken.remaining], [true, 2]) // 9 + 10 refilled - 17
        })).pipe(Effect.orDie))

    it.effect("60 a minute: 60 at once, the 61st refused for a second, then one more every second", () =>
      withLimiter(60, (l) =>
        Effect.gen(function*() {
          const key = bucketKey()
          for (let i = 0; i < 60; i++) assert.strictEqual((yield* l.consume(key)).remaining, 59 - i)
          const refused = yield* l.consume(key)
          assert.deepStrictEqual(refused, {
            allowed: false,
            limit: 60,
            remaining: 0,
            resetSeconds: 60,
            retryAfterSeconds: 1
          })
          yield* TestClock.adjust(999)
          assert.isFalse((yield* l.consume(key)).allowed)
          yield* TestClock.adjust(1)
          assert.isTrue((yield* l.consume(key)).allowed)
          assert.isFalse((yield* l.consume(key)).allowed)
        })))

    it.effect("buckets are independent", () =>
      withLimiter(2, (l) =>
        Effect.gen(function*() {
          const [a, b] = [bucketKey(), bucketKey()]
          yield* l.consume(a)
          yield* l.consume(a)
          assert.isFalse((yield* l.consume(a)).allowed)
          assert.deepStrictEqual(yield* l.consume(b), {
            allowed: true,
            limit: 2,
            remaining: 1,
            resetSeconds: 30,
            retryAfterSeconds: 0
          })
        })))

    it.effect("80 concurrent requests on one key at 30 a minute: exactly 30 allowed, each remaining count once", () =>
      withLimiter(30, (l) =>
        Effect.gen(function*() {
          const key = bucketKey()
          const decisions = yield* Effect.all(Array.from({ length: 80 }, () => l.consume(key)), {
            concurrency: "unbounded"
          })
          const allowed = decisions.filter((d) => d.allowed)
          assert.strictEqual(allowed.length, 30)
          assert.deepStrictEqual(
            allowed.map((d) => d.remaining).sort((x, y) => x - y),
            Array.from({ length: 30 }, (_, i) => i)
          )
        })))

    if (stored !== undefined) {
      it.effect("two limiters on one database (two processes) share each bucket", () =>
        Effect.gen(function*() {
          const key = bucketKey()
          const a = yield* withLimiter(10, (l) => Effect.forEach(Array.from({ length: 6 }), () => l.consume(key)))
          const b = yield* withLimiter(10, (l) => Effect.forEach(Array.from({ length: 6 }), () => l.consume(key)))
          assert.deepStrictEqual([...a, ...b].map((d) => d.allowed), [...Array(10).fill(true), false, false])
          assert.strictEqual(b[3]!.remaining, 0)
        }))

      it.effect("a busy key's leases double up to 1% of the limit (10 at 1,000 a minute), with the bucket's own decisions", () =>
        withLimiter(1_000, (l) =>
          Effect.gen(function*() {
            const key = bucketKey()
            const decisions = yield* Effect.forEach(Array.from({ length: 25 }), () => l.consume(key))
            // No time passes: the same decisions as one bucket taking a token per request.
            assert.deepStrictEqual(
              decisions.map((d) => [d.allowed, d.remaining]),
              Array.from({ length: 25 }, (_, i) => [true, 999 - i])
            )
            // Leases of 1, 2, 4, 8 and 10: five upserts for 25 requests, every token spent.
            const { tokens, granted } = yield* row(key)
            assert.deepStrictEqual({ tokens, granted }, { tokens: 975, granted: 10 })
          })).pipe(Effect.orDie))

      it.effect("two processes leasing from one bucket at 200 a minute allow exactly 200 while no time passes", () =>
        Effect.gen(function*() {
          const key = bucketKey()
          const process = Effect.map(Layer.build(limiter(200)), Context.get(RateLimiter))
          const [a, b] = [yield* process, yield* process]
          const decisions = yield* Effect.forEach(Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b)), (l) =>
            l.consume(key))
          assert.strictEqual(
            decisions.filter((d) =>
              d.allowed
            ).length,
            200
          )
          // Near the end one process may be refused while the other still spends a token it holds (a lease is 2).
          assert.isTrue(
            decisions.slice(204).every((d) => !d.allowed),
            "once the held tokens are spent, every request is refused"
          )
        }).pipe(Effect.scoped))

      // 1,200 upserts in turn: minutes on a loaded machine.
      it.effect(
        "a key not busy in each process takes one token at a time: two processes, 2 requests a second at 600 a minute, none refused",
        () =>
          Effect.gen(function*() {
            const key = bucketKey()
            const process = Effect.map(Layer.build(limiter(600)), Context.get(RateLimiter))
            const [a, b] = [yield* process, yield* process]
            // Ten minutes of a request every 500 ms, round robin: each process sees one a second. Leases
            // of 6 taken for each and dropped unspent would cost 12 tokens a second against 10 refilled.
            const refused: Array<number> = []
            for (let i = 0; i < 1_200; i++) {
              if (!(yield* (i % 2 === 0 ? a : b).consume(key)).allowed) refused.push(i)
              yield* TestClock.adjust(500)
            }
            assert.deepStrictEqual(refused, [])
          }).pipe(Effect.scoped, Effect.orDie),
        180_000
      )

      it.effect("held tokens lapse after a second and go back to the bucket with the next upsert", () =>
        Effect.gen(function*() {
          const key = bucketKey()
          const process = Effect.map(Layer.build(limiter(200)), Context.get(RateLimiter))
          const [a, b] = [yield* process, yield* process]
          // A takes a lease of 1, then of 2 (one held); B empties the bucket.
          yield* a.consume(key)
          yield* a.consume(key)
          const leasedAt = yield* TestClock.currentTimeMillis
          const bs = yield* Effect.forEach(Array.from({ length: 198 }), () => b.consume(key))
          assert.deepStrictEqual([bs.filter((d) => d.allowed).length, (yield* row(key)).tokens], [197, 0])
          yield* TestClock.adjust(999)
          assert.isTrue((yield* a.consume(key)).allowed, "within its second, A spends what it holds")
          assert.strictEqual((yield* row(key)).at_ms, leasedAt, "no upsert for it")
          // A is busy: its next lease takes 2 (1% of 200) of the 3.33 refilled in 999 ms, holding 1.
          assert.isTrue((yield* a.consume(key)).allowed)
          assert.strictEqual((yield* row(key)).granted, 2)
          // Unspent a second later, that one goes back with A's next upsert: 1.33 left + 1 + 3.33 refilled - 1 taken.
          yield* TestClock.adjust(1_000)
          yield* a.consume(key)
          const after = yield* row(key)
          assert.strictEqual(after.at_ms, leasedAt + 1_999)
          assert.closeTo(after.tokens, 999 / 300 - 2 + 1 + 1_000 / 300 - 1, 1e-6)
        }).pipe(Effect.scoped, Effect.orDie))

      it.effect("concurrent requests share one lease at a time: 40 at once at 1,000 a minute take 7 leases, not 40", () =>
        withLimiter(1_000, (l) =>
          Effect.gen(function*() {
            const key = bucketKey()
            const decisions = yield* Effect.all(Array.from({ length: 40 }, () => l.consume(key)), {
              concurrency: "unbounded"
            })
            assert.isTrue(decisions.every((d) => d.allowed))
            // Leases of 1, 2, 4, 8, 10, 10 and 10: 45 taken, 5 held.
            assert.strictEqual((yield* row(key)).tokens, 955)
          })).pipe(Effect.orDie))

      it.effect("concurrent requests on an empty bucket are all refused, with a Retry-After", () =>
        withLimiter(200, (l) =>
          Effect.gen(function*() {
            const key = bucketKey()
            yield* Effect.forEach(Array.from({ length: 200 }), () => l.consume(key))
            yield* TestClock.adjust(10)
            const decisions = yield* Effect.all(Array.from({ length: 20 }, () => l.consume(key)), {
              concurrency: "unbounded"
            })
            assert.isTrue(decisions.every((d) => !d.allowed && d.retryAfterSeconds >= 1))
          })).pipe(Effect.orDie))

      it.effect("a bucket idle for a minute is swept (it was full), and starts full again", () =>
        withLimiter(5, (l) =>
          Effect.gen(function*() {
            const [idle, busy] = [bucketKey(), bucketKey()]
            const count = stored
            // Sweeps run every minute from the limiter's start (t), each dropping buckets untouched for a minute.
            yield* l.consume(idle)
            yield* l.consume(idle)
            yield* TestClock.adjust(61_000)
            yield* l.consume(busy)
            assert.strictEqual(yield* count(idle), 1, "the sweep at t + 60 s drops only buckets older than t")
            yield* TestClock.adjust(59_500)
            // The sweep's DELETE is real I/O the forked sweep starts on that tick: waited for (real
            // time, at most 5 s) rather than assumed done, so a loaded machine does not fail the check.
            for (let i = 0; i < 500 && (yield* count(idle)) !== 0; i++) {
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
            }
            assert.strictEqual(yield* count(idle), 0, "swept")
            assert.strictEqual(yield* count(busy), 1, "used within the minute: kept")
            assert.strictEqual((yield* l.consume(idle)).remaining, 4)
          })).pipe(Effect.orDie))
    }
  })

contract("RateLimiter: memory", Layer.empty, MemoryRateLimit.layer)

const migrated = (client: Layer.Layer<SqlClient.SqlClient, unknown>) => Migrate.layer.pipe(Layer.provideMerge(client))

sqlContract<SqlClient.SqlClient>({
  name: (db) => `RateLimiter: SQL on ${db}`,
  adapter: migrated,
  suite: (name, env) =>
    contract(
      name,
      env,
      SqlRateLimit.layer,
      (key) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM rate_limits WHERE bucket = ${key}`, (rs) =>
            rs[0]!.n)),
      (key) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.map(sql<Row>`SELECT tokens, granted, at_ms FROM rate_limits WHERE bucket = ${key}`, (rs) => ({
            tokens: Number(rs[0]!.tokens),
            granted: Number(rs[0]!.granted),
            at_ms: Number(rs[0]!.at_ms)
          })))
    ),
  database: "ratelimit",
  maxConnections: 10,
  onPostgres: (url) =>
    describe("RateLimiter: SQL on Postgres, three pools (three processes)", () => {
      it.live("300 requests on one key spread over three pools at 90 a minute: 90 allowed in all", () =>
        Effect.gen(function*() {
          const db = yield* Effect.acquireRelease(
            Effect.promise(() =>
              freshDatabase(url, "ratelimit3")
            ),
            (db) => Effect.promise(() => db.drop())
          )
          const pool = () =>
            migrated(Postgres.layer({ url: Redacted.make(db.url), maxConnections: 5 })).pipe(Layer.orDie)
          const key = bucketKey()
          const limiters = yield* Effect.forEach(
            [1, 2, 3],
            () => Effect.map(Layer.build(SqlRateLimit.layer(90).pipe(Layer.provide(pool()))), Context.get(RateLimiter))
          )
          const started = Date.now()
          const decisions = yield* Effect.all(Array.from({ length: 300 }, (_, i) => limiters[i % 3]!.consume(key)), {
            concurrency: 30
          })
          // 90 tokens, plus at most what refills during the run (1.5 a second), however long a loaded machine takes.
          const refilled = Math.ceil(((Date.now() - started) / 1000) * 1.5)
          const allowed = decisions.filter((d) => d.allowed).length
          assert.isAtLeast(allowed, 90)
          assert.isAtMost(allowed, 90 + refilled)
        }).pipe(Effect.scoped), 60_000)
    })
})
