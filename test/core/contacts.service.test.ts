/** The Contacts use cases (SPEC "Contacts", "Events", "Pagination") over the in-memory stores. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, TestClock } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { allScopes, type Scope } from "../../core/auth/scopes.ts"
import * as Contacts from "../../core/contacts/service.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import type { DomainError } from "../../core/kernel/errors.ts"
import { layerCursorCodec } from "../../core/kernel/pagination.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import * as ContactTools from "../../core/tools/contacts.ts"
import { contact } from "../adapters/stores.contract.ts"

/** A fresh in-memory database per test. */
const TestLayer = Contacts.layer.pipe(
  Layer.provideMerge(MemoryStores.layer),
  Layer.provideMerge(layerCursorCodec(new Uint8Array(32).fill(1)))
)

const run = <A, E>(self: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) => Effect.provide(self, TestLayer)

const principal = (scopes: ReadonlyArray<Scope> = allScopes, workspaceId = crypto.randomUUID()): Principal => ({
  workspaceId,
  keyId: crypto.randomUUID(),
  kind: "test",
  scopes: new Set(scopes)
})

/** Fails the test unless `self` fails with `tag`; returns the error. */
const failsWith = <R>(tag: DomainError["_tag"], self: Effect.Effect<unknown, DomainError, R>) =>
  Effect.gen(function*() {
    const result = yield* Effect.either(self)
    if (Either.isRight(result)) return assert.fail(`expected ${tag}, got success ${JSON.stringify(result.right)}`)
    assert.strictEqual(result.left._tag, tag, result.left.message)
    return result.left
  })

const events = (p: Principal) =>
  Effect.flatMap(EventOutbox, (o) => o.list(p.workspaceId)).pipe(
    Effect.map((es) => es.map((e) => ({ type: e.type, data: e.data })))
  )

/** Creates contacts one second apart, oldest first; returns their ids oldest first. */
const seed = (p: Principal, names: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const svc = yield* Contacts.Contacts
    const ids: Array<string> = []
    for (const firstName of names) {
      yield* TestClock.adjust("1 second")
      ids.push((yield* svc.create(p, { firstName })).id)
    }
    return ids
  })

/** Every page of a listing, following nextCursor until null. */
const allPages = (p: Principal, params: { q?: string; limit: number }) =>
  Effect.gen(function*() {
    const svc = yield* Contacts.Contacts
    const pages: Array<ReadonlyArray<string>> = []
    let cursor: string | undefined
    for (let i = 0; i < 100; i++) {
      const page = yield* svc.list(p, { ...params, cursor })
      pages.push(page.items.map((c) => c.firstName ?? ""))
      if (page.nextCursor === null) return pages
      cursor = page.nextCursor
    }
    return assert.fail("paging never ended")
  })

