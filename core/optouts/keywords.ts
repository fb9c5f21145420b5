/**
 * The keywords of an inbound text (CONTRACT "Opt-outs and keywords"): the FCC's 2025
 * consent-revocation words and CTIA's, matched on the whole body, trimmed, case-insensitive, without
 * trailing punctuation; a keyword inside a sentence (`stop please`) is not one.
 */

export type KeywordKind = "stop" | "start" | "help"

export interface Keyword {
  readonly kind: KeywordKind
  /** The word as matched, upper case, spaces as sent collapsed to one (`OPT OUT`). */
  readonly word: string
}

const WORDS: ReadonlyArray<readonly [KeywordKind, ReadonlyArray<string>]> = [
  ["stop", [
    "STOP",
    "STOPALL",
    "STOP ALL",
    "UNSUBSCRIBE",
    "CANCEL",
    "END",
    "QUIT",
    "REVOKE",
    "OPTOUT",
    "OPT OUT",
    "OPT-OUT"
  ]],
  ["start", ["START", "UNSTOP", "YES", "SUBSCRIBE"]],
  ["help", ["HELP", "INFO"]]
]

const byWord: ReadonlyMap<string, KeywordKind> = new Map(
  WORDS.flatMap(([kind, words]) => words.map((w) => [w, kind] as const))
)

/** Every keyword, upper case. */
export const KEYWORDS: ReadonlyArray<string> = [...byWord.keys()]

/** The keyword a text's body is, if it is one. */
export const keywordOf = (body: string | null): Keyword | null => {
  if (body === null) return null
  const word = body.trim().replace(/[\p{P}\s]+$/u, "").replace(/\s+/g, " ").toUpperCase()
  const kind = byWord.get(word)
  return kind === undefined ? null : { kind, word }
}

/**
 * The body as a carrier that matches whole-text keywords reads it (Telnyx: "case and whitespace
 * insensitive"): trimmed, upper case, spaces collapsed, punctuation kept. `Stop.` is the keyword
 * STOP to the service but none to the carrier, which then neither blocks nor answers it.
 */
export const carrierWordOf = (body: string | null): string => (body ?? "").trim().replace(/\s+/g, " ").toUpperCase()

/** What the business is called in its replies, and how to reach it for HELP. */
export interface ReplyContext {
  readonly brand: string
  /** The registration's campaign `helpMessage`, when it has one. */
  readonly helpMessage: string | null
  /** The business phone, else email, else website. */
  readonly contact: string | null
}

/** The service's answer to a keyword (CONTRACT's wording). */
export const replyTo = (kind: KeywordKind, c: ReplyContext): string => {
  switch (kind) {
    case "stop":
      return `${c.brand}: You are unsubscribed and will receive no more messages. Reply START to resubscribe.`
    case "start":
      return `${c.brand}: You are resubscribed. Reply STOP to unsubscribe, HELP for help.`
    case "help":
      return c.helpMessage ??
        `${c.brand}: Reply STOP to unsubscribe. Msg & data rates may apply.${
          c.contact === null ? "" : ` Help: ${c.contact}.`
        }`
  }
}
