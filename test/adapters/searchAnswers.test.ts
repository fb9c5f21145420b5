/**
 * Search's query shapes keep their answers: on a seeded corpus (one workspace, contacts and texts
 * inserted out of time order over three years, a day apart, so message searches cross many of the
 * 30-day buckets they read newest first; timestamps shared so the id breaks ties), every contact search and
 * message search through the SQL stores returns exactly the rows the core rules pick from the whole
 * corpus, newest first. Message search is also checked against the statement it replaced (each
 * match joined to its thread, then sorted), run on the same database. PGlite and Postgres.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { tsQuery } from "../../adapters/sql/conversations.ts"
import type { Contact } from "../../core/contacts/model.ts"
import { matches, searchTerms } from "../../core/contacts/rules.ts"
import { type ContactPage, ContactStore } from "../../core/contacts/store.ts"
import { type ActivityRecord, matchesQuery, searchQuery, type Thread } from "../../core/conversations/model.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { activity, contact, newWorkspace, thread } from "./stores.contract.ts"

type Ports = ConversationStore | ContactStore | WorkspaceStore | SqlClient.SqlClient

/** A small deterministic generator, so a failure names a corpus that can be made again. */
const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed / 2 ** 31
}

/** Words weighted as text is: a few common, most rare (a Zipf-like pick). */
const VOCAB = [
  "the",
  "to",
  "you",
  "your",
  "appointment",
  "tomorrow",
  "order",
  "shipped",
  "refund",
  "invoice",
  "invoices",
  "invoiced",
  "driver",
  "late",
  "pick",
  "up",
  "update",
  "upstairs",
  "dentist",
  "cleaning",
  "cleanings",
  "warranty",
  "plumber",
  "plumbing",
  "table",
  "tab",
  "ready",
  "reservation",
  "thanks",
  "call",
  "back",
  "garfapin",
  "lupintu",
  "sarlupel",
  "48213",
  "7731"
]
const FIRST = ["Maria", "John", "Priya", "Wei", "James", "Leila", "Siobhan", "Dmitri", "Chloé", "Sven", "Ann"]
const LAST = ["Garcia", "Lee", "Patel", "Chen", "Smith", "O'Brien", "Müller", "Okafor", "Tanaka", "Nguyen", "Lee-Smith"]
const COMPANY = ["Redwood Realty", "Acme", "Tidewater Dental", "Northwind Logistics", null, null, null]

const MESSAGE_TERMS = [
  "the",
  "you",
  "appointment",
  "appointment tomorrow",
  "order shipped",
  "refund invoice",
  "pick up",
  "late driver",
  "dentist cleaning",
  "warranty plumber",
  "garfapin the",
  "lupintu",
  "sarl",
  "48213",
  "7731",
  "inv",
  "up",
  "tab",
  "table rea",
  "to",
  "xylophonist",
  "thanks call back",
  "the you",
  "pick u",
  "refund invo",
  "refund invoic",
  "dentist clean",
  "dentist cleanings",
  "table ta",
  "order 482",
  "late up",
  "the upst"
]
const CONTACT_TERMS = [
  "mar",
  "maria garcia",
  "john lee",
  "lee",
  "lee-smith",
  "priya patel",
  "o'brien",
  "müller",
  "chlo",
  "redwood realty",
  "acme",
  "garcia_",
  "ann",
  "4155",
  "415-55",
  "(415) 555",
  "+1 415",
  "xylophonist",
  "dental"
]

const CONTACTS = 1500
const TEXTS = 3000
const THREADS = 30

