import { Context } from "effect"

/**
 * UUIDv7 (RFC 9562): 48-bit millisecond time, then a 12-bit counter that keeps ids from one process
 * strictly increasing within a millisecond, then 62 random bits. Lists ordered by (createdAt, id)
 * therefore stay in creation order even when two rows share a millisecond.
 */
let lastMs = 0
let counter = 0

/** The random tails (8 bytes each) of 256 ids, drawn at once: one call to the system's generator per 256 ids, not per id. */
const pool = new Uint8Array(8 * 256)
let used = pool.length
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"))

export const uuidv7 = (): string => {
  let ms = Date.now()
  if (ms <= lastMs) {
    counter++
    if (counter > 0xfff) {
      // 4096 ids in one millisecond: borrow the next millisecond rather than lose monotonicity.
      lastMs++
      counter = 0
    }
    ms = lastMs
  } else {
    lastMs = ms
    counter = 0
  }
  if (used === pool.length) {
    crypto.getRandomValues(pool)
    used = 0
  }
  const r = used
  used += 8
  const hi = Math.floor(ms / 2 ** 16)
  const h = (b: number) => HEX[b & 0xff]!
  return (
    h(hi >>> 24) + h(hi >>> 16) + h(hi >>> 8) + h(hi) + "-" +
    h(ms >>> 8) + h(ms) + "-" +
    h(0x70 | ((counter >>> 8) & 0x0f)) + h(counter) + "-" +
    h(0x80 | (pool[r]! & 0x3f)) + h(pool[r + 1]!) + "-" +
    h(pool[r + 2]!) + h(pool[r + 3]!) + h(pool[r + 4]!) + h(pool[r + 5]!) + h(pool[r + 6]!) + h(pool[r + 7]!)
  )
}

/** Where new ids come from; tests may provide a deterministic generator. */
export class Ids extends Context.Reference<Ids>()("core/Ids", {
  defaultValue: () => ({ uuid: uuidv7 })
}) {}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** SPEC: a malformed id answers 404 like an unknown one, so callers check this before any store. */
export const isUuid = (s: string): boolean => UUID_PATTERN.test(s)
