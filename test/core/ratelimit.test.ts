/**
 * SPEC "Limits": 600 requests per minute per key, `RateLimit-Limit/Remaining/Reset`, `Retry-After`
 * on 429. The bucket is pure: `consume(bucket, now, limit)`.
 */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { type Bucket, consume, type Decision } from "../../core/ratelimit/bucket.ts"

/** Runs `n` requests at instant `now`, threading the bucket. */
const burst = (bucket: Bucket | undefined, now: number, n: number, limit: number) => {
  const decisions: Array<Decision> = []
  let b = bucket
  for (let i = 0; i < n; i++) {
    const [next, d] = consume(b, now, limit)
    b = next
    decisions.push(d)
  }
  return { bucket: b, decisions }
}

const T0 = 1_700_000_000_000

describe("token bucket", () => {
  it("600/min: a burst of 600 is allowed, the 601st is denied with Retry-After >= 1", () => {
    const { bucket, decisions } = burst(undefined, T0, 601, 600)
    assert.isTrue(decisions.slice(0, 600).every((d) => d.allowed && d.retryAfterSeconds === 0 && d.limit === 600))
    const denied = decisions[600]!
    assert.isFalse(denied.allowed)
    assert.strictEqual(denied.remaining, 0)
    assert.isAtLeast(denied.retryAfterSeconds, 1)
    assert.strictEqual(denied.retryAfterSeconds, 1) // one token comes back every 100 ms
    // still denied at the same instant, however often it is asked
    const again = burst(bucket, T0, 50, 600).decisions
    assert.isTrue(again.every((d) => !d.allowed && d.retryAfterSeconds >= 1))
  })

  it("remaining counts down one per request, and reset grows with what was used", () => {
    const { decisions } = burst(undefined, T0, 600, 600)
    decisions.forEach((d, i) => assert.strictEqual(d.remaining, 599 - i))
    // 1 token used: back in 100 ms, reported as 1 s; all 600 used: a full minute
    assert.strictEqual(decisions[0]!.resetSeconds, 1)
    assert.strictEqual(decisions[299]!.resetSeconds, 30)
    assert.strictEqual(decisions[599]!.resetSeconds, 60)
  })

  it("refills continuously: one request per 100 ms after an exhausted burst", () => {
    const { bucket } = burst(undefined, T0, 600, 600)
    assert.isFalse(consume(bucket, T0 + 99, 600)[1].allowed)
    const [b1, d1] = consume(bucket, T0 + 100, 600)
    assert.isTrue(d1.allowed)
    assert.strictEqual(d1.remaining, 0)
    assert.isFalse(consume(b1, T0 + 100, 600)[1].allowed)
    assert.isTrue(consume(b1, T0 + 200, 600)[1].allowed)
  })

  it("half a minute gives back half the allowance", () => {
    const { bucket } = burst(undefined, T0, 600, 600)
    const later = burst(bucket, T0 + 30_000, 301, 600).decisions
    assert.strictEqual(later.filter((d) => d.allowed).length, 300)
    assert.isFalse(later[300]!.allowed)
  })

  it("never holds more than one minute's allowance, however long it was idle", () => {
    const { bucket } = burst(undefined, T0, 10, 600)
    const later = burst(bucket, T0 + 3_600_000, 601, 600).decisions
    assert.strictEqual(later[0]!.remaining, 599)
    assert.strictEqual(later.filter((d) => d.allowed).length, 600)
  })

  it("Retry-After is the wait for one token at low limits", () => {
    // 1 per minute: denied for 60 s, then 30 s later only 30 s remain
    const { bucket } = burst(undefined, T0, 1, 1)
    const [b2, denied] = consume(bucket, T0, 1)
    assert.isFalse(denied.allowed)
    assert.strictEqual(denied.retryAfterSeconds, 60)
    assert.strictEqual(consume(b2, T0 + 30_000, 1)[1].retryAfterSeconds, 30)
    assert.isTrue(consume(b2, T0 + 60_000, 1)[1].allowed)
  })

  it("a full minute's use reports Reset 60, not 61, at any limit", () => {
    for (const limit of [1, 3, 7, 9, 11, 13, 600, 601, 999]) {
      const { decisions } = burst(undefined, T0, limit, limit)
      assert.strictEqual(decisions[limit - 1]!.resetSeconds, 60, `limit ${limit}`)
    }
  })

  it("a clock going backwards does not mint tokens", () => {
    const { bucket } = burst(undefined, T0, 600, 600)
    assert.isFalse(consume(bucket, T0 - 10_000, 600)[1].allowed)
  })

  it.prop(
    "over any schedule, allowed requests never exceed limit + refill, and the headers stay in range",
    [
      fc.integer({ min: 1, max: 1200 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 1, max: 50 })), {
        minLength: 1,
        maxLength: 60
      })
    ],
    ([limit, schedule]) => {
      let bucket: Bucket | undefined
      let now = T0
      let allowed = 0
      const bad: Array<Decision> = []
      for (const [gap, n] of schedule) {
        now += gap
        for (let i = 0; i < n; i++) {
          const [next, d] = consume(bucket, now, limit)
          bucket = next
          if (d.allowed) allowed++
          const inRange = d.limit === limit &&
            d.remaining >= 0 &&
            d.remaining <= limit - 1 &&
            d.resetSeconds >= 0 &&
            d.resetSeconds <= 60 &&
            (d.allowed ? d.retryAfterSeconds === 0 : d.retryAfterSeconds >= 1)
          if (!inRange) bad.push(d)
        }
      }
      assert.deepStrictEqual(bad.slice(0, 3), [])
      const refill = ((now - T0) * limit) / 60_000
      assert.isAtMost(allowed, limit + Math.floor(refill))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "a denied request succeeds once Retry-After seconds have passed",
    [fc.integer({ min: 1, max: 1200 }), fc.integer({ min: 0, max: 120_000 })],
    ([limit, offset]) => {
      let { bucket } = burst(undefined, T0, limit, limit)
      const [b, denied] = consume(bucket, T0 + Math.min(offset, 1), limit)
      if (denied.allowed) return
      bucket = b
      assert.isTrue(consume(bucket, T0 + Math.min(offset, 1) + denied.retryAfterSeconds * 1000, limit)[1].allowed)
    }
  )
})
