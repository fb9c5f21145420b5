/**
 * How many SMS segments a body costs (CONTRACT "Pacing"): carriers meter 10DLC throughput in
 * segments, not messages, so the pacer charges each send by this count.
 *
 * Tables: GSM 03.38 / 3GPP TS 23.038 §6.2.1, the 7-bit default alphabet and its extension table, as
 * Sinch's SMPP encoding page prints them (https://developers.sinch.com/docs/sms/smpp/message-encoding).
 * National language shift tables are left out: a character outside both tables counts the whole body
 * as UCS-2, the higher count, which is the safe side for pacing.
 *
 * A concatenated segment spends 6 octets of its 140 on the user data header: 160 septets alone,
 * 153 when split; UCS-2 70 and 67 UTF-16 code units. A split never cuts an extension character's
 * escape pair nor a surrogate pair: the segment is left one unit short and the pair opens the next.
 */

export type Encoding = "GSM-7" | "UCS-2"

export interface Segments {
  readonly encoding: Encoding
  /** Segments on the wire; an empty body counts 1 (see `segmentsOf`). */
  readonly segments: number
  /** GSM-7 septets (an extension character is 2) or UTF-16 code units. */
  readonly units: number
  /** Units one segment carries for this body: 160 or 153, 70 or 67. */
  readonly unitsPerSegment: number
}

/** Units one segment carries: alone, and as part of a concatenated message. */
export const SEGMENT_UNITS: Readonly<Record<Encoding, { readonly single: number; readonly split: number }>> = {
  "GSM-7": { single: 160, split: 153 },
  "UCS-2": { single: 70, split: 67 }
}

/** The 7-bit default alphabet, in code order (0x1B, the escape, left out: it has no character). */
const BASIC = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

/** The extension table: each is the escape 0x1B and a code, two septets. */
const EXTENSION = "\f^{}\\[~]|€"

const septets = new Map<string, 1 | 2>([
  ...Array.from(BASIC, (c) => [c, 1] as const),
  ...Array.from(EXTENSION, (c) => [c, 2] as const)
])

/** Whether `body` sends as GSM-7: every character in the default alphabet or its extension table. */
export const isGsm7 = (body: string): boolean => {
  for (const c of body) if (!septets.has(c)) return false
  return true
}

/**
 * The encoding, units and segments of `body`. An empty body counts one segment of zero units: what
 * leaves still takes a slot of the carrier's throughput (an empty SMS, or an MMS carrying media),
 * so a paced send never costs nothing.
 */
export const segmentsOf = (body: string): Segments => {
  const encoding: Encoding = isGsm7(body) ? "GSM-7" : "UCS-2"
  // Per character (code point, so a surrogate pair is one entry), the units it takes.
  const costs = Array.from(body, (c) => encoding === "GSM-7" ? septets.get(c)! : c.length)
  const units = costs.reduce((sum, n) => sum + n, 0)
  const { single, split } = SEGMENT_UNITS[encoding]
  if (units <= single) return { encoding, segments: 1, units, unitsPerSegment: single }
  let segments = 1
  let used = 0
  for (const cost of costs) {
    if (used + cost > split) {
      segments++
      used = 0
    }
    used += cost
  }
  return { encoding, segments, units, unitsPerSegment: split }
}
