/**
 * RateLimiter on SQL: the token buckets of core/ratelimit/bucket.ts in one table, so every process on one
 * Postgres enforces one limit. A decision is one upsert that refills, takes tokens and returns what
 * is left, atomically under the row's lock. Time is Effect's Clock of the deciding process, passed
 * in; `at_ms` never moves back, so processes whose clocks disagree a little mint no tokens.
 * Full buckets carry no information: each process deletes those idle for a window once a window.
 *
 * A key with a high limit would otherwise cost every request a commit on one hot row. So one upsert
 * may take a lease of several tokens, which the process spends in memory within LEASE_MS. A lease
 * starts at one token and doubles, up to `leaseSize(limit)` (1% of the limit, at most 100), only
 * while each lease is spent within its time: a key that is not busy in this process takes one token
 * per request, as before. Unspent tokens go back to the bucket with the process's next upsert for
 * that key. Tokens are only ever taken from the shared bucket, never made: a burst can pass the
 * limit by at most one lease per process. A request costing more than its lease holds returns the
 * rest and takes a new one. Limits under 200 a minute take what each request costs, and every
 * decision is the bucket's own.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Deferred, Duration, Effect, Exit, FiberId, Layer, Schedule } from "effect"
import {
  type Bucket,
  decide,
  type Decision,
  LEASE_MS,
  leaseSize,
  RateLimiter,
  refill,
  refillPerMs,
  WINDOW_MS
} from "../../core/ratelimit/bucket.ts"
import { PREPARED } from "./prepared.ts"

type BucketRow = { readonly tokens: number | string; readonly granted: number | string }

/** An upsert's refusal, shared with the requests that waited for it. */
interface Refusal {
  readonly cost: number
  readonly decision: Decision
}

/** A key's lease in this process. */
interface Lease {
  /** Tokens taken and not yet spent. */
  count: number
  /** How many the lease took: the next one doubles it if this one is spent in time. */
  readonly size: number
  readonly until: number
  /** The shared bucket as the lease left it, for the headers. */
  readonly shared: Bucket
}

export const layer = (limitPerMinute: number) =>
  Layer.scoped(
    RateLimiter,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const perMs = refillPerMs(limitPerMinute)
      const most = leaseSize(limitPerMinute)
      const leases = new Map<string, Lease>()
      // One upsert at a time per key: concurrent requests wait for it, then spend from it, or share
      // its refusal (a refused upsert means the bucket had no whole token for anyone), or its
      // failure (the database away: each waiter trying again in turn would answer one after another).
      const leasing = new Map<string, Deferred.Deferred<Refusal | undefined>>()

      const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) => {
        // A lapsed lease's tokens would go back with the key's next upsert; a key idle for a window refilled anyway.
        for (const [key, l] of leases) if (l.until <= now - WINDOW_MS) leases.delete(key)
        return sql`DELETE FROM rate_limits WHERE at_ms < ${now - WINDOW_MS}`
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("rate-limit sweep failed", cause)))
      yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(Duration.millis(WINDOW_MS))))

      /** One upsert: gives back `returned` tokens, refills, and takes up to `want` if it holds `need` (need <= want <= limit). */
      const upsert = (key: string, now: number, need: number, want: number, returned: number) =>
        sql<BucketRow>`${sql.literal(PREPARED)}
          INSERT INTO rate_limits AS r (bucket, tokens, at_ms, allowed, granted)
          VALUES (${key}, ${limitPerMinute - want}, ${now}, true, ${want})
          ON CONFLICT (bucket) DO UPDATE SET (tokens, allowed, granted, at_ms) = (
            SELECT x - g, g > 0, g, GREATEST(r.at_ms, EXCLUDED.at_ms)
            FROM (
              SELECT x, CASE WHEN x >= ${need}::float8 THEN LEAST(${want}::float8, floor(x)) ELSE 0 END AS g
              FROM (SELECT LEAST(${limitPerMinute}::float8, r.tokens + ${returned}::float8 + GREATEST(0, EXCLUDED.at_ms - r.at_ms)::float8 * ${perMs}::float8) AS x) refill
            ) lease
          )
          RETURNING tokens, granted`.pipe(
          Effect.orDie,
          Effect.map((rows) => ({ tokens: Number(rows[0]!.tokens), granted: Number(rows[0]!.granted) }))
        )

      // Each request its own upsert: the pure bucket's arithmetic (a new bucket is its first step: limit - cost).
      const single = (key: string, cost: number): Effect.Effect<Decision> =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.map(upsert(key, now, cost, cost, 0), ({ tokens, granted }) =>
            decide(tokens, granted >= cost, limitPerMinute, cost)))

      const leased = (key: string, cost: number): Effect.Effect<Decision> =>
        Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const l = leases.get(key)
            if (l !== undefined && l.count >= cost && l.until > now) {
              l.count -= cost
              const left = refill({ tokens: l.shared.tokens + l.count, at: l.shared.at }, now, limitPerMinute)
              return Effect.succeed(decide(left, true, limitPerMinute, cost))
            }
            const pending = leasing.get(key)
            if (pending !== undefined) {
              // A refusal of a request costing no more than this one is this one's too.
              return Effect.flatMap(
                restore(Deferred.await(pending)),
                (refused) =>
                  refused !== undefined && refused.cost <= cost ? Effect.succeed(refused.decision) : leased(key, cost)
              )
            }
            // Spent in time: the key is busy here, so take twice as many; otherwise start again from one.
            const spentInTime = l !== undefined && l.count < cost && l.until > now
            const want = Math.max(cost, spentInTime ? Math.min(most, l.size * 2) : 1)
            // What the lease holds goes back: lapsed, or too few for this request.
            const returned = l?.count ?? 0
            leases.delete(key)
            const done = Deferred.unsafeMake<Refusal | undefined>(FiberId.none)
            leasing.set(key, done)
            let outcome: Refusal | undefined
            return restore(upsert(key, now, cost, want, returned)).pipe(
              Effect.map(({ tokens, granted }) => {
                if (granted < cost) {
                  const decision = decide(tokens, false, limitPerMinute, cost)
                  outcome = { cost, decision }
                  return decision
                }
                const held = granted - cost
                leases.set(key, { count: held, size: granted, until: now + LEASE_MS, shared: { tokens, at: now } })
                return decide(tokens + held, true, limitPerMinute, cost)
              }),
              Effect.onExit((exit) =>
                Effect.suspend(() => {
                  leasing.delete(key)
                  // Interrupted (its client went away), the upsert decided nothing: a waiter tries its own.
                  return Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)
                    ? Deferred.failCause(done, exit.cause)
                    : Deferred.succeed(done, outcome)
                })
              )
            )
          })
        )

      const decideWith = most === 1 ? single : leased
      return RateLimiter.of({
        consume: (key, cost = 1) =>
          decideWith(key, Math.min(cost, limitPerMinute))
      })
    })
  )
