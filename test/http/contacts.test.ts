/** SPEC "Contacts" and CONTRACT.md search and cursor decisions, end to end over HTTP. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { makeTestApp } from "../support/app.ts"
import { bearer, expectError, tick, UUID } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let app: App
beforeAll(async () => {
  app = await makeTestApp()
})
afterAll(() => app.close())

/** Each test gets a fresh workspace so lists are exact. */
let key: string
beforeEach(async () => {
  key = (await app.createWorkspace("Contacts test")).key
})

const call = (path: string, init: RequestInit & { json?: unknown } = {}) => {
  const headers = new Headers(init.headers)
  headers.set("authorization", bearer(key).authorization)
  return app.fetch(`/v1/api${path}`, { ...init, headers })
}

const create = async (json: unknown) => {
  const res = await call("/contacts", { method: "POST", json })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(201)
  await tick()
  return body.contact
}

const patch = async (id: string, json: unknown) => {
  const res = await call(`/contacts/${id}`, { method: "PATCH", json })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(Object.keys(body)).toEqual(["contact"])
  return body.contact
}

const list = async (query = "") => {
  const res = await call(`/contacts${query}`)
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(Object.keys(body).sort()).toEqual(["contacts", "nextCursor"])
  return body as { contacts: Array<any>; nextCursor: string | null }
}

const detailFields = [
  "company",
  "createdAt",
  "emails",
  "firstName",
  "id",
  "lastName",
  "notes",
  "phones",
  "properties",
  "source",
  "tags"
]

