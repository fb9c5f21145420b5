/**
 * RateLimiter on SQL: the token buckets of core/ratelimit.ts in one table, so every process on one
 * Postgres enforces one limit. A decision is one upsert that refills, takes a token and returns what
 * is left, atomically under the row's lock. Time is Effect's Clock of the deciding process, passed
 * in; `at_ms` never moves back, so processes whose clocks disagree a little mint no tokens.
 * Full buckets carry no information: each process deletes those idle for a window once a window.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { consume, decide, RateLimiter, refillPerMs, WINDOW_MS } from "../../core/ratelimit.ts"

type BucketRow = { readonly tokens: number | string; readonly allowed: boolean }

export const layer = (limitPerMinute: number) =>
  Layer.scoped(
    RateLimiter,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const perMs = refillPerMs(limitPerMinute)
      // A new bucket is the pure one's first step; an existing one is refilled the same way in SQL.
      const [fresh, first] = consume(undefined, 0, limitPerMinute)
      const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) => sql`DELETE FROM rate_limits WHERE at_ms < ${now - WINDOW_MS}`).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("rate-limit sweep failed", cause))
      )
      yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(Duration.millis(WINDOW_MS))))
      return RateLimiter.of({
        consume: (key) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            sql<BucketRow>`
              INSERT INTO rate_limits AS r (bucket, tokens, at_ms, allowed) VALUES (${key}, ${fresh.tokens}, ${now}, ${first.allowed})
              ON CONFLICT (bucket) DO UPDATE SET (tokens, allowed, at_ms) = (
                SELECT CASE WHEN x >= 1 THEN x - 1 ELSE x END, x >= 1, GREATEST(r.at_ms, EXCLUDED.at_ms)
                FROM (SELECT LEAST(${limitPerMinute}::float8, r.tokens + GREATEST(0, EXCLUDED.at_ms - r.at_ms)::float8 * ${perMs}::float8) AS x) refill
              )
              RETURNING tokens, allowed`
          ).pipe(
            Effect.orDie,
            Effect.map((rows) => decide(Number(rows[0]!.tokens), rows[0]!.allowed, limitPerMinute))
          )
      })
    })
  )
