/** SPEC "Phone numbers": stored and compared in E.164; US 10-digit input with punctuation accepted. */
import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc, Schema } from "effect"
import { E164, normalizePhone, phoneDigits } from "../../core/kernel/phone.ts"

const digit = fc.constantFrom(..."0123456789")
const digits = (n: number) => fc.array(digit, { minLength: n, maxLength: n }).map((ds) => ds.join(""))
const nanpLead = fc.constantFrom(..."23456789")

/** A NANP number: area code and exchange start with 2-9. */
const usNumber = fc.tuple(nanpLead, digits(2), nanpLead, digits(2), digits(4)).map(([a, b, c, d, e]) => ({
  area: a + b,
  exchange: c + d,
  line: e
}))

const usFormats: ReadonlyArray<(n: { area: string; exchange: string; line: string }) => string> = [
  (n) => `${n.area}${n.exchange}${n.line}`,
  (n) => `(${n.area}) ${n.exchange}-${n.line}`,
  (n) => `(${n.area})${n.exchange}-${n.line}`,
  (n) => `${n.area}-${n.exchange}-${n.line}`,
  (n) => `${n.area}.${n.exchange}.${n.line}`,
  (n) => `${n.area} ${n.exchange} ${n.line}`,
  (n) => `  ${n.area} ${n.exchange}-${n.line}  `,
  (n) => `1 ${n.area} ${n.exchange} ${n.line}`,
  (n) => `1-${n.area}-${n.exchange}-${n.line}`,
  (n) => `+1 (${n.area}) ${n.exchange}-${n.line}`,
  (n) => `+1${n.area}${n.exchange}${n.line}`
]

/** Strings made of phone characters only, so a good share of them parse. */
const phoneish = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.constantFrom(..."0123456789", "0123456789", " ", "-", ".", "(", ")"), { minLength: 1, maxLength: 20 })
  )
  .map(([plus, cs]) => (plus ? "+" : "") + cs.join(""))

const isE164 = Schema.is(E164)
/** normalizePhone with the brand dropped, to compare against plain strings. */
const norm = (input: string): Either.Either<string, string> => normalizePhone(input)

describe("normalizePhone", () => {
  it.prop("a US 10-digit number in any usual punctuation equals its +1 form", [usNumber, fc.nat()], ([n, i]) => {
    const expected = `+1${n.area}${n.exchange}${n.line}`
    const input = usFormats[i % usFormats.length]!(n)
    assert.deepStrictEqual(norm(input), Either.right(expected), input)
  })

  it.prop("every success is E.164, and normalizing it again gives itself", [phoneish], ([input]) => {
    const out = normalizePhone(input)
    if (Either.isLeft(out)) return
    assert.isTrue(isE164(out.right), `${input} -> ${out.right}`)
    assert.deepStrictEqual(normalizePhone(out.right), Either.right(out.right))
  }, { fastCheck: { numRuns: 1000 } })

  it.prop("idempotent on international numbers", [
    fc.constantFrom("+44", "+49", "+33", "+39", "+61", "+81", "+1", "+52", "+86"),
    fc.integer({ min: 4, max: 14 }).chain(digits)
  ], ([cc, rest]) => {
    const out = normalizePhone(`${cc} ${rest}`)
    if (Either.isLeft(out)) return
    assert.isTrue(out.right.startsWith(cc))
    assert.deepStrictEqual(normalizePhone(out.right), Either.right(out.right))
  }, { fastCheck: { numRuns: 2000 } })

  it("a stored number sent back is unchanged (no second trunk-zero strip)", () => {
    for (const input of ["+49 030 1234567", "+39 06 1234 5678", "+49 0000000000", "+490000000000"]) {
      const once = normalizePhone(input)
      if (Either.isRight(once)) assert.deepStrictEqual(normalizePhone(once.right), once, input)
    }
    assert.deepStrictEqual(norm("+49 030 1234567"), Either.right("+49301234567"))
    assert.deepStrictEqual(norm("+39 06 1234 5678"), Either.right("+390612345678"))
  })

  it("keeps known international numbers intact", () => {
    assert.deepStrictEqual(norm("+44 20 7946 0958"), Either.right("+442079460958"))
    assert.deepStrictEqual(norm("+49 30 901820"), Either.right("+4930901820"))
    assert.deepStrictEqual(norm("+1 (800) 555-0199"), Either.right("+18005550199"))
  })

  it.prop(
    "anything with a letter or other non-phone character is rejected",
    [phoneish, fc.string({ minLength: 1, maxLength: 3 }).filter((s) => /[^+\d\s().-]/.test(s)), fc.nat()],
    ([base, junk, at]) => {
      const i = at % (base.length + 1)
      const input = base.slice(0, i) + junk + base.slice(i)
      assert.isTrue(Either.isLeft(normalizePhone(input)), JSON.stringify(input))
    }
  )

  it("rejects empty, too short, too long and punctuation-only input", () => {
    for (
      const bad of [
        "",
        "   ",
        "+",
        "()",
        "---",
        "123",
        "555-0100",
        "+1 415",
        "12345678901234567890",
        "+1".padEnd(40, "5"),
        "+0 415 555 0100",
        "4155550100 ext 12",
        "415555O100"
      ]
    ) {
      assert.isTrue(Either.isLeft(normalizePhone(bad)), JSON.stringify(bad))
    }
  })

  it("never answers a number outside E.164's length (possible-length tables allow some)", () => {
    for (const bad of ["+490000", "+49 00000", "+49 1234 5678 9012 345", "+49 0000000000"]) {
      assert.isTrue(Either.isLeft(normalizePhone(bad)), bad)
    }
  })

  it("the rejection message quotes the input", () => {
    const out = normalizePhone("call me")
    assert.isTrue(Either.isLeft(out) && out.left.includes("call me"))
  })
})

describe("phoneDigits", () => {
  it("keeps digits only", () => {
    assert.strictEqual(phoneDigits("+1 (415) 555-0100"), "14155550100")
    assert.strictEqual(phoneDigits("()-. "), "")
  })
})

describe("normalizePhone's memory of recent answers", () => {
  it("answers a repeated input as it did the first time, valid or not, also after more inputs than it keeps", () => {
    const inputs = ["(415) 555-0100", "+14155550100", "not a phone", "+49 0123", " 212 555 0199 "]
    const first = inputs.map(normalizePhone)
    for (let i = 0; i < 12_000; i++) normalizePhone(`+1415${String(2_000_000 + i)}`)
    assert.deepStrictEqual(inputs.map(normalizePhone), first)
    assert.deepStrictEqual(first.map(Either.isRight), [true, true, false, false, true])
    assert.deepStrictEqual(Either.getOrNull(normalizePhone("+1415" + String(2_000_000))), "+14152000000")
  })
})
