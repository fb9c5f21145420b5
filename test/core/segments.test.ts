/**
 * The segment counter (core/pacing/segments.ts): the 160/153 and 70/67 boundaries, extension
 * characters and surrogate pairs kept whole across a split, the switch to UCS-2 on one character,
 * and properties over random bodies against bounds computed without the packing loop.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isGsm7, segmentsOf } from "../../core/pacing/segments.ts"

const basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡AZÄÖÑÜ§¿azäöñüà"
const extension = "\f^{}\\[~]|€"
/** Outside GSM-7: accented letters missing from it, other scripts, BMP symbols and astral emoji. */
const foreign = ["ç", "á", "ê", "Ж", "中", "ع", "’", "“", "•", "😀", "👍🏽", "𝄞"]

const gsmChar = fc.oneof(fc.constantFrom(...basic), fc.constantFrom(...extension))
const anyChar = fc.oneof(gsmChar, fc.constantFrom(...foreign))
const body = (char: fc.Arbitrary<string>, maxLength = 700) => fc.array(char, { maxLength }).map((cs) => cs.join(""))

const count = (s: string) => segmentsOf(s).segments
const a = (n: number) => "a".repeat(n)

describe("segmentsOf: GSM-7", () => {
  it("160 septets are one segment, 161 are two, then 153 per segment", () => {
    expect(segmentsOf(a(160))).toEqual({ encoding: "GSM-7", segments: 1, units: 160, unitsPerSegment: 160 })
    expect(segmentsOf(a(161))).toEqual({ encoding: "GSM-7", segments: 2, units: 161, unitsPerSegment: 153 })
    for (const k of [2, 3, 4, 10]) {
      expect(count(a(153 * k))).toBe(k)
      expect(count(a(153 * k + 1))).toBe(k + 1)
    }
  })

  it("an empty body is one segment of no units", () => {
    expect(segmentsOf("")).toEqual({ encoding: "GSM-7", segments: 1, units: 0, unitsPerSegment: 160 })
  })

  it("an extension character costs two septets", () => {
    for (const c of extension) {
      expect(segmentsOf(c)).toMatchObject({ encoding: "GSM-7", units: 2 })
      expect(count(a(158) + c)).toBe(1)
      expect(count(a(159) + c)).toBe(2)
    }
    expect(segmentsOf("{}".repeat(40))).toMatchObject({ segments: 1, units: 160 })
    expect(segmentsOf("{}".repeat(40) + "a")).toMatchObject({ segments: 2, units: 161 })
  })

  it("an extension character at a split boundary opens the next segment whole", () => {
    // 152 septets, then the pair would take septets 153-154: it moves, so 306 septets need 3 segments.
    expect(segmentsOf(a(152) + "€" + a(152))).toMatchObject({ units: 306, segments: 3 })
    // One septet earlier the pair ends the first segment exactly: 2 segments.
    expect(segmentsOf(a(151) + "€" + a(153))).toMatchObject({ units: 306, segments: 2 })
  })

  it("the GSM-7 look-alikes outside the table switch to UCS-2", () => {
    for (const c of ["ç", "`", "’", "\t", "\u00a0"]) expect(isGsm7(c)).toBe(false)
    expect(isGsm7(basic + extension)).toBe(true)
  })
})

describe("segmentsOf: UCS-2", () => {
  it("one character outside GSM-7 makes the whole body UCS-2", () => {
    expect(segmentsOf(a(159) + "ç")).toEqual({ encoding: "UCS-2", segments: 3, units: 160, unitsPerSegment: 67 })
    expect(segmentsOf("€".repeat(10) + "中")).toMatchObject({ encoding: "UCS-2", units: 11 })
  })

  it("70 code units are one segment, 71 are two, then 67 per segment", () => {
    const u = (n: number) => "Ж".repeat(n)
    expect(segmentsOf(u(70))).toEqual({ encoding: "UCS-2", segments: 1, units: 70, unitsPerSegment: 70 })
    expect(segmentsOf(u(71))).toEqual({ encoding: "UCS-2", segments: 2, units: 71, unitsPerSegment: 67 })
    for (const k of [2, 3, 5]) {
      expect(count(u(67 * k))).toBe(k)
      expect(count(u(67 * k + 1))).toBe(k + 1)
    }
  })

  it("an emoji is a surrogate pair, two code units, never split across segments", () => {
    expect(segmentsOf("😀".repeat(35))).toMatchObject({ units: 70, segments: 1 })
    expect(segmentsOf("😀".repeat(36))).toMatchObject({ units: 72, segments: 2 })
    // 67 is odd: each segment of a split all-emoji body holds 33 of them (66 units).
    expect(segmentsOf("😀".repeat(67))).toMatchObject({ units: 134, segments: 3 })
    expect(segmentsOf("Ж".repeat(66) + "😀" + "Ж".repeat(66))).toMatchObject({ units: 134, segments: 3 })
    expect(segmentsOf("Ж".repeat(65) + "😀" + "Ж".repeat(67))).toMatchObject({ units: 134, segments: 2 })
  })
})

describe("segmentsOf: properties", () => {
  it("appending a character never lowers the count", () => {
    fc.assert(fc.property(body(anyChar), anyChar, (s, c) => count(s + c) >= count(s)))
  })

  it("the count lies between units / per segment and units / (per segment - 1)", () => {
    fc.assert(
      fc.property(body(anyChar), (s) => {
        const { segments, units, unitsPerSegment: per } = segmentsOf(s)
        if (units <= per) return segments === 1
        // A pair pushed to the next segment wastes at most one unit per segment.
        return segments >= Math.ceil(units / per) && segments <= Math.ceil(units / (per - 1))
      })
    )
  })

  it("without pairs the count is the plain division", () => {
    const single = fc.constantFrom(...basic)
    fc.assert(
      fc.property(body(single), (s) => count(s) === (s.length <= 160 ? 1 : Math.ceil(s.length / 153)))
    )
    const bmp = fc.constantFrom(..."ЖçЯ中ع’")
    fc.assert(fc.property(body(bmp), (s) => count(s) === (s.length <= 70 ? 1 : Math.ceil(s.length / 67))))
  })

  it("the encoding is GSM-7 exactly when every character is in the tables; units follow it", () => {
    fc.assert(
      fc.property(body(anyChar), (s) => {
        const { encoding, units } = segmentsOf(s)
        const gsm = [...s].every((c) => basic.includes(c) || extension.includes(c))
        const septets = [...s].reduce((n, c) => n + (extension.includes(c) ? 2 : 1), 0)
        return encoding === (gsm ? "GSM-7" : "UCS-2") && units === (gsm ? septets : s.length)
      })
    )
  })

  it("a GSM-7 body's count is monotone in length", () => {
    fc.assert(
      fc.property(body(gsmChar, 1000), (s) => {
        const cs = [...s]
        let last = 0
        for (let i = 0; i <= cs.length; i += 7) {
          const n = count(cs.slice(0, i).join(""))
          if (n < last) return false
          last = n
        }
        return true
      })
    )
  })
})
