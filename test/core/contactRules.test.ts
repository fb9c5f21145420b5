/** SPEC "Contact input", "PATCH /contacts/{id}" and CONTRACT "GET /contacts?q=" as pure rules. */
import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc, Schema } from "effect"
import { Contact, ContactInput, toSummary } from "../../core/contacts/model.ts"
import {
  applyInput,
  type ContactChanges,
  hasIdentity,
  isAdoptablePlaceholder,
  matches,
  searchTerms
} from "../../core/contacts/rules.ts"

const EMPTY = { phones: [], emails: [] }
const A = "+14155550100"
const B = "+14155550101"
const C = "+14155550102"

const ok = (current: Pick<Contact, "phones" | "emails">, input: ContactInput): ContactChanges => {
  const r = applyInput(current, input)
  if (Either.isLeft(r)) assert.fail(`expected success, got ${r.left}`)
  return r.right
}
const err = (input: ContactInput, current: Pick<Contact, "phones" | "emails"> = EMPTY): string => {
  const r = applyInput(current, input)
  if (Either.isRight(r)) assert.fail(`expected a rejection of ${JSON.stringify(input)}`)
  return r.left
}

const contact = (patch: Partial<Contact> = {}): Contact =>
  Contact.make({
    id: "00000000-0000-4000-8000-000000000001",
    workspaceId: "00000000-0000-4000-8000-0000000000aa",
    source: "manual",
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
    ...patch
  })

describe("identity requirement", () => {
  it("any one identity field is enough", () => {
    for (
      const input of [
        { firstName: "Ada" },
        { lastName: "Lovelace" },
        { company: "Analytical Engines" },
        { phone: "4155550100" },
        { phones: ["4155550100"] },
        { phones: [{ value: "4155550100", label: "work" }] },
        { email: "ada@example.com" },
        { emails: ["ada@example.com"] }
      ] satisfies Array<ContactInput>
    ) {
      assert.isTrue(hasIdentity(input), JSON.stringify(input))
    }
  })

  it("non-identity fields, blanks, nulls and empty lists are not", () => {
    for (
      const input of [
        {},
        { firstName: "   " },
        { firstName: null, lastName: null, company: null },
        { lastName: "" },
        { phones: [], emails: [] },
        { notes: ["met at the fair"], tags: ["vip"], properties: { plan: "gold" } }
      ] satisfies Array<ContactInput>
    ) {
      assert.isFalse(hasIdentity(input), JSON.stringify(input))
    }
  })
})

describe("phones", () => {
  it("are normalized to E.164 and keep their labels", () => {
    const changes = ok(EMPTY, { phones: ["(415) 555-0100", { value: "415.555.0101", label: "work" }] })
    assert.deepStrictEqual(changes.phones, [{ value: A }, { value: B, label: "work" }])
  })

  it("the phone scalar becomes the primary (first) number", () => {
    assert.deepStrictEqual(ok(EMPTY, { phone: "415 555 0100" }).phones, [{ value: A }])
    assert.deepStrictEqual(ok(EMPTY, { phones: [B, C], phone: "(415) 555-0100" }).phones, [{ value: A }, { value: B }, {
      value: C
    }])
  })

  it("the phone scalar is not duplicated when the list already holds it, in any format", () => {
    assert.deepStrictEqual(ok(EMPTY, { phones: [A], phone: "415-555-0100" }).phones, [{ value: A }])
    assert.deepStrictEqual(ok(EMPTY, { phones: ["4155550100", "+1 415 555 0100"] }).phones, [{ value: A }])
  })

  it("on update, the scalar merges into the current numbers; a list replaces them wholesale", () => {
    const current = { phones: [{ value: A, label: "home" }, { value: B }], emails: [] }
    assert.deepStrictEqual(ok(current, { phone: C }).phones, [{ value: C }, { value: A, label: "home" }, { value: B }])
    assert.deepStrictEqual(ok(current, { phone: A }).phones, current.phones)
    assert.deepStrictEqual(ok(current, { phones: [C] }).phones, [{ value: C }])
    assert.deepStrictEqual(ok(current, { phones: [] }).phones, [])
    assert.isUndefined(ok(current, { firstName: "Ada" }).phones)
  })

  it("an invalid number is rejected naming the field and its index", () => {
    assert.match(err({ phones: [A, "not a phone"] }), /^phones\[1\]: /)
    assert.match(err({ phones: [{ value: "12" }] }), /^phones\[0\]: /)
    assert.match(err({ phone: "banana" }), /^phone\b/)
    assert.include(err({ phones: [A, B, "555"] }), "phones[2]")
  })
})

