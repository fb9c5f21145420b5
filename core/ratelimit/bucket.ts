/**
 * Per-key rate limiting as a token bucket refilled continuously: `limit` tokens a minute, a burst of
 * at most `limit`. Pure, so the header arithmetic is testable without a clock.
 */
import { Context, Effect } from "effect"

export interface Bucket {
  readonly tokens: number
  readonly at: number
}

export interface Decision {
  readonly allowed: boolean
  readonly limit: number
  /** Whole requests left right now. */
  readonly remaining: number
  /** Seconds until a full minute's allowance is back (`RateLimit-Reset`). */
  readonly resetSeconds: number
  /** Seconds until the next request is allowed (`Retry-After`), 0 when allowed. */
  readonly retryAfterSeconds: number
}

export const WINDOW_MS = 60_000

export const consume = (bucket: Bucket | undefined, now: number, limit: number): [Bucket, Decision] => {
  const refilled = refill(bucket, now, limit)
  const allowed = refilled >= 1
  const tokens = allowed ? refilled - 1 : refilled
  return [{ tokens, at: now }, decide(tokens, allowed, limit)]
}

/** A bucket's tokens at `now` (a bucket never seen is full). */
export const refill = (bucket: Bucket | undefined, now: number, limit: number) =>
  bucket === undefined ? limit : Math.min(limit, bucket.tokens + Math.max(0, now - bucket.at) * refillPerMs(limit))

/**
 * The most tokens a process sharing buckets with others may take from one at once, to spend
 * without asking again: 1% of the limit, from 1 to 100. Limits under 200 a minute take one at a
 * time, exactly as one bucket would decide.
 */
export const leaseSize = (limit: number) => Math.max(1, Math.min(100, Math.floor(limit / 100)))

/** Tokens taken and not spent within this long are not spent: they go back to the bucket with the next upsert. */
export const LEASE_MS = 1_000

/** Tokens regained per millisecond; a shared store computes the refill with this same number. */
export const refillPerMs = (limit: number) => limit / WINDOW_MS

/** The headers' numbers for a bucket left holding `tokens` after a request that was (or was not) `allowed`. */
export const decide = (tokens: number, allowed: boolean, limit: number): Decision => ({
  allowed,
  limit,
  remaining: Math.floor(tokens),
  // Multiply before dividing: `x / perMs` rounds 9 tokens at 9/min up to 61 s.
  resetSeconds: Math.ceil(((limit - tokens) * WINDOW_MS) / limit / 1000),
  retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(((1 - tokens) * WINDOW_MS) / limit / 1000))
})

export interface RateLimiter {
  readonly consume: (key: string) => Effect.Effect<Decision>
}
export const RateLimiter = Context.GenericTag<RateLimiter>("core/RateLimiter")