const seed = Effect.gen(function*() {
  const contacts = yield* ContactStore
  const conversations = yield* ConversationStore
  const ws = yield* newWorkspace
  const next = random(45)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(next() * next() * xs.length)]!
  // Times are shuffled against insertion order, and three rows share each day; every 30th day
  // begins a bucket (messageSearch.ts).
  const ts = (day: number) => new Date((658 * 2_592_000 + day * 86_400) * 1000).toISOString()
  const order = (n: number) => Array.from({ length: n }, (_, i) => i).sort(() => next() - 0.5)

  const people: Array<Contact> = []
  for (const i of order(CONTACTS)) {
    const c = contact(ws, {
      firstName: pick(FIRST),
      lastName: pick(LAST),
      company: pick(COMPANY),
      phones: [{ value: `+1415555${String(i % 10000).padStart(4, "0")}` }],
      createdAt: ts(Math.floor(i / 3)),
      updatedAt: ts(Math.floor(i / 3))
    })
    yield* contacts.insert(c)
    people.push(c)
  }

  const threads: Array<Thread> = []
  for (let i = 0; i < THREADS; i++) threads.push(yield* conversations.insertThread(thread(ws)))
  const texts: Array<ActivityRecord> = []
  for (const i of order(TEXTS)) {
    const words = Array.from({ length: 3 + Math.floor(next() * 8) }, () => pick(VOCAB))
    const a = activity(threads[i % THREADS]!, {
      direction: i % 2 === 0 ? "outbound" : "inbound",
      body: words.join(i % 5 === 0 ? ", " : " "),
      createdAt: ts(Math.floor(i / 3))
    })
    yield* conversations.insertActivity(a)
    texts.push(a)
  }
  return { ws, people, texts }
})

/** Newest first, the id breaking ties, as every search orders its page. */
const newestFirst = <A extends { readonly createdAt: string; readonly id: string }>(xs: ReadonlyArray<A>) =>
  [...xs].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))

const suite = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "300 seconds" })(name, (it) => {
    it.effect("contact and message search answer what the rules pick from the whole corpus", () =>
      Effect.gen(function*() {
        const { people, texts, ws } = yield* seed
        const contacts = yield* ContactStore
        const conversations = yield* ConversationStore
        const sql = yield* SqlClient.SqlClient
        let nonEmpty = 0

        for (const q of CONTACT_TERMS) {
          const terms = searchTerms(q)
          const all = newestFirst(people.filter((c) => matches(c, terms))).map((c) => c.id)
          const want = all.slice(0, 50)
          const got = yield* contacts.list({ workspaceId: ws, terms, limit: 50, after: null, scan: null })
          assert.deepStrictEqual(got.items.map((c) => c.id), want, q)
          if (want.length > 0) nonEmpty++
          // Page by page from a cursor.
          const paged: Array<string> = []
          let after: { createdAt: string; id: string } | null = null
          for (let n = 0; n < 8; n++) {
            const next: ContactPage = yield* contacts.list({ workspaceId: ws, terms, limit: 7, after, scan: null })
            paged.push(...next.items.map((c) => c.id))
            const last = next.items.at(-1)
            if (next.items.length < 7 || last === undefined) break
            after = { createdAt: last.createdAt, id: last.id }
          }
          assert.deepStrictEqual(paged, all.slice(0, 56), `${q}, paged`)
        }

        for (const q of MESSAGE_TERMS) {
          const query = searchQuery(q)!
          for (const limit of [1, 25, 100]) {
            const want = newestFirst(texts.filter((a) => matchesQuery(a.body ?? "", query))).slice(0, limit)
            const got = yield* conversations.search(ws, query, limit)
            assert.deepStrictEqual(got.map((h) => h.id), want.map((a) => a.id), `${q} (${limit})`)
            const before = yield* sql<{ id: string }>`
              SELECT a.id FROM activities a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
              WHERE a.workspace_id = ${ws} AND a.search @@ to_tsquery('simple', ${tsQuery(query)})
              ORDER BY a.created_at DESC, a.id DESC LIMIT ${limit}`
            assert.deepStrictEqual(before.map((r) => r.id), want.map((a) => a.id), `${q} (${limit}), before`)
            if (limit === 25 && want.length > 0) nonEmpty++
          }
        }
        // The corpus is a real test: most terms find something, several fill a page.
        assert.isAbove(nonEmpty, (CONTACT_TERMS.length + MESSAGE_TERMS.length) * 0.7)
      }))
  })

sqlContract<Ports>({
  name: (db) => `search answers: ${db}`,
  adapter: (client) => sqlStores(client) as Layer.Layer<Ports, unknown>,
  suite,
  database: "search_answers"
})