describe("emails", () => {
  it("are trimmed, validated and deduplicated case-insensitively, keeping the first spelling", () => {
    const changes = ok(EMPTY, {
      emails: [" Ada@Example.com ", "ada@example.COM", { value: "ada@work.org", label: "work" }]
    })
    assert.deepStrictEqual(changes.emails, [{ value: "Ada@Example.com" }, { value: "ada@work.org", label: "work" }])
  })

  it("the email scalar becomes primary unless already present in another case", () => {
    assert.deepStrictEqual(ok(EMPTY, { emails: ["b@x.io"], email: "a@x.io" }).emails, [{ value: "a@x.io" }, {
      value: "b@x.io"
    }])
    assert.deepStrictEqual(ok(EMPTY, { emails: ["a@x.io"], email: "A@X.IO" }).emails, [{ value: "a@x.io" }])
    const current = { phones: [], emails: [{ value: "a@x.io" }] }
    assert.deepStrictEqual(ok(current, { email: "A@x.io" }).emails, [{ value: "a@x.io" }])
    assert.deepStrictEqual(ok(current, { email: "c@x.io" }).emails, [{ value: "c@x.io" }, { value: "a@x.io" }])
    assert.deepStrictEqual(ok(current, { emails: [] }).emails, [])
  })

  it("an invalid address is rejected naming the field and its index", () => {
    assert.match(err({ emails: ["ok@example.com", "nope"] }), /^emails\[1\]: /)
    assert.match(err({ emails: ["a@b"] }), /^emails\[0\]: /)
    assert.match(err({ email: "two@@example.com" }), /^email\b/)
    assert.match(err({ emails: ["a b@example.com"] }), /^emails\[0\]/)
    // Postgres text cannot hold NUL: it must be a 400, not a store failure
    assert.match(err({ emails: ["a\u0000b@example.com"] }), /^emails\[0\]/)
  })
})

describe("names, arrays and properties", () => {
  it("only sent fields appear in the changes", () => {
    assert.deepStrictEqual(ok(EMPTY, {}), {})
    assert.deepStrictEqual(Object.keys(ok(EMPTY, { lastName: "L", tags: [] })).sort(), ["lastName", "tags"])
  })

  it("names are trimmed; null or blank clears them", () => {
    assert.deepStrictEqual(ok(EMPTY, { firstName: "  Ada ", lastName: null, company: "   " }), {
      firstName: "Ada",
      lastName: null,
      company: null
    })
  })

  it("notes, tags and properties replace wholesale; tags lose duplicates", () => {
    const changes = ok(EMPTY, { notes: ["b", "a", "b"], tags: ["vip", "x", "vip"], properties: { plan: "gold" } })
    assert.deepStrictEqual(changes.notes, ["b", "a", "b"])
    assert.deepStrictEqual(changes.tags, ["vip", "x"])
    assert.deepStrictEqual(changes.properties, { plan: "gold" })
    assert.deepStrictEqual(ok(EMPTY, { properties: {} }).properties, {})
  })
})

describe("ContactInput schema", () => {
  const decode = Schema.decodeUnknownEither(ContactInput)

  it("accepts strings or {value, label} for phones and emails", () => {
    assert.isTrue(
      Either.isRight(decode({ phones: ["+14155550100", { value: "+14155550101", label: "work" }], emails: ["a@b.co"] }))
    )
  })

  it("rejects unknown fields and wrong types", () => {
    assert.isTrue(Either.isLeft(decode({ firstName: "Ada", nickname: "A" })))
    assert.isTrue(Either.isLeft(decode({ firstName: 5 })))
    assert.isTrue(Either.isLeft(decode({ properties: { n: 1 } })))
    assert.isTrue(Either.isLeft(decode({ tags: "vip" })))
  })

  it("rejects NUL characters in text (Postgres cannot store them)", () => {
    for (
      const bad of [
        { firstName: "A\u0000" },
        { company: "\u0000" },
        { notes: ["x\u0000y"] },
        { tags: ["\u0000"] },
        { properties: { "k\u0000": "v" } },
        { properties: { k: "v\u0000" } },
        { phones: [{ value: "+14155550100", label: "w\u0000" }] }
      ]
    ) {
      assert.isTrue(Either.isLeft(decode(bad)), JSON.stringify(bad))
    }
  })
})

