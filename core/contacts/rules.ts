/**
 * Pure contact rules (SPEC "Contacts"): identity requirement, scalar merge, wholesale replacement,
 * null clearing, placeholder detection and the search semantics shared by every store.
 */
import { Either } from "effect"
import { normalizePhone, phoneDigits } from "../kernel/phone.ts"
import type { Contact, ContactInput, EmailEntry, PhoneEntry } from "./model.ts"

/** An email address, loosely: something@something.tld, no spaces. */
export const EMAIL = /^[^\s@\u0000]+@[^\s@\u0000]+\.[^\s@\u0000]+$/

type Entry = string | { readonly value: string; readonly label?: string | undefined }
const entry = (e: Entry) => (typeof e === "string" ? { value: e } : e)
const withLabel = <T extends { value: string }>(value: string, label: string | undefined): T =>
  (label === undefined ? { value } : { value, label }) as T

export const normalizePhones = (
  entries: ReadonlyArray<Entry>,
  field: string
): Either.Either<ReadonlyArray<PhoneEntry>, string> => {
  const out: Array<PhoneEntry> = []
  for (const [i, raw] of entries.entries()) {
    const e = entry(raw)
    const n = normalizePhone(e.value)
    if (Either.isLeft(n)) return Either.left(`${field}[${i}]: ${n.left}`)
    if (!out.some((p) => p.value === n.right)) out.push(withLabel(n.right, e.label))
  }
  return Either.right(out)
}

export const normalizeEmails = (
  entries: ReadonlyArray<Entry>,
  field: string
): Either.Either<ReadonlyArray<EmailEntry>, string> => {
  const out: Array<EmailEntry> = []
  for (const [i, raw] of entries.entries()) {
    const e = entry(raw)
    const value = e.value.trim()
    if (!EMAIL.test(value)) return Either.left(`${field}[${i}]: "${value.slice(0, 64)}" is not an email address`)
    if (!out.some((x) => x.value.toLowerCase() === value.toLowerCase())) out.push(withLabel(value, e.label))
  }
  return Either.right(out)
}

/** Places a convenience scalar first (it becomes the primary) unless the list already holds it. */
const mergeScalar = <T extends { value: string }>(
  list: ReadonlyArray<T>,
  scalar: T | undefined,
  same: (a: string, b: string) => boolean
): ReadonlyArray<T> => {
  if (scalar === undefined) return list
  return list.some((x) => same(x.value, scalar.value)) ? list : [scalar, ...list]
}

const nonEmpty = (s: string | null | undefined) => typeof s === "string" && s.trim().length > 0

export const hasIdentity = (input: ContactInput): boolean =>
  nonEmpty(input.firstName) ||
  nonEmpty(input.lastName) ||
  nonEmpty(input.company) ||
  input.phone !== undefined ||
  input.email !== undefined ||
  (input.phones?.length ?? 0) > 0 ||
  (input.emails?.length ?? 0) > 0

/** The fields a create or update writes, after validation; `undefined` means untouched. */
export interface ContactChanges {
  readonly firstName?: string | null
  readonly lastName?: string | null
  readonly company?: string | null
  readonly phones?: ReadonlyArray<PhoneEntry>
  readonly emails?: ReadonlyArray<EmailEntry>
  readonly notes?: ReadonlyArray<string>
  readonly properties?: Readonly<Record<string, string>>
  readonly tags?: ReadonlyArray<string>
}

const trimOrNull = (s: string | null | undefined) =>
  s === undefined ? undefined : s === null ? null : s.trim().length === 0 ? null : s.trim()

/**
 * Validates an input against the contact it changes (`current` is empty for a create). Arrays and
 * `properties` replace wholesale; `phone`/`email` scalars merge into the resulting arrays.
 */
