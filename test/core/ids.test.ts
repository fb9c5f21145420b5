import { describe, expect, it } from "vitest"
import { isUuid, uuidv7 } from "../../core/kernel/ids.ts"

describe("uuidv7", () => {
  it("is an RFC 9562 version 7 UUID whose first 48 bits are the millisecond it was made", () => {
    const before = Date.now()
    const id = uuidv7()
    const after = Date.now()
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(isUuid(id)).toBe(true)
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16)
    // Ids made earlier in this process may have borrowed a millisecond ahead; never one behind.
    expect(ms).toBeGreaterThanOrEqual(before)
    expect(ms).toBeLessThanOrEqual(after + 1)
  })

  it("keeps ids strictly increasing and distinct across many refills of its random bytes", () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7())
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
    // The random tails differ: 62 random bits each.
    expect(new Set(ids.map((id) => id.slice(19))).size).toBe(ids.length)
  })
})