describe("POST /contacts", () => {
  it("answers 201 {contact} with every detail field", async () => {
    const before = Date.now()
    const res = await call("/contacts", {
      method: "POST",
      json: {
        firstName: "Ada",
        lastName: "Lovelace",
        company: "Analytical Engines",
        phones: [{ value: "+14155550100", label: "mobile" }, "+442071838750"],
        emails: ["ada@example.com", { value: "countess@example.org", label: "work" }],
        notes: ["Met at the expo", "Likes engines"],
        properties: { plan: "gold", region: "uk" },
        tags: ["vip", "engineer"]
      }
    })
    expect(res.status).toBe(201)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    const body = (await res.json()) as any
    expect(Object.keys(body)).toEqual(["contact"])
    const c = body.contact
    expect(Object.keys(c).sort()).toEqual(detailFields)
    expect(c.id).toMatch(UUID)
    expect(c).toMatchObject({
      firstName: "Ada",
      lastName: "Lovelace",
      company: "Analytical Engines",
      phones: [{ value: "+14155550100", label: "mobile" }, { value: "+442071838750" }],
      emails: [{ value: "ada@example.com" }, { value: "countess@example.org", label: "work" }],
      notes: ["Met at the expo", "Likes engines"],
      properties: { plan: "gold", region: "uk" },
      tags: ["vip", "engineer"],
      source: "manual"
    })
    expect(new Date(c.createdAt).toISOString()).toBe(c.createdAt)
    expect(Date.parse(c.createdAt)).toBeGreaterThanOrEqual(before - 1000)
    // The stored record reads back identically.
    const get = await call(`/contacts/${c.id}`)
    expect(get.status).toBe(200)
    expect(await get.json()).toEqual({ contact: c })
  })

  it("fills absent fields with null and empty collections", async () => {
    const c = await create({ company: "Solo Corp" })
    expect(c).toEqual({
      id: c.id,
      firstName: null,
      lastName: null,
      company: "Solo Corp",
      phones: [],
      emails: [],
      notes: [],
      properties: {},
      tags: [],
      source: "manual",
      createdAt: c.createdAt
    })
  })

  it.each([
    ["firstName", { firstName: "A" }],
    ["lastName", { lastName: "B" }],
    ["company", { company: "C" }],
    ["phone", { phone: "+14155550101" }],
    ["phones", { phones: ["+14155550102"] }],
    ["email", { email: "e@example.com" }],
    ["emails", { emails: ["f@example.com"] }]
  ])("accepts %s alone as the identity", async (_, json) => {
    expect((await call("/contacts", { method: "POST", json })).status).toBe(201)
  })

  it("answers 400 when no identity field is given", async () => {
    for (
      const json of [{}, { tags: ["vip"], notes: ["n"], properties: { a: "b" } }, {
        firstName: "  ",
        phones: [],
        emails: []
      }, { firstName: null, company: null }]
    ) {
      const error = await expectError(await call("/contacts", { method: "POST", json }), 400, "invalid_argument")
      expect(error.message, JSON.stringify(json)).toMatch(/firstName/)
    }
    expect((await list()).contacts).toEqual([])
  })

  it("merges the phone and email scalars into the arrays, as the primary", async () => {
    const c = await create({
      firstName: "Grace",
      phone: "+14155550103",
      phones: ["+14155550104"],
      email: "grace@example.com",
      emails: [{ value: "hopper@example.com", label: "work" }]
    })
    expect(c.phones).toEqual([{ value: "+14155550103" }, { value: "+14155550104" }])
    expect(c.emails).toEqual([{ value: "grace@example.com" }, { value: "hopper@example.com", label: "work" }])
    const summary = (await list()).contacts[0]
    expect(summary.phone).toBe("+14155550103")
  })

  it("does not duplicate a scalar already in the array", async () => {
    const c = await create({
      phone: "(415) 555-0105",
      phones: [{ value: "+14155550105", label: "cell" }],
      email: "X@Example.com",
      emails: ["x@example.com"]
    })
    expect(c.phones).toEqual([{ value: "+14155550105", label: "cell" }])
    expect(c.emails).toEqual([{ value: "x@example.com" }])
  })

  it("normalizes a 10-digit US phone to E.164", async () => {
    for (
      const [input, e164] of [
        ["4155550106", "+14155550106"],
        ["(415) 555-0107", "+14155550107"],
        ["415.555.0108", "+14155550108"],
        ["+1 415 555 0109", "+14155550109"]
      ]
    ) {
      const c = await create({ phone: input })
      expect(c.phones, input).toEqual([{ value: e164 }])
    }
    const c = await create({ phones: ["4155550110", { value: "415-555-0111", label: "home" }] })
    expect(c.phones).toEqual([{ value: "+14155550110" }, { value: "+14155550111", label: "home" }])
  })

  it("answers 400 naming the field for an invalid phone", async () => {
    const cases: Array<[unknown, string]> = [
      [{ phone: "12" }, "phone"],
      [{ phone: "not a number" }, "phone"],
      [{ firstName: "A", phone: "555-0100" }, "phone"],
      [{ firstName: "A", phones: ["+14155550112", "abc"] }, "phones[1]"],
      [{ firstName: "A", phones: [{ value: "+1" }] }, "phones[0]"]
    ]
    for (const [json, field] of cases) {
      const error = await expectError(await call("/contacts", { method: "POST", json }), 400, "invalid_argument")
      expect(error.message, JSON.stringify(json)).toContain(field)
    }
  })

  it("answers 400 naming the field for an invalid email", async () => {
    const error = await expectError(
      await call("/contacts", { method: "POST", json: { email: "not-an-email" } }),
      400,
      "invalid_argument"
    )
    expect(error.message).toContain("email")
    const error2 = await expectError(
      await call("/contacts", { method: "POST", json: { firstName: "A", emails: ["a@example.com", "nope"] } }),
      400,
      "invalid_argument"
    )
    expect(error2.message).toContain("emails[1]")
  })
})

describe("GET /contacts/{id}", () => {
  it("answers 200 {contact} and 404 for an unknown id", async () => {
    const c = await create({ firstName: "Get", tags: ["t"] })
    const res = await call(`/contacts/${c.id}`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ contact: c })
    const error = await expectError(await call(`/contacts/${crypto.randomUUID()}`), 404, "not_found")
    expect(error.message).toMatch(/contact/i)
  })
})

