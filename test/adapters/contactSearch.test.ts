/**
 * Contact search on SQL runs in two steps (a newest-first window, then the trigram index for older
 * rows). With a tiny window, every query below crosses from one step to the other; the results must
 * equal the memory store's, which filters everything in one pass.
 */
import { Effect, Layer, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { afterAll, describe, expect, inject, it } from "vitest"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as Pglite from "../../adapters/pglite/PgliteClient.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"
import type { Contact } from "../../core/contacts/model.ts"
import { searchTerms } from "../../core/contacts/rules.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { freshDatabase } from "../support/postgres.ts"

const WS = "00000000-0000-7000-8000-000000000001"
const names = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Adele Goldberg", "Barbara Liskov", "Radia Perlman", "Ken Thompson", "Dennis Ritchie", "Ada Yonath", "Linus Torvalds", "Margaret Hamilton", "Adam Smith"]
const contacts: Array<Contact> = names.map((n, i) => {
  const [firstName, lastName] = n.split(" ") as [string, string]
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
  return {
    id: `00000000-0000-7000-8000-${String(i + 100).padStart(12, "0")}`,
    workspaceId: WS, firstName, lastName, company: i % 3 === 0 ? "Analytical Engines" : null,
    phones: [{ value: `+1415555${String(1000 + i)}` }], emails: [], notes: [], properties: {}, tags: [],
    source: "manual", createdAt: at, updatedAt: at
  }
})
const queries = ["ada", "a", "engines", "zzz", "on", "555", "5551003", "o"]

const run = (stores: Layer.Layer<ContactStore, unknown>) =>
  Effect.gen(function* () {
    const store = yield* ContactStore
    for (const c of contacts) yield* store.insert(c)
    const out: Record<string, Array<Array<string>>> = {}
    for (const q of queries) {
      // Page through with limit 2 so cursors cross the window boundary too.
      const pages: Array<Array<string>> = []
      let after: { createdAt: string; id: string } | null = null
      for (;;) {
        const rows: ReadonlyArray<Contact> = yield* store.list({ workspaceId: WS, terms: searchTerms(q), limit: 2, after })
        pages.push(rows.map((r) => r.firstName!))
        const last = rows[rows.length - 1]
        if (rows.length < 2 || !last) break
        after = { createdAt: last.createdAt, id: last.id }
      }
      out[q] = pages
    }
    return out
  }).pipe(Effect.provide(stores), Effect.runPromise)

const sqlStores = (client: Layer.Layer<any, any>) =>
  SqlStores.makeLayer({ searchWindow: 3 }).pipe(Layer.provide(Migrate.layer), Layer.provide(client)) as Layer.Layer<ContactStore, unknown>

describe("two-step contact search equals the one-pass memory search", () => {
  const dbs: Array<{ drop: () => Promise<void> }> = []
  afterAll(async () => {
    for (const d of dbs) await d.drop()
  })

  it("on PGlite", async () => {
    const expected = await run(MemoryStores.layer as Layer.Layer<ContactStore, unknown>)
    expect(expected["ada"]!.flat()).toEqual(["Adam", "Ada", "Ada"])
    expect(await run(sqlStores(Pglite.layer({})))).toEqual(expected)
  }, 60_000)

  const url = inject("postgresUrl")
  it.runIf(url !== null || process.env.CI === "true")("on Postgres", async () => {
    if (url === null) throw new Error("CI needs Postgres")
    const db = await freshDatabase(url, "search")
    dbs.push(db)
    const expected = await run(MemoryStores.layer as Layer.Layer<ContactStore, unknown>)
    expect(await run(sqlStores(PgClient.layer({ url: Redacted.make(db.url) })))).toEqual(expected)
  }, 60_000)
})
