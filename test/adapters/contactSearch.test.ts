/**
 * Contact search on SQL (a LIKE over search text whose separators are folded into upper-case letters,
 * core/contacts/rules.ts) must answer exactly what the memory store answers with plain substring
 * matching: punctuation, several words, LIKE wildcards and upper case in the query included, over
 * pages of two. Migration 0007's `translate` must fold text exactly as the app does.
 */
import { SqlClient } from "@effect/sql"
import { Effect, FastCheck as fc, Layer, Redacted } from "effect"
import { afterAll, describe, expect, inject, it } from "vitest"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { LETTERS, SEPARATORS } from "../../adapters/sql/migrations/0007_search_separators.ts"
import { Contact, type ContactSummary } from "../../core/contacts/model.ts"
import { searchTerms, searchText } from "../../core/contacts/rules.ts"
import { type ContactPage, ContactStore } from "../../core/contacts/store.ts"
import { freshPglite } from "../support/pglite.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"

const WS = "00000000-0000-7000-8000-000000000001"
const names = [
  "Ada Lovelace",
  "Alan Turing",
  "Grace Hopper",
  "Adele Goldberg",
  "Barbara Liskov",
  "Radia Perlman",
  "Ken Thompson",
  "Dennis Ritchie",
  "Ada Yonath",
  "Linus Torvalds",
  "Margaret Hamilton",
  "Adam Smith"
]
const contacts: Array<Contact> = names.map((n, i) => {
  const [firstName, lastName] = n.split(" ") as [string, string]
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
  return Contact.make({
    id: `00000000-0000-7000-8000-${String(i + 100).padStart(12, "0")}`,
    workspaceId: WS,
    firstName,
    lastName,
    company: i % 3 === 0 ? "Analytical Engines" : i === 4 ? "100% Pure & Co." : null,
    phones: [{ value: `+1415555${String(1000 + i)}` }],
    emails: i % 2 === 0
      ? [{ value: `${firstName}.${lastName}@example.com`.toLowerCase() }]
      : i % 5 === 1
      ? [{ value: `${lastName}_${i}@mail.org`.toLowerCase() }]
      : [],
    source: "manual",
    createdAt: at,
    updatedAt: at
  })
})
const queries = [
  "ada",
  "a",
  "engines",
  "zzz",
  "on",
  "555",
  "5551003",
  "o",
  "ADA",
  "ada lovelace",
  "a l",
  "ada.",
  ".l",
  "_",
  "turing_",
  "n_1",
  "%",
  "100%",
  "% pure",
  "@",
  "e.com",
  "&",
  "lovelace@example",
  "analytical engines",
  "s a",
  "zzz ada",
  "a_",
  "\\"
]

const run = (stores: Layer.Layer<ContactStore, unknown>) =>
  Effect.gen(function*() {
    const store = yield* ContactStore
    for (const c of contacts) yield* store.insert(c)
    const out: Record<string, Array<Array<string>>> = {}
    for (const q of queries) {
      // Page through with limit 2, so every query is checked across cursor pages too.
      const pages: Array<Array<string>> = []
      let after: { createdAt: string; id: string } | null = null
      for (;;) {
        const page: ContactPage = yield* store.list({
          workspaceId: WS,
          terms: searchTerms(q),
          limit: 2,
          after,
          scan: null
        })
        const rows: ReadonlyArray<ContactSummary> = page.items
        pages.push(rows.map((r) => r.firstName!))
        const last = rows[rows.length - 1]
        if (rows.length < 2 || !last) break
        after = { createdAt: last.createdAt, id: last.id }
      }
      out[q] = pages
    }
    return out
  }).pipe(Effect.provide(stores), Effect.runPromise)

const contactStore = (client: Layer.Layer<any, any>) => sqlStores(client) as Layer.Layer<ContactStore, unknown>

describe("SQL contact search equals the memory store's substring search", () => {
  const dbs: Array<{ drop: () => Promise<void> }> = []
  afterAll(async () => {
    for (const d of dbs) await d.drop()
  })

  it("on PGlite", async () => {
    const expected = await run(MemoryStores.layer as Layer.Layer<ContactStore, unknown>)
    expect(expected["ada"]!.flat()).toEqual(["Adam", "Ada", "Ada"])
    expect(expected["ada lovelace"]!.flat()).toEqual(["Ada"])
    expect(expected["100%"]!.flat()).toEqual(["Barbara"])
    expect(expected["%"]!.flat()).toEqual(["Barbara"])
    expect(await run(contactStore(freshPglite("migrated")))).toEqual(expected)
  }, 60_000)

  it("migration 0007's translate folds stored text exactly as searchText does", async () => {
    const samples = fc.sample(fc.string({ unit: "grapheme", maxLength: 24 }), 300).concat([
      SEPARATORS,
      "O'Brien & Sons, Inc.",
      "a_b%c\\d"
    ])
    const folded = await Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const out: Array<string> = []
      for (const s of samples) {
        const rows = yield* sql<{ t: string }>`SELECT translate(${s.toLowerCase()}, ${SEPARATORS}, ${LETTERS}) AS t`
        out.push(rows[0]!.t)
      }
      return out
    }).pipe(Effect.provide(freshPglite("empty")), Effect.runPromise)
    expect(folded).toEqual(samples.map((s) => searchText({ firstName: s, lastName: null, company: null, emails: [] })))
  }, 60_000)

  const url = inject("postgresUrl")
  it.runIf(url !== null || process.env.CI === "true")("on Postgres", async () => {
    if (url === null) throw new Error("CI needs Postgres")
    const db = await freshDatabase(url, "search")
    dbs.push(db)
    const expected = await run(MemoryStores.layer as Layer.Layer<ContactStore, unknown>)
    expect(await run(contactStore(Postgres.layer({ url: Redacted.make(db.url) })))).toEqual(expected)
  }, 60_000)
})
