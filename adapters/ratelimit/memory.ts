/**
 * Process-local buckets, for the embedded database (one process by construction). Processes on one
 * Postgres share theirs through adapters/sql/ratelimit.ts instead.
 */
import { Clock, Effect, Layer } from "effect"
import { type Bucket, consume, RateLimiter } from "../../core/ratelimit/bucket.ts"

export const layer = (limitPerMinute: number) =>
  Layer.sync(RateLimiter, () => {
    const buckets = new Map<string, Bucket>()
    let sweptAt = 0
    return RateLimiter.of({
      consume: (key, cost = 1) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          // Full buckets carry no information: drop them once a minute so idle keys cost nothing.
          if (now - sweptAt > 60_000) {
            sweptAt = now
            for (const [k, b] of buckets) if (now - b.at > 60_000) buckets.delete(k)
          }
          const [bucket, decision] = consume(buckets.get(key), now, limitPerMinute, Math.min(cost, limitPerMinute))
          buckets.set(key, bucket)
          return decision
        })
    })
  })