describe("placeholders", () => {
  it("only a nameless inbound contact is adoptable", () => {
    assert.isTrue(isAdoptablePlaceholder(contact({ source: "inbound", phones: [{ value: A }] })))
    assert.isFalse(isAdoptablePlaceholder(contact({ source: "inbound", firstName: "Ada" })))
    assert.isFalse(isAdoptablePlaceholder(contact({ source: "inbound", company: "Acme" })))
    assert.isFalse(isAdoptablePlaceholder(contact({ source: "manual" })))
    assert.isFalse(isAdoptablePlaceholder(contact({ source: "hubspot" })))
  })

  it("the summary's phone is the primary number", () => {
    assert.strictEqual(toSummary(contact({ phones: [{ value: B }, { value: A }] })).phone, B)
    assert.isNull(toSummary(contact()).phone)
  })
})

describe("search semantics", () => {
  const ada = contact({
    firstName: "Ada",
    lastName: "Lovelace",
    company: "Analytical Engines Ltd",
    emails: [{ value: "ada@Engines.example" }],
    phones: [{ value: A }, { value: "+442079460958" }],
    notes: ["secret note"],
    tags: ["vip"],
    properties: { color: "purple" }
  })
  const m = (q: string) => matches(ada, searchTerms(q))

  it("case-insensitive substring over first name, last name, company and emails", () => {
    for (const q of ["ada", "ADA", "love", "LACE", "analytical", "engines ltd", "@engines.EX", "ada@engines.example"]) {
      assert.isTrue(m(q), q)
    }
  })

  it("does not search notes, tags, properties or the source", () => {
    for (const q of ["secret", "vip", "purple", "color", "manual"]) assert.isFalse(m(q), q)
  })

  it("digit substring over phones when q looks like a phone fragment", () => {
    for (const q of ["555-0100", "(415) 555", "+1 415", "4155550100", "14155550100", "2079 4609", "+44 20"]) {
      assert.isTrue(m(q), q)
    }
    // digits of two different numbers are never joined
    assert.isFalse(m("0100442"))
    // a query with letters is not a phone fragment
    assert.isFalse(m("tel 555"))
  })

  it("searchTerms trims, lower-cases and folds separators; digits only for phone-shaped queries", () => {
    assert.deepStrictEqual(searchTerms("  Ada "), { text: "ada", digits: null })
    assert.deepStrictEqual(searchTerms("(415) 555-01"), { text: "G415HQ555K01", digits: "41555501" })
    assert.deepStrictEqual(searchTerms("+1"), { text: "V1", digits: "1" })
    assert.deepStrictEqual(searchTerms("---"), { text: "KKK", digits: null })
    assert.deepStrictEqual(searchTerms("abc123"), { text: "abc123", digits: null })
    assert.deepStrictEqual(searchTerms("Van der_Berg@x.io"), { text: "vanQderJbergZxXio", digits: null })
  })

  it("folded separators never collide with text: only the same separator matches", () => {
    const c = contact({ firstName: "Ana", lastName: "Garcia_Lopez", emails: [{ value: "ana.garcia@example.com" }] })
    for (const q of ["garcia_", "a.g", "ana garcia", "garcia@ex"]) assert.isTrue(matches(c, searchTerms(q)), q)
    // the letters that spell separators are never matched by the letters themselves, nor one separator by another
    for (const q of ["anaqgarcia", "garcia.l", "ana_garcia", "garcia lopez", "a-g"]) {
      assert.isFalse(matches(c, searchTerms(q)), q)
    }
  })

  it.prop(
    "any substring of a name matches, in any case",
    [fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim().length > 0), fc.nat(), fc.nat(), fc.boolean()],
    ([name, i, j, upper]) => {
      const c = contact({ lastName: name })
      const start = i % name.length
      const end = start + 1 + (j % (name.length - start))
      const q = name.slice(start, end)
      if (q.trim().length === 0) return
      // a query is trimmed before matching, so only interior text is searched for
      assert.isTrue(matches(c, searchTerms(upper ? q.toUpperCase() : q)), JSON.stringify({ name, q }))
    }
  )
})