describe("Contacts: create, get, update, remove", () => {
  it.effect("create stores a manual contact and emits contact.updated {created}", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      yield* TestClock.adjust("1 hour")
      const created = yield* svc.create(p, {
        firstName: " Ada ",
        lastName: "Lovelace",
        phone: "(415) 555-0100",
        emails: ["ada@example.com"],
        notes: ["n1"],
        properties: { plan: "gold" },
        tags: ["vip", "vip"]
      })
      assert.match(created.id, /^[0-9a-f-]{36}$/)
      assert.deepStrictEqual(created, {
        id: created.id,
        firstName: "Ada",
        lastName: "Lovelace",
        company: null,
        phones: [{ value: "+14155550100" }],
        emails: [{ value: "ada@example.com" }],
        notes: ["n1"],
        properties: { plan: "gold" },
        tags: ["vip"],
        source: "manual",
        createdAt: "1970-01-01T01:00:00.000Z"
      })
      assert.deepStrictEqual(yield* svc.get(p, created.id), created)
      assert.deepStrictEqual(yield* events(p), [{
        type: "contact.updated",
        data: { contactId: created.id, change: "created" }
      }])
    })))

  it.effect("create without an identity field, or with a malformed one, is InvalidArgument and stores nothing", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      yield* failsWith("InvalidArgument", svc.create(p, {}))
      yield* failsWith("InvalidArgument", svc.create(p, { notes: ["x"], tags: ["y"] }))
      yield* failsWith("InvalidArgument", svc.create(p, { firstName: "  " }))
      const e = yield* failsWith(
        "InvalidArgument",
        svc.create(p, { firstName: "Ada", phones: ["+14155550100", "nope"] })
      )
      assert.include(e.message, "phones[1]")
      const e2 = yield* failsWith("InvalidArgument", svc.create(p, { firstName: "Ada", emails: ["bad"] }))
      assert.include(e2.message, "emails[0]")
      assert.deepStrictEqual((yield* svc.list(p, {})).items, [])
      assert.deepStrictEqual(yield* events(p), [])
    })))

  it.effect("update changes only sent fields, replaces arrays wholesale, null clears, and lists the sent fields", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const c = yield* svc.create(p, {
        firstName: "Ada",
        lastName: "Lovelace",
        company: "AE",
        phones: ["+14155550100", "+14155550101"],
        emails: ["ada@example.com"],
        tags: ["a", "b"],
        properties: { x: "1", y: "2" },
        notes: ["first"]
      })
      yield* TestClock.adjust("1 minute")
      const updated = yield* svc.update(p, c.id, { lastName: null, tags: ["c"], properties: { z: "3" }, company: "AE" })
      assert.deepStrictEqual(updated, { ...c, lastName: null, tags: ["c"], properties: { z: "3" } })
      assert.deepStrictEqual(yield* svc.get(p, c.id), updated)
      const phoned = yield* svc.update(p, c.id, { phone: "+14155550102" })
      assert.deepStrictEqual(phoned.phones.map((x) => x.value), ["+14155550102", "+14155550100", "+14155550101"])
      const cleared = yield* svc.update(p, c.id, { phones: [], notes: [] })
      assert.deepStrictEqual([cleared.phones, cleared.notes, cleared.emails], [[], [], [{ value: "ada@example.com" }]])
      assert.strictEqual(cleared.createdAt, c.createdAt)
      assert.deepStrictEqual((yield* events(p)).slice(1), [
        // `company` re-sent with its current value is still listed: touched, not changed
        {
          type: "contact.updated",
          data: { contactId: c.id, change: "updated", fields: ["company", "lastName", "properties", "tags"] }
        },
        { type: "contact.updated", data: { contactId: c.id, change: "updated", fields: ["phone"] } },
        { type: "contact.updated", data: { contactId: c.id, change: "updated", fields: ["notes", "phones"] } }
      ])
    })))

  it.effect("an invalid update is InvalidArgument and changes nothing, with no event", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const c = yield* svc.create(p, { firstName: "Ada", phone: "+14155550100" })
      const e = yield* failsWith(
        "InvalidArgument",
        svc.update(p, c.id, { firstName: "Bob", phones: ["+14155550101", "x"] })
      )
      assert.include(e.message, "phones[1]")
      assert.deepStrictEqual(yield* svc.get(p, c.id), c)
      assert.strictEqual((yield* events(p)).length, 1)
    })))

  it.effect("remove deletes permanently, emits contact.deleted {contactId}, then answers NotFound", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const c = yield* svc.create(p, { firstName: "Ada" })
      assert.deepStrictEqual(yield* svc.remove(p, c.id), { deleted: true })
      yield* failsWith("NotFound", svc.get(p, c.id))
      yield* failsWith("NotFound", svc.update(p, c.id, { firstName: "X" }))
      yield* failsWith("NotFound", svc.remove(p, c.id))
      assert.deepStrictEqual((yield* svc.list(p, {})).items, [])
      assert.deepStrictEqual((yield* events(p)).slice(1), [{ type: "contact.deleted", data: { contactId: c.id } }])
    })))

  it.effect("a malformed or unknown id is NotFound", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      for (const id of ["abc", "", "123", "00000000-0000-0000-0000-00000000000g", crypto.randomUUID()]) {
        yield* failsWith("NotFound", svc.get(p, id))
        yield* failsWith("NotFound", svc.update(p, id, { firstName: "X" }))
        yield* failsWith("NotFound", svc.remove(p, id))
      }
      assert.deepStrictEqual(yield* events(p), [])
    })))

  it.effect("another workspace's contact is NotFound for every operation and stays untouched", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const owner = principal()
      const other = principal()
      const c = yield* svc.create(owner, { firstName: "Ada", phone: "+14155550100" })
      yield* failsWith("NotFound", svc.get(other, c.id))
      yield* failsWith("NotFound", svc.update(other, c.id, { firstName: "Mallory" }))
      yield* failsWith("NotFound", svc.remove(other, c.id))
      assert.deepStrictEqual((yield* svc.list(other, {})).items, [])
      assert.deepStrictEqual((yield* svc.list(other, { q: "ada" })).items, [])
      assert.deepStrictEqual(yield* svc.get(owner, c.id), c)
      assert.deepStrictEqual(yield* events(other), [])
    })))

  // The scope is the capability's (core/tools); the service trusts its caller.
  it.effect("each operation's capability checks its scope and names it in PermissionDenied", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const ws = crypto.randomUUID()
      const full = principal(allScopes, ws)
      const readOnly = principal(["contacts:read"], ws)
      const writeOnly = principal(["contacts:write"], ws)
      const c = yield* svc.create(full, { firstName: "Ada" })
      for (
        const denied of [
          ContactTools.createContact.run(readOnly, { firstName: "B" }),
          ContactTools.updateContact.run(readOnly, { id: c.id, firstName: "B" }),
          ContactTools.deleteContact.run(readOnly, { id: c.id }),
          // the scope is checked before the id: no existence oracle
          ContactTools.deleteContact.run(readOnly, { id: crypto.randomUUID() })
        ]
      ) {
        const e = yield* failsWith("PermissionDenied", denied)
        assert.include(e.message, "contacts:write")
      }
      for (
        const denied of [
          ContactTools.getContact.run(writeOnly, { id: c.id }),
          ContactTools.listContacts.run(writeOnly, {}),
          ContactTools.getContact.run(writeOnly, { id: "nope" })
        ]
      ) {
        const e = yield* failsWith("PermissionDenied", denied)
        assert.include(e.message, "contacts:read")
      }
      assert.deepStrictEqual((yield* ContactTools.getContact.run(readOnly, { id: c.id })).contact, c)
      assert.strictEqual((yield* svc.list(full, {})).items.length, 1)
      assert.strictEqual((yield* events(full)).length, 1)
    })))
})