describe("PATCH /contacts/{id}", () => {
  const full = {
    firstName: "Alan",
    lastName: "Turing",
    company: "Bletchley",
    phones: [{ value: "+14155550120", label: "work" }, "+14155550121"],
    emails: ["alan@example.com", "turing@example.org"],
    notes: ["first", "second"],
    properties: { a: "1", b: "2" },
    tags: ["x", "y"]
  }

  it("changes only the fields sent", async () => {
    const c = await create(full)
    const updated = await patch(c.id, { lastName: "M. Turing" })
    expect(updated).toEqual({ ...c, lastName: "M. Turing" })
    const again = await patch(c.id, {})
    expect(again).toEqual(updated)
    const res = await call(`/contacts/${c.id}`)
    expect(((await res.json()) as any).contact).toEqual(updated)
  })

  it("replaces arrays and properties wholesale", async () => {
    const c = await create(full)
    const updated = await patch(c.id, {
      phones: ["+14155550122"],
      emails: [],
      notes: ["only"],
      properties: { c: "3" },
      tags: []
    })
    expect(updated).toEqual({
      ...c,
      phones: [{ value: "+14155550122" }],
      emails: [],
      notes: ["only"],
      properties: { c: "3" },
      tags: []
    })
  })

  it("merges a phone or email scalar into the current arrays", async () => {
    const c = await create(full)
    const updated = await patch(c.id, { phone: "+14155550123", email: "alan@example.com" })
    expect(updated.phones).toEqual([{ value: "+14155550123" }, ...c.phones])
    expect(updated.emails).toEqual(c.emails)
  })

  it("clears firstName, lastName and company with null", async () => {
    const c = await create(full)
    const updated = await patch(c.id, { firstName: null, lastName: null, company: null })
    expect(updated).toEqual({ ...c, firstName: null, lastName: null, company: null })
  })

  it.each(["phones", "emails", "notes", "tags", "properties", "phone", "email"])(
    "answers 400 for %s: null, naming it",
    async (field) => {
      const c = await create(full)
      const error = await expectError(
        await call(`/contacts/${c.id}`, { method: "PATCH", json: { [field]: null } }),
        400,
        "invalid_argument"
      )
      expect(error.message).toContain(field)
      const res = await call(`/contacts/${c.id}`)
      expect(((await res.json()) as any).contact).toEqual(c)
    }
  )

  it("answers 400 for an invalid phone and changes nothing", async () => {
    const c = await create(full)
    const error = await expectError(
      await call(`/contacts/${c.id}`, {
        method: "PATCH",
        json: { firstName: "Changed", phones: ["+14155550124", "bogus"] }
      }),
      400,
      "invalid_argument"
    )
    expect(error.message).toContain("phones[1]")
    const res = await call(`/contacts/${c.id}`)
    expect(((await res.json()) as any).contact).toEqual(c)
  })

  it("answers 404 for an unknown id", async () => {
    await expectError(
      await call(`/contacts/${crypto.randomUUID()}`, { method: "PATCH", json: { firstName: "x" } }),
      404,
      "not_found"
    )
  })
})

describe("DELETE /contacts/{id}", () => {
  it("answers {deleted: true}, then 404 everywhere", async () => {
    const c = await create({ firstName: "Gone" })
    const res = await call(`/contacts/${c.id}`, { method: "DELETE" })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ deleted: true })
    await expectError(await call(`/contacts/${c.id}`), 404, "not_found")
    await expectError(await call(`/contacts/${c.id}`, { method: "PATCH", json: { firstName: "x" } }), 404, "not_found")
    await expectError(await call(`/contacts/${c.id}`, { method: "DELETE" }), 404, "not_found")
    expect((await list()).contacts).toEqual([])
  })
})

