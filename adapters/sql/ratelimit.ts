/**
 * RateLimiter on SQL: the token buckets of core/ratelimit.ts in one table, so every process on one
 * Postgres enforces one limit. A decision is one upsert that refills, takes tokens and returns what
 * is left, atomically under the row's lock. Time is Effect's Clock of the deciding process, passed
 * in; `at_ms` never moves back, so processes whose clocks disagree a little mint no tokens.
 * Full buckets carry no information: each process deletes those idle for a window once a window.
 *
 * A key with a high limit would otherwise cost every request a commit on one hot row. So one upsert
 * takes a lease of up to `leaseSize(limit)` tokens (1% of the limit, at most 100), and the process
 * spends the rest in memory within LEASE_MS, asking again only when they run out or lapse. Tokens
 * are only ever taken from the shared bucket, never made: a burst can exceed the limit by at most
 * one lease per process, and a lease that lapses unspent refuses that many requests too early.
 * Limits under 200 a minute lease one token: every decision is the bucket's own, as before.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Deferred, Duration, Effect, Exit, FiberId, Layer, Schedule } from "effect"
import { type Bucket, consume, decide, type Decision, LEASE_MS, leaseSize, RateLimiter, refill, refillPerMs, WINDOW_MS } from "../../core/ratelimit.ts"

type BucketRow = { readonly tokens: number | string; readonly granted: number | string }

/** Tokens this process holds for a key, and the shared bucket as the lease left it (for the headers). */
interface Held {
  count: number
  readonly until: number
  readonly shared: Bucket
}

export const layer = (limitPerMinute: number) =>
  Layer.scoped(
    RateLimiter,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const perMs = refillPerMs(limitPerMinute)
      const want = leaseSize(limitPerMinute)
      // A new bucket is the pure one's first step, less the rest of the lease; an existing one is refilled the same way in SQL.
      const [fresh] = consume(undefined, 0, limitPerMinute)
      const held = new Map<string, Held>()
      // One lease at a time per key, so concurrent requests share one instead of each taking a lease.
      const leasing = new Map<string, Deferred.Deferred<void>>()

      const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) => {
        for (const [key, h] of held) if (h.until <= now) held.delete(key)
        return sql`DELETE FROM rate_limits WHERE at_ms < ${now - WINDOW_MS}`
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("rate-limit sweep failed", cause)))
      yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(Duration.millis(WINDOW_MS))))

      const lease = (key: string, now: number): Effect.Effect<Decision> =>
        sql<BucketRow>`
          INSERT INTO rate_limits AS r (bucket, tokens, at_ms, allowed, granted)
          VALUES (${key}, ${fresh.tokens - (want - 1)}, ${now}, true, ${want})
          ON CONFLICT (bucket) DO UPDATE SET (tokens, allowed, granted, at_ms) = (
            SELECT x - g, g >= 1, g, GREATEST(r.at_ms, EXCLUDED.at_ms)
            FROM (
              SELECT x, LEAST(${want}::float8, floor(x)) AS g
              FROM (SELECT LEAST(${limitPerMinute}::float8, r.tokens + GREATEST(0, EXCLUDED.at_ms - r.at_ms)::float8 * ${perMs}::float8) AS x) refill
            ) lease
          )
          RETURNING tokens, granted`.pipe(
          Effect.orDie,
          Effect.map((rows) => {
            const tokens = Number(rows[0]!.tokens)
            const granted = Number(rows[0]!.granted)
            if (granted > 1) held.set(key, { count: granted - 1, until: now + LEASE_MS, shared: { tokens, at: now } })
            return decide(tokens + Math.max(0, granted - 1), granted >= 1, limitPerMinute)
          })
        )

      const leased = (key: string): Effect.Effect<Decision> =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const h = held.get(key)
          if (h !== undefined && h.until > now) {
            h.count -= 1
            if (h.count < 1) held.delete(key)
            return Effect.succeed(decide(refill(h.shared, now, limitPerMinute) + h.count, true, limitPerMinute))
          }
          held.delete(key)
          const pending = leasing.get(key)
          if (pending !== undefined) return Effect.zipRight(Deferred.await(pending), leased(key))
          const done = Deferred.unsafeMake<void>(FiberId.none)
          leasing.set(key, done)
          return Effect.ensuring(
            lease(key, now),
            Effect.suspend(() => {
              leasing.delete(key)
              return Deferred.done(done, Exit.void)
            })
          )
        })

      return RateLimiter.of({
        consume: want === 1 ? (key) => Effect.flatMap(Clock.currentTimeMillis, (now) => lease(key, now)) : leased
      })
    })
  )