export const applyInput = (
  current: Pick<Contact, "phones" | "emails">,
  input: ContactInput
): Either.Either<ContactChanges, string> =>
  Either.gen(function*() {
    const phones = input.phones === undefined ? undefined : yield* normalizePhones(input.phones, "phones")
    const emails = input.emails === undefined ? undefined : yield* normalizeEmails(input.emails, "emails")
    const phone = input.phone === undefined ? undefined : (yield* normalizePhones([input.phone], "phone"))[0]
    const email = input.email === undefined ? undefined : (yield* normalizeEmails([input.email], "email"))[0]
    const mergedPhones = phones === undefined && phone === undefined
      ? undefined
      : mergeScalar(phones ?? current.phones, phone, (a, b) => a === b)
    const mergedEmails = emails === undefined && email === undefined
      ? undefined
      : mergeScalar(emails ?? current.emails, email, (a, b) => a.toLowerCase() === b.toLowerCase())
    const changes: { -readonly [K in keyof ContactChanges]: ContactChanges[K] } = {}
    const first = trimOrNull(input.firstName)
    const last = trimOrNull(input.lastName)
    const company = trimOrNull(input.company)
    if (first !== undefined) changes.firstName = first
    if (last !== undefined) changes.lastName = last
    if (company !== undefined) changes.company = company
    if (mergedPhones !== undefined) changes.phones = mergedPhones
    if (mergedEmails !== undefined) changes.emails = mergedEmails
    if (input.notes !== undefined) changes.notes = input.notes
    if (input.properties !== undefined) changes.properties = input.properties
    if (input.tags !== undefined) changes.tags = [...new Set(input.tags)]
    return changes
  })

/** A placeholder: auto-created from inbound traffic and never given a name. */
export const isAdoptablePlaceholder = (c: Contact): boolean =>
  c.source === "inbound" && c.firstName === null && c.lastName === null && c.company === null

// ---- Search semantics (CONTRACT.md), shared by the memory store and the SQL columns ----

/**
 * Separators in search text are spelled as upper-case letters. pg_trgm indexes letters and digits
 * only, so with the separators as they are, "garcia_" or "van der" is looked up by the trigrams of
 * its words alone (plus word-boundary trigrams that nearly every row holds) and thousands of rows are
 * rechecked. Lower-cased text never holds an upper-case ASCII letter, so the map is one-to-one: a
 * substring match is the same match before and after it. pg_trgm lower-cases what it indexes, so the
 * commonest separators get the letters rarest in names (space Q, "." X, "@" Z, "_" J, "-" K), and
 * trigrams spanning a separator stay narrow. Migration 0007 applies the same map in SQL
 * (`translate`); a test holds the two identical.
 */
export const SEARCH_SEPARATORS = " .@_-+'&,/()!#$%*=?^`{|}~;"
export const SEARCH_SEPARATOR_LETTERS = "QXZJKVWYFBGHPMCDULNORSTEAI"
const SEPARATOR = /[ .@_\-+'&,/()!#$%*=?^`{|}~;]/g
const foldSearch = (text: string) =>
  text.toLowerCase().replace(SEPARATOR, (ch) => SEARCH_SEPARATOR_LETTERS[SEARCH_SEPARATORS.indexOf(ch)]!)

/** Text searched by substring: names, company and emails, lower-cased, separators folded (above). */
export const searchText = (c: Pick<Contact, "firstName" | "lastName" | "company" | "emails">): string =>
  foldSearch(
    [c.firstName, c.lastName, c.company, ...c.emails.map((e) => e.value)]
      .filter((s): s is string => s !== null && s.length > 0)
      .join(" ")
  )

/** Digits of every phone, space separated so a match never spans two numbers. */
export const searchDigits = (c: Pick<Contact, "phones">): string => c.phones.map((p) => phoneDigits(p.value)).join(" ")

export interface SearchTerms {
  readonly text: string
  /** Set when the query looks like a phone number fragment (digits and phone punctuation only). */
  readonly digits: string | null
}

export const searchTerms = (q: string): SearchTerms => {
  const trimmed = q.trim()
  const digits = /^[+\d\s().-]+$/.test(trimmed) && /\d/.test(trimmed) ? phoneDigits(trimmed) : null
  return { text: foldSearch(trimmed), digits }
}

/**
 * Whether the trigram index can find the terms' matches (a run of 3 letters or digits in the text, and
 * in the digits when set). Without one, a search reads contacts newest first until it fills the page,
 * which for a rare short term is the whole workspace: it then examines a bounded window per page.
 */
export const indexable = (terms: SearchTerms): boolean =>
  /[\p{L}\p{N}]{3}/u.test(terms.text) && (terms.digits === null || terms.digits.length >= 3)

export const matches = (c: Contact, terms: SearchTerms): boolean =>
  searchText(c).includes(terms.text) || (terms.digits !== null && searchDigits(c).includes(terms.digits))