describe("Contacts: list and paging", () => {
  it.effect("newest created first, as summaries with the primary phone", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      yield* TestClock.adjust("1 second")
      const a = yield* svc.create(p, { firstName: "A", phones: ["+14155550101", "+14155550102"] })
      yield* TestClock.adjust("1 second")
      const b = yield* svc.create(p, { company: "B Corp" })
      const page = yield* svc.list(p, {})
      assert.deepStrictEqual(page, {
        items: [
          { id: b.id, firstName: null, lastName: null, company: "B Corp", phone: null, createdAt: b.createdAt },
          { id: a.id, firstName: "A", lastName: null, company: null, phone: "+14155550101", createdAt: a.createdAt }
        ],
        nextCursor: null
      })
    })))

  it.effect("pages in order with no gaps or repeats; a short last page ends with a null cursor", () =>
    run(Effect.gen(function*() {
      const p = principal()
      yield* seed(p, ["c1", "c2", "c3", "c4", "c5"])
      assert.deepStrictEqual(yield* allPages(p, { limit: 2 }), [["c5", "c4"], ["c3", "c2"], ["c1"]])
    })))

  it.effect("an exactly full last page yields one more request with an empty list and a null cursor", () =>
    run(Effect.gen(function*() {
      const p = principal()
      yield* seed(p, ["c1", "c2", "c3", "c4"])
      assert.deepStrictEqual(yield* allPages(p, { limit: 2 }), [["c4", "c3"], ["c2", "c1"], []])
    })))

  it.effect("a search the index cannot serve examines SEARCH_SCAN contacts a page: a short page goes on with a cursor", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const store = yield* ContactStore
      const p = principal()
      // Oldest first; the oldest and the newest hold "qx".
      const n = Contacts.SEARCH_SCAN + 10
      for (let i = 0; i < n; i++) {
        const firstName = i === 0 || i === n - 1 ? `qxa${i}` : `zz${i}`
        yield* store.insert(
          contact(p.workspaceId, { firstName, createdAt: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString() })
        )
      }
      // Two characters: no trigram, so a window of SEARCH_SCAN a page.
      const first = yield* svc.list(p, { q: "qx" })
      assert.deepStrictEqual(first.items.map((c) => c.firstName), [`qxa${n - 1}`])
      assert.isNotNull(first.nextCursor)
      const second = yield* svc.list(p, { q: "qx", cursor: first.nextCursor! })
      assert.deepStrictEqual([second.items.map((c) => c.firstName), second.nextCursor], [["qxa0"], null])
      // Three: the index finds both at once.
      const indexed = yield* svc.list(p, { q: "qxa" })
      assert.deepStrictEqual([indexed.items.map((c) => c.firstName), indexed.nextCursor], [
        [`qxa${n - 1}`, "qxa0"],
        null
      ])
    })))

  it.effect("default limit is 50", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      yield* seed(p, Array.from({ length: 51 }, (_, i) => `c${i}`))
      const first = yield* svc.list(p, {})
      assert.strictEqual(first.items.length, 50)
      assert.isNotNull(first.nextCursor)
      const second = yield* svc.list(p, { cursor: first.nextCursor! })
      assert.deepStrictEqual(second.items.map((c) => c.firstName), ["c0"])
      assert.isNull(second.nextCursor)
    })))

  it.effect("equal creation times are ordered by id and still paged without gaps", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      // the TestClock does not move: every contact has the same createdAt
      const ids: Array<string> = []
      for (let i = 0; i < 7; i++) ids.push((yield* svc.create(p, { firstName: `same${i}` })).id)
      const seen: Array<string> = []
      let cursor: string | undefined
      do {
        const page = yield* svc.list(p, { limit: 3, cursor })
        seen.push(...page.items.map((c) => c.id))
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined)
      assert.deepStrictEqual(seen, [...ids].sort().reverse())
    })))

  it.effect("pages are stable under concurrent inserts", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      yield* seed(p, ["c1", "c2", "c3", "c4"])
      const first = yield* svc.list(p, { limit: 2 })
      yield* seed(p, ["new"])
      const second = yield* svc.list(p, { limit: 2, cursor: first.nextCursor! })
      assert.deepStrictEqual(second.items.map((c) => c.firstName), ["c2", "c1"])
    })))

  it.effect("search: case-insensitive over names, company and emails; digits over phones", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      yield* TestClock.adjust("1 second")
      yield* svc.create(p, { firstName: "Ada", lastName: "Lovelace", phone: "+14155550100" })
      yield* TestClock.adjust("1 second")
      yield* svc.create(p, { company: "Babbage & Co", email: "charles@Engines.example" })
      yield* TestClock.adjust("1 second")
      yield* svc.create(p, { firstName: "Grace", notes: ["lovelace fan"] })
      const names = (q: string) =>
        svc.list(p, { q }).pipe(Effect.map((page) => page.items.map((c) => c.firstName ?? c.company)))
      assert.deepStrictEqual(yield* names("LOVE"), ["Ada"])
      assert.deepStrictEqual(yield* names("engines"), ["Babbage & Co"])
      assert.deepStrictEqual(yield* names("(415) 555-01"), ["Ada"])
      assert.deepStrictEqual(yield* names("a"), ["Grace", "Babbage & Co", "Ada"])
      assert.deepStrictEqual(yield* names("  "), ["Grace", "Babbage & Co", "Ada"])
      assert.deepStrictEqual(yield* names("zzz"), [])
    })))

  it.effect("a cursor is bound to its q: another q, or none, is InvalidArgument", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      yield* seed(p, ["ann", "anna", "anne", "bob"])
      const page = yield* svc.list(p, { q: "ann", limit: 1 })
      const cursor = page.nextCursor!
      assert.isString(cursor)
      assert.strictEqual((yield* svc.list(p, { q: "ann", limit: 1, cursor })).items.length, 1)
      yield* failsWith("InvalidArgument", svc.list(p, { q: "bob", limit: 1, cursor }))
      yield* failsWith("InvalidArgument", svc.list(p, { limit: 1, cursor }))
      yield* failsWith("InvalidArgument", svc.list(p, { q: "an", limit: 1, cursor }))
      const unfiltered = (yield* svc.list(p, { limit: 1 })).nextCursor!
      yield* failsWith("InvalidArgument", svc.list(p, { q: "ann", limit: 1, cursor: unfiltered }))
    })))

  it.effect("a cursor from another workspace, a modified one and a stale one are InvalidArgument", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const other = principal()
      yield* seed(p, ["a", "b", "c"])
      yield* seed(other, ["x", "y", "z"])
      const cursor = (yield* svc.list(p, { limit: 1 })).nextCursor!
      yield* failsWith("InvalidArgument", svc.list(other, { limit: 1, cursor }))
      const flipped = cursor.slice(0, 5) + (cursor[5] === "A" ? "B" : "A") + cursor.slice(6)
      yield* failsWith("InvalidArgument", svc.list(p, { limit: 1, cursor: flipped }))
      yield* failsWith("InvalidArgument", svc.list(p, { limit: 1, cursor: cursor + "x" }))
      yield* failsWith("InvalidArgument", svc.list(p, { limit: 1, cursor: "not-a-cursor" }))
      // still fine just before it expires, stale one millisecond after 24 hours
      yield* TestClock.adjust("24 hours")
      assert.strictEqual((yield* svc.list(p, { limit: 1, cursor })).items.length, 1)
      yield* TestClock.adjust("1 millis")
      yield* failsWith("InvalidArgument", svc.list(p, { limit: 1, cursor }))
    })))
})