describe("GET /contacts", () => {
  it("lists summaries, newest created first", async () => {
    const a = await create({
      firstName: "First",
      phones: ["+14155550130", "+14155550131"],
      emails: ["first@example.com"]
    })
    const b = await create({ lastName: "Second", company: "Co" })
    const c = await create({ email: "third@example.com" })
    const { contacts, nextCursor } = await list()
    expect(nextCursor).toBeNull()
    expect(contacts).toEqual([
      { id: c.id, firstName: null, lastName: null, company: null, phone: null, createdAt: c.createdAt },
      { id: b.id, firstName: null, lastName: "Second", company: "Co", phone: null, createdAt: b.createdAt },
      { id: a.id, firstName: "First", lastName: null, company: null, phone: "+14155550130", createdAt: a.createdAt }
    ])
    for (const s of contacts) {
      expect(Object.keys(s).sort()).toEqual(["company", "createdAt", "firstName", "id", "lastName", "phone"])
    }
  })

  it("reflects updates in the summary and the primary phone", async () => {
    const a = await create({ firstName: "Old", phone: "+14155550132" })
    await patch(a.id, { firstName: "New", phones: ["+14155550133", "+14155550132"] })
    const { contacts } = await list()
    expect(contacts[0]).toMatchObject({ id: a.id, firstName: "New", phone: "+14155550133" })
  })

  describe("q", () => {
    let ids: Record<string, string>
    beforeEach(async () => {
      ids = {
        ada: (await create({ firstName: "Ada", lastName: "Lovelace", emails: ["ada@engines.example"] })).id,
        grace: (await create({ firstName: "Grace", lastName: "Hopper", company: "Navy", phone: "+14155550140" })).id,
        acme: (await create({ company: "ACME Widgets", phones: ["+12125550199"] })).id,
        mail: (await create({ email: "Someone@Mailbox.example" })).id
      }
    })
    const search = async (q: string) => (await list(`?q=${encodeURIComponent(q)}`)).contacts.map((c) => c.id)

    it("matches substrings of names, company and emails, case-insensitively", async () => {
      expect(await search("ada")).toEqual([ids.ada])
      expect(await search("LOVE")).toEqual([ids.ada])
      expect(await search("opp")).toEqual([ids.grace])
      expect(await search("navy")).toEqual([ids.grace])
      expect(await search("widget")).toEqual([ids.acme])
      expect(await search("engines.example")).toEqual([ids.ada])
      expect(await search("mailbox")).toEqual([ids.mail])
      expect(await search("a")).toEqual([ids.mail, ids.acme, ids.grace, ids.ada])
      expect(await search("zzz")).toEqual([])
    })

    it("matches digit substrings of phones, ignoring punctuation", async () => {
      expect(await search("555014")).toEqual([ids.grace])
      expect(await search("0140")).toEqual([ids.grace])
      expect(await search("(212) 555")).toEqual([ids.acme])
      expect(await search("+1415")).toEqual([ids.grace])
      expect(await search("555")).toEqual([ids.acme, ids.grace])
      expect(await search("9999")).toEqual([])
    })

    it("treats a blank q as no filter", async () => {
      expect(await search("   ")).toHaveLength(4)
    })
  })

  describe("cursor paging", () => {
    it("pages 5 contacts by 2 as 2, 2, 1 then null, newest first, without overlap", async () => {
      const made: Array<string> = []
      for (let i = 0; i < 5; i++) made.push((await create({ firstName: `Page ${i}` })).id)
      const pages: Array<Array<string>> = []
      let cursor: string | null = null
      do {
        const page: { contacts: Array<any>; nextCursor: string | null } = await list(
          `?limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
        )
        pages.push(page.contacts.map((c) => c.id))
        cursor = page.nextCursor
        if (pages.length < 3) expect(typeof cursor).toBe("string")
      } while (cursor !== null && pages.length < 10)
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
      expect(pages.flat()).toEqual([...made].reverse())
    })

    it("yields one more empty page with null after an exactly full last page", async () => {
      const made: Array<string> = []
      for (let i = 0; i < 4; i++) made.push((await create({ firstName: `Full ${i}` })).id)
      const p1 = await list("?limit=2")
      const p2 = await list(`?limit=2&cursor=${encodeURIComponent(p1.nextCursor!)}`)
      expect(p2.nextCursor).not.toBeNull()
      const p3 = await list(`?limit=2&cursor=${encodeURIComponent(p2.nextCursor!)}`)
      expect(p3).toEqual({ contacts: [], nextCursor: null })
      expect([...p1.contacts, ...p2.contacts].map((c) => c.id)).toEqual([...made].reverse())
    })

    it("pages a search with the same q, and is stable under inserts", async () => {
      const made: Array<string> = []
      for (let i = 0; i < 3; i++) made.push((await create({ company: `Paged Co ${i}` })).id)
      await create({ company: "Other" })
      const p1 = await list("?q=paged&limit=2")
      expect(p1.contacts.map((c) => c.id)).toEqual([made[2], made[1]])
      await create({ company: "Paged Co new" })
      const p2 = await list(`?q=paged&limit=2&cursor=${encodeURIComponent(p1.nextCursor!)}`)
      expect(p2).toEqual({ contacts: [expect.objectContaining({ id: made[0] })], nextCursor: null })
    })

    it("defaults to 50 per page", async () => {
      for (let i = 0; i < 51; i++) {
        await call("/contacts", { method: "POST", json: { firstName: `Bulk ${i}` } })
        await tick()
      }
      const p1 = await list()
      expect(p1.contacts).toHaveLength(50)
      expect(p1.nextCursor).not.toBeNull()
      const p2 = await list(`?cursor=${encodeURIComponent(p1.nextCursor!)}`)
      expect(p2.contacts.map((c) => c.firstName)).toEqual(["Bulk 0"])
      expect(p2.nextCursor).toBeNull()
    })
  })
})
