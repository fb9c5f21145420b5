/**
 * Phone numbers are stored and compared in E.164. Input may be E.164 or a 10-digit US number with
 * the usual punctuation. We accept every *possible* number (right length for its country) rather than
 * only *valid* ones: fictional 555 numbers and freshly assigned ranges must still work.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { parsePhoneNumberFromString } from "libphonenumber-js/min"
import { displayText } from "./display.ts"
import { InvalidArgument } from "./errors.ts"
import { Text } from "./text.ts"

export const E164 = Schema.String.pipe(
  Schema.pattern(/^\+[1-9]\d{6,14}$/),
  Schema.brand("E164"),
  // Also the validation message: "Expected a phone number in E.164 form ..., actual ..."
  Schema.annotations({
    description: "a phone number in E.164 form: `+`, country code and number, no spaces (e.g. `+14155550100`)"
  })
)
export type E164 = typeof E164.Type

const isE164 = Schema.is(E164)

/**
 * Recent answers of libphonenumber, by trimmed input. Normalising parses twice with it, on every
 * send, and the same numbers recur: a participant is texted again and again.
 * Bounded, the first stored forgotten first.
 */
const recent = new Map<string, Either.Either<E164, string>>()
const RECENT_MAX = 10_000

export const normalizePhone = (input: string): Either.Either<E164, string> => {
  const trimmed = input.trim()
  if (trimmed.length === 0 || trimmed.length > 32 || !/^[+\d\s().-]+$/.test(trimmed)) {
    return Either.left(`"${displayText(trimmed, 32)}" is not a phone number`)
  }
  const known = recent.get(trimmed)
  if (known !== undefined) return known
  const answer = parse(trimmed)
  if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!)
  recent.set(trimmed, answer)
  return answer
}

/** What libphonenumber makes of a trimmed input of phone characters. */
const parse = (trimmed: string): Either.Either<E164, string> => {
  const parsed = parsePhoneNumberFromString(trimmed, trimmed.startsWith("+") ? undefined : "US")
  // Some countries' "possible" lengths fall outside E.164 (at most 15 digits; 7 here at least), and
  // a result must parse back to itself, or sending a stored number back would change it (+49 0...).
  if (
    !parsed || !parsed.isPossible() || !isE164(parsed.number) ||
    parsePhoneNumberFromString(parsed.number)?.number !== parsed.number
  ) {
    return Either.left(`"${displayText(trimmed, 32)}" is not a valid phone number`)
  }
  return Either.right(parsed.number)
}

/** An input field: E.164 or a 10-digit US number with the usual punctuation, decoded to E.164. */
export const Phone = Schema.transformOrFail(Text(32), E164, {
  strict: true,
  decode: (s, _, ast) => Either.mapLeft(normalizePhone(s), (why) => new ParseResult.Type(ast, s, why)),
  encode: ParseResult.succeed
})

/** Digits only, for substring search over phones. */
export const phoneDigits = (s: string): string => s.replace(/\D/g, "")

/**
 * NANP premium-rate numbers (+1 900, +1 976): the callee's carrier bills the caller per minute, the
 * classic toll-fraud destination. The agent never dials or forwards to them.
 */
export const isPremiumRate = (e164: string): boolean => /^\+1(900|976)\d{7}$/.test(e164)

/** The 400 for a premium-rate destination in `field`. */
export const premiumRateProblem = (field: string) =>
  `${field}: premium-rate numbers (+1 900, +1 976) cannot be called or forwarded to`

/** A phone number given by a caller or a carrier; the error names its field. */
export const phoneField = (field: string, raw: string) =>
  Effect.mapError(normalizePhone(raw), (why) => new InvalidArgument({ message: `${field}: ${why}` }))