describe("Contacts: placeholders", () => {
  const phone = "+14155550100" as E164

  it.effect("an unknown number gets a placeholder, once, with no event", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const placeholder = yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)
      assert.strictEqual(placeholder.source, "inbound")
      assert.deepStrictEqual(placeholder.phones, [{ value: phone }])
      assert.isNull(placeholder.firstName)
      const again = yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)
      assert.strictEqual(again.id, placeholder.id)
      assert.strictEqual((yield* svc.list(p, {})).items.length, 1)
      assert.deepStrictEqual(yield* events(p), [])
      // a known number resolves to its existing (named) contact
      const named = yield* svc.create(p, { firstName: "Bob", phone: "+14155550199" })
      assert.strictEqual((yield* svc.findOrCreatePlaceholder(p.workspaceId, "+14155550199" as E164)).id, named.id)
    })))

  it.effect("creating a contact with the placeholder's phone adopts it: same id, manual, event created", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const placeholder = yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)
      yield* TestClock.adjust("1 hour")
      const created = yield* svc.create(p, { firstName: "Ada", phone: "(415) 555-0100", tags: ["vip"] })
      assert.strictEqual(created.id, placeholder.id)
      assert.strictEqual(created.source, "manual")
      assert.strictEqual(created.firstName, "Ada")
      assert.deepStrictEqual(created.phones, [{ value: phone }])
      assert.deepStrictEqual(created.tags, ["vip"])
      assert.strictEqual(created.createdAt, placeholder.createdAt)
      assert.deepStrictEqual(yield* svc.get(p, placeholder.id), created)
      assert.strictEqual((yield* svc.list(p, {})).items.length, 1)
      assert.deepStrictEqual(yield* events(p), [{
        type: "contact.updated",
        data: { contactId: placeholder.id, change: "created" }
      }])
    })))

  it.effect("adoption through a secondary phone keeps every number once, the new primary first", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const placeholder = yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)
      const created = yield* svc.create(p, { company: "Acme", phones: ["+14155550111", "415 555 0100"] })
      assert.strictEqual(created.id, placeholder.id)
      assert.deepStrictEqual(created.phones.map((x) => x.value), ["+14155550111", phone])
    })))

  it.effect("a named contact, or another workspace's placeholder, is not adopted", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const elsewhere = yield* svc.findOrCreatePlaceholder(crypto.randomUUID(), phone)
      const first = yield* svc.create(p, { firstName: "Ada", phone })
      assert.notStrictEqual(first.id, elsewhere.id)
      const second = yield* svc.create(p, { firstName: "Ada again", phone })
      assert.notStrictEqual(second.id, first.id)
      // once named, an inbound contact is a real contact
      const q = principal()
      const ph = yield* svc.findOrCreatePlaceholder(q.workspaceId, phone)
      yield* svc.update(q, ph.id, { firstName: "Named" })
      assert.notStrictEqual((yield* svc.create(q, { lastName: "Other", phone })).id, ph.id)
    })))

  it.effect("after a delete, the same number makes a fresh placeholder", () =>
    run(Effect.gen(function*() {
      const svc = yield* Contacts.Contacts
      const p = principal()
      const c = yield* svc.create(p, { firstName: "Ada", phone })
      yield* svc.remove(p, c.id)
      const fresh = yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)
      assert.notStrictEqual(fresh.id, c.id)
      assert.strictEqual(fresh.source, "inbound")
      // the store has only the fresh one
      const store = yield* ContactStore
      assert.deepStrictEqual((yield* store.findByPhones(p.workspaceId, [phone])).map((x) => x.id), [fresh.id])
    })))
})
