import { Context } from "effect"

/**
 * UUIDv7 (RFC 9562): 48-bit millisecond time, then a 12-bit counter that keeps ids from one process
 * strictly increasing within a millisecond, then 62 random bits. Lists ordered by (createdAt, id)
 * therefore stay in creation order even when two rows share a millisecond.
 */
let lastMs = 0
let counter = 0

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
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  const hi = Math.floor(ms / 2 ** 16)
  bytes[0] = (hi >>> 24) & 0xff
  bytes[1] = (hi >>> 16) & 0xff
  bytes[2] = (hi >>> 8) & 0xff
  bytes[3] = hi & 0xff
  bytes[4] = (ms >>> 8) & 0xff
  bytes[5] = ms & 0xff
  bytes[6] = 0x70 | ((counter >>> 8) & 0x0f)
  bytes[7] = counter & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Where new ids come from; tests may provide a deterministic generator. */
export class Ids extends Context.Reference<Ids>()("core/Ids", {
  defaultValue: () => ({ uuid: uuidv7 })
}) {}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** SPEC: a malformed id answers 404 like an unknown one, so callers check this before any store. */
export const isUuid = (s: string): boolean => UUID_PATTERN.test(s)
