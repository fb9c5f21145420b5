/**
 * Per-key rate limiting as a token bucket refilled continuously: `limit` tokens a minute, a burst of
 * at most `limit`. Pure, so the header arithmetic is testable without a clock.
 *
 * A request costs one token, and a large body more (`requestCost`): its work grows with its size, so
 * a key sending 1 MiB bodies at its request rate would take a share of the process every other
 * tenant waits behind. The weight also keeps the burst small: a full bucket holds a minute of small
 * requests, which are cheap, but only a few 1 MiB bodies.
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

/** Body bytes one extra token buys. */
export const BYTES_PER_TOKEN = 16 * 1024

/** Tokens a request with a body of `bodyBytes` takes: one, plus one per whole 16 KiB of body (limiters take at most their limit). */
export const requestCost = (bodyBytes: number) => 1 + Math.floor(bodyBytes / BYTES_PER_TOKEN)

export const consume = (bucket: Bucket | undefined, now: number, limit: number, cost = 1): [Bucket, Decision] => {
  const refilled = refill(bucket, now, limit)
  const allowed = refilled >= cost
  const tokens = allowed ? refilled - cost : refilled
  return [{ tokens, at: now }, decide(tokens, allowed, limit, cost)]
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

/** The headers' numbers for a bucket left holding `tokens` after a request of `cost` that was (or was not) `allowed`. */
export const decide = (tokens: number, allowed: boolean, limit: number, cost = 1): Decision => ({
  allowed,
  limit,
  remaining: Math.floor(tokens),
  // Multiply before dividing: `x / perMs` rounds 9 tokens at 9/min up to 61 s.
  resetSeconds: Math.ceil(((limit - tokens) * WINDOW_MS) / limit / 1000),
  retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(((cost - tokens) * WINDOW_MS) / limit / 1000))
})

export interface RateLimiter {
  /** Takes `cost` tokens (default 1, at most the limit) from `key`'s bucket, or none when it holds fewer. */
  readonly consume: (key: string, cost?: number) => Effect.Effect<Decision>
}
export const RateLimiter = Context.GenericTag<RateLimiter>("core/RateLimiter")
