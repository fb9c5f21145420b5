/**
 * The store-port contract: one suite, run unchanged against every adapter (memory, PGlite, Postgres)
 * by stores.test.ts. The adapter's layer is built once per suite; every test isolates itself with
 * fresh workspace ids, since tenant isolation is part of each port.
 */
import { assert, layer, type Vitest } from "@effect/vitest"
import { Deferred, Duration, Effect, Either, Fiber, Layer, Option } from "effect"
import type { Principal } from "../../core/auth/principal.ts"
import { allScopes } from "../../core/auth/scopes.ts"
import type { LedgerStore } from "../../core/billing/store.ts"
import { Contact, type ContactSummary } from "../../core/contacts/model.ts"
import { searchTerms } from "../../core/contacts/rules.ts"
import * as Contacts from "../../core/contacts/service.ts"
import { type ContactPage, ContactStore, type Position } from "../../core/contacts/store.ts"
import type { ActivityRecord, Thread } from "../../core/conversations/model.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { event } from "../../core/events/catalog.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { OutboxSignal } from "../../core/events/signal.ts"
import type { DomainError } from "../../core/kernel/errors.ts"
import type { CursorCodec } from "../../core/kernel/pagination.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import type { MailOutbox } from "../../core/mail/store.ts"
import { MemberStore } from "../../core/members/store.ts"
import { type NumberRecord, NumberStore, numberTypeOf, type WorkspaceNumber } from "../../core/numbers/model.ts"
import { WebhookStore } from "../../core/webhooks/store.ts"
import { defaultBilling, defaultTexting, type Workspace } from "../../core/workspaces/model.ts"
import * as Workspaces from "../../core/workspaces/service.ts"
import { type ApiKeyRecord, ApiKeyStore, WorkspaceStore } from "../../core/workspaces/store.ts"
import { endpointRecord } from "../support/webhooks.ts"

/** What an adapter must provide. */
export type StorePorts =
  | WorkspaceStore
  | ApiKeyStore
  | NumberStore
  | ContactStore
  | ConversationStore
  | EventOutbox
  | LedgerStore
  | MailOutbox
  | MemberStore
  | OutboxSignal
  | Transactor
  | CursorCodec
  | WebhookStore

class Boom {
  readonly _tag = "Boom"
}

export const uuid = () => crypto.randomUUID()
/** Distinct, ordered timestamps with millisecond detail (what every adapter must keep). */
/** A fixed instant plus `seconds`, with milliseconds, as stores return it. */
export const ts = (seconds: number) => new Date(Date.UTC(2024, 0, 1) + seconds * 1000 + 123).toISOString()

const workspace = (name = "W"): Workspace => ({
  id: uuid(),
  name,
  billing: defaultBilling,
  ...defaultTexting,
  createdAt: ts(0)
})

export const newWorkspace = Effect.gen(function*() {
  const w = workspace()
  yield* (yield* WorkspaceStore).insert(w)
  return w.id
})

export const thread = (workspaceId: string, patch: Partial<Thread> = {}): Thread => ({
  id: uuid(),
  workspaceId,
  inboxId: uuid(),
  numberE164: "+14155550100",
  participant: freshE164(),
  contactId: null,
  status: "open",
  assigneeUid: null,
  lastActivityAt: ts(0),
  preview: null,
  unread: 0,
  createdAt: ts(0),
  ...patch
})

export const activity = (t: Thread, patch: Partial<ActivityRecord> = {}): ActivityRecord => ({
  id: uuid(),
  workspaceId: t.workspaceId,
  conversationId: t.id,
  type: "message",
  direction: "outbound",
  authorUid: null,
  body: "hello",
  media: [],
  deliveryStatus: "queued",
  carrierMessageId: null,
  call: null,
  aiTags: [],
  callTranscript: null,
  createdAt: ts(0),
  ...patch
})

export const contact = (workspaceId: string, patch: Partial<Contact> = {}): Contact =>
  Contact.make({ id: uuid(), workspaceId, source: "manual", createdAt: ts(0), updatedAt: ts(0), ...patch })

export const number = (e164: string, patch: Partial<WorkspaceNumber> = {}): WorkspaceNumber => ({
  e164: e164 as E164,
  type: "local",
  voiceMode: "app",
  agentId: null,
  forwardTo: null,
  assignedUserId: null,
  status: "active",
  ...patch
})

/** A new workspace holds these numbers, as a purchase or the admin API's seeding would; its id. */
export const hold = (e164s: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const workspaceId = yield* newWorkspace
    const store = yield* NumberStore
    for (const e of e164s) yield* store.insert(workspaceId, number(e, { type: numberTypeOf(e) }), uuid())
    return workspaceId
  })

/** A phone number no other test (or earlier run against the same database) has used. */
export const freshE164 = () => `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`

const insertAll = (contacts: ReadonlyArray<Contact>) =>
  Effect.flatMap(ContactStore, (store) => Effect.forEach(contacts, store.insert, { discard: true }))

const label = (c: Pick<Contact, "firstName" | "lastName" | "company" | "id">) =>
  c.firstName ?? c.lastName ?? c.company ?? c.id

const search = (workspaceId: string, q: string) =>
  Effect.flatMap(
    ContactStore,
    (store) => store.list({ workspaceId, terms: searchTerms(q), limit: 100, after: null, scan: null })
  ).pipe(Effect.map(({ items }) => items.map(label)))

/** Follows the keyset through every page of `limit` (examining at most `scan` contacts a page), and the pages' sizes. */
const pageThrough = (workspaceId: string, limit: number, q?: string, scan: number | null = null) =>
  Effect.gen(function*() {
    const store = yield* ContactStore
    const seen: Array<ContactSummary> = []
    const sizes: Array<number> = []
    let after: Position | null = null
    for (let i = 0; i < 100; i++) {
      const page: ContactPage = yield* store.list({
        workspaceId,
        terms: q === undefined ? null : searchTerms(q),
        limit,
        after,
        scan
      })
      const { examinedTo, items } = page
      assert.isAtMost(items.length, limit)
      seen.push(...items)
      sizes.push(items.length)
      const last: ContactSummary | undefined = items[items.length - 1]
      if (items.length === limit && last !== undefined) after = { createdAt: last.createdAt, id: last.id }
      else if (examinedTo !== null) after = examinedTo
      else return Object.assign(seen, { sizes })
    }
    return assert.fail("paging never ended")
  })

const newestFirst = (a: Contact, b: Contact) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1

const failsWith = <R>(tag: DomainError["_tag"], self: Effect.Effect<unknown, DomainError, R>) =>
  Effect.gen(function*() {
    const result = yield* Effect.either(self)
    if (Either.isRight(result)) return assert.fail(`expected ${tag}, got success`)
    assert.strictEqual(result.left._tag, tag, result.left.message)
    return result.left
  })

export interface ContractOptions<R> {
  readonly timeout?: Duration.DurationInput
  /** Adapter-specific tests sharing the same instance. */
  readonly extra?: (it: Vitest.MethodsNonLive<StorePorts | R, true>) => void
}

export const storesContract = <R = never>(
  name: string,
  adapter: Layer.Layer<StorePorts | R, unknown>,
  options: ContractOptions<R> = {}
) =>
  layer(adapter, { excludeTestServices: true, timeout: options.timeout ?? "60 seconds" })(name, (it) => {
    // ---------------------------------------------------------------- WorkspaceStore
    it.effect("WorkspaceStore: insert, get, update and count", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        const before = yield* store.count
        const w: Workspace = {
          id: uuid(),
          name: "Acme ✓",
          billing: { ...defaultBilling, plan: null, ownerEmail: "owner@acme.example", billedVia: "app_store" },
          textingSegmentsPerMinute: 300,
          quietHours: null,
          createdAt: ts(42)
        }
        yield* store.insert(w)
        assert.strictEqual(yield* store.count, before + 1)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.get(w.id)), w)
        const next: Workspace = {
          ...w,
          name: "Acme 2",
          billing: { ...w.billing, plan: "pro", trial: false },
          textingSegmentsPerMinute: 4500,
          quietHours: { start: "22:00", end: "07:30" }
        }
        yield* store.update(next)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.get(w.id)), next)
        assert.strictEqual(yield* store.count, before + 1)
        assert.isTrue(Option.isNone(yield* store.get(uuid())))
      }))

    it.effect("WorkspaceStore: list gives every workspace, oldest first", () =>
      Effect.gen(function*() {
        const store = yield* WorkspaceStore
        // Far in the future: after every workspace other tests (or earlier runs) left in the store.
        const later = { ...workspace("later"), createdAt: "2999-01-01T00:00:02.123Z" }
        const earlier = { ...workspace("earlier"), createdAt: "2999-01-01T00:00:01.123Z" }
        yield* store.insert(later)
        yield* store.insert(earlier)
        const all = yield* store.list
        assert.strictEqual(all.length, yield* store.count)
        assert.deepStrictEqual(all.slice(-2), [earlier, later])
      }))

    // ---------------------------------------------------------------- ApiKeyStore
    it.effect("ApiKeyStore: findByHash finds the inserted record, and only it", () =>
      Effect.gen(function*() {
        const keys = yield* ApiKeyStore
        const ws = yield* newWorkspace
        const record: ApiKeyRecord = {
          id: uuid(),
          workspaceId: ws,
          kind: "live",
          scopes: ["numbers:read", "contacts:read"],
          name: "server",
          hash: uuid().replace(/-/g, "") + uuid().replace(/-/g, ""),
          createdAt: ts(1),
          revokedAt: null
        }
        const other: ApiKeyRecord = {
          ...record,
          id: uuid(),
          kind: "test",
          scopes: [...allScopes],
          name: null,
          hash: record.hash.split("").reverse().join("")
        }
        yield* keys.insert(record)
        yield* keys.insert(other)
        assert.deepStrictEqual(yield* keys.findByHash(record.hash), Option.some(record))
        assert.deepStrictEqual(yield* keys.findByHash(other.hash), Option.some(other))
        assert.isTrue(Option.isNone(yield* keys.findByHash("0".repeat(64))))
      }))

    it.effect("ApiKeyStore: revoke returns the key, is idempotent and keeps the first time", () =>
      Effect.gen(function*() {
        const keys = yield* ApiKeyStore
        const ws = yield* newWorkspace
        const record: ApiKeyRecord = {
          id: uuid(),
          workspaceId: ws,
          kind: "test",
          scopes: ["contacts:write"],
          name: null,
          hash: `${uuid()}${uuid()}`.replace(/-/g, ""),
          createdAt: ts(1),
          revokedAt: null
        }
        yield* keys.insert(record)
        assert.deepStrictEqual(yield* keys.revoke(record.id, ts(10)), Option.some({ ...record, revokedAt: ts(10) }))
        assert.deepStrictEqual(yield* keys.revoke(record.id, ts(20)), Option.some({ ...record, revokedAt: ts(10) }))
        assert.deepStrictEqual(yield* keys.findByHash(record.hash), Option.some({ ...record, revokedAt: ts(10) }))
        assert.isTrue(Option.isNone(yield* keys.revoke(uuid(), ts(30))))
      }))

    it.effect("ApiKeyStore: get and list per workspace, revoked keys included, oldest first", () =>
      Effect.gen(function*() {
        const keys = yield* ApiKeyStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const key = (workspaceId: string, at: number): ApiKeyRecord => ({
          id: uuid(),
          workspaceId,
          kind: "live",
          scopes: ["contacts:read"],
          name: `k${at}`,
          hash: `${uuid()}${uuid()}`.replace(/-/g, ""),
          createdAt: ts(at),
          revokedAt: null
        })
        const [second, first, other] = [key(a, 2), key(a, 1), key(b, 1)]
        for (const k of [second, first, other]) yield* keys.insert(k)
        yield* keys.revoke(first.id, ts(5))
        const revoked = { ...first, revokedAt: ts(5) }
        assert.deepStrictEqual(yield* keys.list(a), [revoked, second])
        assert.deepStrictEqual(yield* keys.list(b), [other])
        assert.deepStrictEqual(yield* keys.get(first.id), Option.some(revoked))
        assert.isTrue(Option.isNone(yield* keys.get(uuid())))
      }))

    // ---------------------------------------------------------------- NumberStore
    it.effect("NumberStore: insert and list per workspace, every field kept", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const n1 = number(freshE164())
        const n2 = number(freshE164(), {
          type: "toll_free",
          voiceMode: "forward",
          forwardTo: "+14155550000",
          agentId: uuid(),
          assignedUserId: "user-7",
          status: "suspended"
        })
        const n3 = number(freshE164())
        yield* numbers.insert(a, n1, uuid())
        yield* numbers.insert(a, n2, uuid())
        yield* numbers.insert(b, n3, uuid())
        const byE164 = (ns: ReadonlyArray<WorkspaceNumber>) => [...ns].sort((x, y) => (x.e164 < y.e164 ? -1 : 1))
        assert.deepStrictEqual(byE164(yield* numbers.list(a)), byE164([n1, n2]))
        assert.deepStrictEqual(yield* numbers.list(b), [n3])
        assert.deepStrictEqual(yield* numbers.list(yield* newWorkspace), [])
      }))

    it.effect("NumberStore: remove takes one of the workspace's numbers, and only its own", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const [kept, removed] = [
          number(freshE164()),
          number(freshE164(), { voiceMode: "forward", forwardTo: "+14155550000" })
        ]
        yield* numbers.insert(a, kept, uuid())
        yield* numbers.insert(a, removed, uuid())
        assert.isTrue(Option.isNone(yield* numbers.remove(b, removed.e164)))
        assert.deepStrictEqual(yield* numbers.remove(a, removed.e164), Option.some(removed))
        assert.isTrue(Option.isNone(yield* numbers.remove(a, removed.e164)))
        assert.deepStrictEqual(yield* numbers.list(a), [kept])
        assert.isTrue(Option.isNone(yield* numbers.findByE164(removed.e164)))
        // Free again for any workspace.
        yield* numbers.insert(b, removed, uuid())
      }))

    it.effect("NumberStore: listActive gives the workspace's active numbers with their inboxes", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const active = [number(freshE164()), number(freshE164(), { type: "toll_free" })]
        const inboxes = [uuid(), uuid()]
        yield* numbers.insert(a, active[0]!, inboxes[0]!)
        yield* numbers.insert(a, number(freshE164(), { status: "suspended" }), uuid())
        // Added with a test key: not ordered at the carrier.
        yield* numbers.insert(a, active[1]!, inboxes[1]!, false)
        yield* numbers.insert(b, number(freshE164()), uuid())
        const byE164 = (ns: ReadonlyArray<NumberRecord>) =>
          [...ns].sort((x, y) => (x.number.e164 < y.number.e164 ? -1 : 1))
        const expected = active.map((n, i) => ({
          workspaceId: a,
          inboxId: inboxes[i]!,
          ordered: i === 0,
          campaignAssignment: null,
          number: n
        }))
        assert.deepStrictEqual(byE164(yield* numbers.listActive(a)), byE164(expected))
        assert.deepStrictEqual(yield* numbers.findByE164(active[1]!.e164), Option.some(expected[1]!))
        assert.deepStrictEqual(yield* numbers.listActive(yield* newWorkspace), [])
      }))

    it.effect("NumberStore: a number's campaign assignment starts unasked and reads back as set", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const [n, other] = [number(freshE164()), number(freshE164())]
        yield* numbers.insert(a, n, uuid())
        yield* numbers.insert(b, other, uuid())
        const assignment = (e164: string) =>
          Effect.map(numbers.findByE164(e164), (found) => Option.getOrThrow(found).campaignAssignment)
        assert.strictEqual(yield* assignment(n.e164), null)
        for (const state of ["pending", "assigned", "failed", null] as const) {
          yield* numbers.setCampaignAssignment(n.e164, state)
          assert.strictEqual(yield* assignment(n.e164), state)
          assert.strictEqual((yield* numbers.listActive(a))[0]!.campaignAssignment, state)
        }
        yield* numbers.setCampaignAssignment(n.e164, "assigned")
        assert.strictEqual(yield* assignment(other.e164), null)
        // An unknown number is no error, and changes nothing.
        yield* numbers.setCampaignAssignment(freshE164(), "pending")
        assert.deepStrictEqual(yield* numbers.list(a), [n])
      }))

    it.effect("NumberStore: markOrdered orders the workspace's own test number once; not another's, an ordered one or an unknown one", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const [testNumber, bought] = [number(freshE164()), number(freshE164())]
        yield* numbers.insert(a, testNumber, uuid(), false)
        yield* numbers.insert(a, bought, uuid())
        const ordered = (e164: string) =>
          Effect.map(numbers.findByE164(e164), (found) => Option.getOrThrow(found).ordered)
        assert.isFalse(yield* numbers.markOrdered(b, testNumber.e164))
        assert.isFalse(yield* ordered(testNumber.e164))
        assert.isTrue(yield* numbers.markOrdered(a, testNumber.e164))
        assert.isTrue(yield* ordered(testNumber.e164))
        assert.isFalse(yield* numbers.markOrdered(a, testNumber.e164))
        assert.isFalse(yield* numbers.markOrdered(a, bought.e164))
        assert.isFalse(yield* numbers.markOrdered(a, freshE164()))
        assert.deepStrictEqual((yield* numbers.listActive(a)).map((n) => n.ordered), [true, true])
      }))

    it.effect("NumberStore: a number already held, by any workspace, fails with taken", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const n = number(freshE164())
        yield* numbers.insert(a, n, uuid())
        assert.deepStrictEqual(
          yield* Effect.either(numbers.insert(b, { ...n, type: "toll_free" }, uuid())),
          Either.left("taken" as const)
        )
        assert.deepStrictEqual(yield* Effect.either(numbers.insert(a, n, uuid())), Either.left("taken" as const))
        assert.deepStrictEqual(yield* numbers.list(a), [n])
        assert.deepStrictEqual(yield* numbers.list(b), [])
      }))

    it.effect("NumberStore: of two racing claims on one number exactly one wins", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const n = number(freshE164())
        // both claims are built before either runs, as a batch or two requests would do
        const claims = [numbers.insert(a, n, uuid()), numbers.insert(b, n, uuid())]
        const results = yield* Effect.all(claims.map(Effect.either), { concurrency: "unbounded" })
        assert.deepStrictEqual(results.filter(Either.isLeft).map((r) => r.left), ["taken"])
        const owners = [...(yield* numbers.list(a)), ...(yield* numbers.list(b))]
        assert.deepStrictEqual(owners, [n])
        const winner = Either.isRight(results[0]!) ? a : b
        assert.deepStrictEqual(yield* numbers.list(winner), [n])
      }))

    it.effect("NumberStore: taken names the numbers any workspace holds, whatever their status", () =>
      Effect.gen(function*() {
        const numbers = yield* NumberStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const [held, suspended, otherWorkspace, free] = [freshE164(), freshE164(), freshE164(), freshE164()]
        yield* numbers.insert(a, number(held), uuid())
        yield* numbers.insert(a, number(suspended, { status: "suspended" }), uuid())
        yield* numbers.insert(b, number(otherWorkspace), uuid())
        const taken = yield* numbers.taken([free, held, suspended, otherWorkspace, free])
        assert.deepStrictEqual([...taken].sort(), [held, suspended, otherWorkspace].sort())
        assert.deepStrictEqual([...(yield* numbers.taken([free]))], [])
        assert.deepStrictEqual([...(yield* numbers.taken([]))], [])
      }))

    // ---------------------------------------------------------------- ContactStore
    it.effect("ContactStore: insert and get round-trip every field", () =>
      Effect.gen(function*() {
        const store = yield* ContactStore
        const ws = uuid()
        const c = contact(ws, {
          firstName: "Zoë",
          lastName: "O'Brien",
          company: "Ünïcode & Sons",
          phones: [{ value: "+14155550100", label: "work" }, { value: "+442079460958" }],
          emails: [{ value: "zoe@example.com" }, { value: "Z@Work.example", label: "work" }],
          notes: ["first", "second \"quoted\"", "ünï 🎉"],
          properties: { zeta: "last", alpha: "first", "with space": "v" },
          tags: ["vip", "b", "a"],
          source: "hubspot",
          createdAt: ts(5),
          updatedAt: ts(6)
        })
        yield* store.insert(c)
        assert.deepStrictEqual(yield* store.get(ws, c.id), Option.some(c))
        const bare = contact(ws, { company: "Bare", source: null })
        yield* store.insert(bare)
        assert.deepStrictEqual(yield* store.get(ws, bare.id), Option.some(bare))
        assert.isTrue(Option.isNone(yield* store.get(ws, uuid())))
      }))

    it.effect("ContactStore: update replaces the record; remove deletes it once", () =>
      Effect.gen(function*() {
        const store = yield* ContactStore
        const ws = uuid()
        const c = contact(ws, {
          firstName: "Ada",
          phones: [{ value: "+14155550100" }],
          tags: ["x"],
          properties: { a: "1" },
          createdAt: ts(1),
          updatedAt: ts(1)
        })
        yield* store.insert(c)
        const next: Contact = {
          ...c,
          firstName: null,
          lastName: "Lovelace",
          company: "AE",
          phones: [],
          emails: [{ value: "ada@example.com" }],
          notes: ["n"],
          properties: { b: "2" },
          tags: [],
          source: "manual",
          updatedAt: ts(2)
        }
        yield* store.update(next)
        assert.deepStrictEqual(yield* store.get(ws, c.id), Option.some(next))
        assert.deepStrictEqual(yield* search(ws, "lovelace"), ["Lovelace"])
        assert.deepStrictEqual(yield* search(ws, "ada"), ["Lovelace"]) // via the new email
        assert.deepStrictEqual(yield* search(ws, "4155550100"), []) // the old phone is gone from search
        assert.isTrue(yield* store.remove(ws, c.id))
        assert.isFalse(yield* store.remove(ws, c.id))
        assert.isTrue(Option.isNone(yield* store.get(ws, c.id)))
        assert.deepStrictEqual(yield* store.findByPhones(ws, ["+14155550100"]), [])
        assert.deepStrictEqual(
          yield* store.list({ workspaceId: ws, terms: null, limit: 10, after: null, scan: null }),
          { items: [], examinedTo: null }
        )
      }))

    it.effect("ContactStore: no method reaches another workspace's contact", () =>
      Effect.gen(function*() {
        const store = yield* ContactStore
        const [mine, theirs] = [uuid(), uuid()]
        const c = contact(mine, { firstName: "Ada", phones: [{ value: "+14155550123" }], createdAt: ts(1) })
        yield* store.insert(c)
        assert.isTrue(Option.isNone(yield* store.get(theirs, c.id)))
        yield* store.update({ ...c, workspaceId: theirs, firstName: "Mallory" })
        assert.isTrue(Option.isNone(yield* store.get(theirs, c.id)))
        assert.isFalse(yield* store.remove(theirs, c.id))
        assert.deepStrictEqual(yield* store.findByPhones(theirs, ["+14155550123"]), [])
        assert.deepStrictEqual(
          yield* store.list({ workspaceId: theirs, terms: null, limit: 10, after: null, scan: null }),
          { items: [], examinedTo: null }
        )
        assert.deepStrictEqual(yield* search(theirs, "ada"), [])
        assert.deepStrictEqual(yield* search(theirs, "555"), [])
        assert.deepStrictEqual(yield* store.get(mine, c.id), Option.some(c))
        assert.deepStrictEqual(yield* search(mine, "mallory"), [])
      }))

    it.effect("ContactStore: findByPhones matches any listed number exactly, oldest first", () =>
      Effect.gen(function*() {
        const store = yield* ContactStore
        const ws = uuid()
        const x = contact(ws, {
          firstName: "X",
          phones: [{ value: "+14155550100" }, { value: "+14155550101", label: "work" }],
          createdAt: ts(2)
        })
        const y = contact(ws, { firstName: "Y", phones: [{ value: "+14155550102" }], createdAt: ts(3) })
        const z = contact(ws, {
          firstName: "Z",
          phones: [{ value: "+14155550101", label: "mobile" }],
          createdAt: ts(1)
        })
        const none = contact(ws, { firstName: "N", emails: [{ value: "+14155550100@example.com" }], createdAt: ts(0) })
        yield* insertAll([x, y, z, none])
        const names = (phones: ReadonlyArray<string>) =>
          store.findByPhones(ws, phones).pipe(Effect.map((cs) => cs.map(label)))
        assert.deepStrictEqual(yield* names(["+14155550101"]), ["Z", "X"])
        assert.deepStrictEqual(yield* names(["+14155550102", "+14155550100"]), ["X", "Y"])
        assert.deepStrictEqual(yield* names(["+14155550100", "+14155550101"]), ["Z", "X"])
        assert.deepStrictEqual(yield* names(["+1415555010"]), [])
        assert.deepStrictEqual(yield* names(["4155550100"]), [])
        assert.deepStrictEqual(yield* names([]), [])
        assert.deepStrictEqual(yield* store.findByPhones(ws, ["+14155550102"]), [y])
      }))

    it.effect("ContactStore: list is newest first, ties broken by id, and the keyset pages without gaps", () =>
      Effect.gen(function*() {
        const ws = uuid()
        const contacts = [
          ...[1, 2, 3, 4, 5, 6].map((i) => contact(ws, { firstName: `c${i}`, createdAt: ts(i) })),
          // three with one and the same createdAt
          ...[1, 2, 3].map((i) => contact(ws, { firstName: `same${i}`, createdAt: ts(4) }))
        ]
        yield* insertAll(contacts)
        const expected = [...contacts].sort(newestFirst)
        const store = yield* ContactStore
        const { items: all } = yield* store.list({ workspaceId: ws, terms: null, limit: 100, after: null, scan: null })
        assert.deepStrictEqual(all.map((c) => c.id), expected.map((c) => c.id))
        assert.deepStrictEqual(all.slice(0, 2).map(label), ["c6", "c5"])
        for (const limit of [1, 2, 3, 4, 9, 10]) {
          assert.deepStrictEqual(
            (yield* pageThrough(ws, limit)).map((c) => c.id),
            expected.map((c) => c.id),
            `limit ${limit}`
          )
        }
        // `after` excludes the position itself and everything newer
        const pivot = expected[4]!
        const { items: rest } = yield* store.list({
          workspaceId: ws,
          terms: null,
          limit: 100,
          after: { createdAt: pivot.createdAt, id: pivot.id },
          scan: null
        })
        assert.deepStrictEqual(rest.map((c) => c.id), expected.slice(5).map((c) => c.id))
      }))

    it.effect("ContactStore: a search with a scan bound examines that many contacts a page and resumes after the last", () =>
      Effect.gen(function*() {
        const ws = uuid()
        // Newest first: x9 .. x1; the names holding "b" are x8, x5, x4 and x1.
        const names = ["ab1", "x2", "x3", "b4", "b5", "x6", "x7", "b8", "x9"]
        const inserted = names.map((firstName, i) => contact(ws, { firstName, createdAt: ts(i + 1) }))
        yield* insertAll(inserted)
        const x7 = inserted[6]!
        const store = yield* ContactStore
        const first = yield* store.list({ workspaceId: ws, terms: searchTerms("b"), limit: 10, after: null, scan: 3 })
        // x9, b8, x7 examined: one match, and the window ended at x7.
        assert.deepStrictEqual(first.items.map(label), ["b8"])
        assert.deepStrictEqual(first.examinedTo, { createdAt: x7.createdAt, id: x7.id })
        for (const [limit, scan] of [[10, 3], [1, 3], [2, 2], [1, 1], [10, 9], [10, 20]] as const) {
          const pages = yield* pageThrough(ws, limit, "b", scan)
          assert.deepStrictEqual(pages.map(label), ["b8", "b5", "b4", "ab1"], `limit ${limit}, scan ${scan}`)
        }
        // A window without a match is an empty page that still goes on: [x9 b8] [x7 x6] [b5 b4] [x3 x2] [ab1].
        assert.deepStrictEqual((yield* pageThrough(ws, 10, "x", 2)).sizes, [1, 2, 0, 2, 0])
        // A window that is not full ends the search.
        const last = yield* store.list({ workspaceId: ws, terms: searchTerms("b"), limit: 10, after: null, scan: 9 })
        assert.deepStrictEqual([last.items.length, last.examinedTo !== null], [4, true])
        const whole = yield* store.list({ workspaceId: ws, terms: searchTerms("b"), limit: 10, after: null, scan: 10 })
        assert.deepStrictEqual([whole.items.length, whole.examinedTo], [4, null])
      }))

    it.effect("ContactStore: search is a case-insensitive substring over names, company and emails only", () =>
      Effect.gen(function*() {
        const ws = uuid()
        yield* insertAll([
          contact(ws, { firstName: "Ada", lastName: "Lovelace", createdAt: ts(1) }),
          contact(ws, { company: "Babbage & Co", emails: [{ value: "charles@Engines.example" }], createdAt: ts(2) }),
          contact(ws, {
            firstName: "Grace",
            notes: ["lovelace fan"],
            tags: ["ada"],
            properties: { ada: "ada" },
            source: "ada",
            createdAt: ts(3)
          }),
          contact(ws, { company: "ÉCOLE Normale", createdAt: ts(4) })
        ])
        assert.deepStrictEqual(yield* search(ws, "ada"), ["Ada"])
        assert.deepStrictEqual(yield* search(ws, "LOVELACE"), ["Ada"])
        assert.deepStrictEqual(yield* search(ws, "ada lovelace"), ["Ada"])
        assert.deepStrictEqual(yield* search(ws, "  ENGINES.ex "), ["Babbage & Co"])
        assert.deepStrictEqual(yield* search(ws, "& co"), ["Babbage & Co"])
        assert.deepStrictEqual(yield* search(ws, "école"), ["ÉCOLE Normale"])
        assert.deepStrictEqual(yield* search(ws, "a"), ["ÉCOLE Normale", "Grace", "Babbage & Co", "Ada"])
        assert.deepStrictEqual(yield* search(ws, "fan"), [])
        assert.deepStrictEqual(yield* search(ws, "zzz"), [])
      }))

    it.effect("ContactStore: a phone-shaped q matches a digit substring of any one phone", () =>
      Effect.gen(function*() {
        const ws = uuid()
        yield* insertAll([
          contact(ws, {
            firstName: "Phone",
            phones: [{ value: "+14155550100" }, { value: "+442079460958" }],
            createdAt: ts(1)
          }),
          contact(ws, { firstName: "Order 100", createdAt: ts(2) }),
          contact(ws, { firstName: "Other", phones: [{ value: "+12125550199" }], createdAt: ts(3) })
        ])
        assert.deepStrictEqual(yield* search(ws, "(415) 555-01"), ["Phone"])
        assert.deepStrictEqual(yield* search(ws, "+44 20 7946"), ["Phone"])
        assert.deepStrictEqual(yield* search(ws, "555"), ["Other", "Phone"])
        // digits over phones and text over names, together
        assert.deepStrictEqual(yield* search(ws, "100"), ["Order 100", "Phone"])
        // never across two numbers
        assert.deepStrictEqual(yield* search(ws, "0100442"), [])
        // a query with letters is not a phone fragment
        assert.deepStrictEqual(yield* search(ws, "x555"), [])
      }))

    it.effect("ContactStore: LIKE metacharacters % _ and \\ in q match literally", () =>
      Effect.gen(function*() {
        const ws = uuid()
        yield* insertAll([
          contact(ws, { firstName: "100% real", createdAt: ts(1) }),
          contact(ws, { firstName: "100 real", createdAt: ts(2) }),
          contact(ws, { lastName: "a_b", createdAt: ts(3) }),
          contact(ws, { lastName: "axb", createdAt: ts(4) }),
          contact(ws, { company: "back\\slash", createdAt: ts(5) }),
          contact(ws, { company: "backslash", createdAt: ts(6) }),
          contact(ws, { company: "back\\\\double", createdAt: ts(7) })
        ])
        assert.deepStrictEqual(yield* search(ws, "%"), ["100% real"])
        assert.deepStrictEqual(yield* search(ws, "0% r"), ["100% real"])
        assert.deepStrictEqual(yield* search(ws, "_"), ["a_b"])
        assert.deepStrictEqual(yield* search(ws, "a_b"), ["a_b"])
        assert.deepStrictEqual(yield* search(ws, "\\"), ["back\\\\double", "back\\slash"])
        assert.deepStrictEqual(yield* search(ws, "k\\s"), ["back\\slash"])
        assert.deepStrictEqual(yield* search(ws, "\\\\"), ["back\\\\double"])
        assert.deepStrictEqual(yield* search(ws, "\\%"), [])
        assert.deepStrictEqual(yield* search(ws, "%%"), [])
      }))

    it.effect("ContactStore: search and keyset paging combine", () =>
      Effect.gen(function*() {
        const ws = uuid()
        const hits = [1, 2, 3, 4, 5].map((i) => contact(ws, { firstName: `match ${i}`, createdAt: ts(i * 2) }))
        const misses = [1, 2, 3, 4].map((i) => contact(ws, { firstName: `other ${i}`, createdAt: ts(i * 2 + 1) }))
        yield* insertAll([...hits, ...misses])
        const paged = yield* pageThrough(ws, 2, "MATCH")
        assert.deepStrictEqual(paged.map(label), ["match 5", "match 4", "match 3", "match 2", "match 1"])
      }))

    // ---------------------------------------------------------------- EventOutbox
    it.effect("EventOutbox: appended events list in order, per workspace", () =>
      Effect.gen(function*() {
        const outbox = yield* EventOutbox
        const [ws, other] = [uuid(), uuid()]
        const [c1, c2, c3] = [uuid(), uuid(), uuid()]
        yield* outbox.append(ws, [
          event("contact.updated", { contactId: c1, change: "created" }),
          event("contact.updated", { contactId: c1, change: "updated", fields: ["firstName", "tags"] })
        ])
        yield* outbox.append(other, [event("contact.deleted", { contactId: c3 })])
        yield* outbox.append(ws, [])
        yield* outbox.append(ws, [event("contact.deleted", { contactId: c2 })])
        const listed = yield* outbox.list(ws)
        assert.deepStrictEqual(
          listed.map((e) => ({ workspaceId: e.workspaceId, type: e.type, data: e.data })),
          [
            { workspaceId: ws, type: "contact.updated", data: { contactId: c1, change: "created" } },
            {
              workspaceId: ws,
              type: "contact.updated",
              data: { contactId: c1, change: "updated", fields: ["firstName", "tags"] }
            },
            { workspaceId: ws, type: "contact.deleted", data: { contactId: c2 } }
          ]
        )
        assert.strictEqual(new Set(listed.map((e) => e.id)).size, 3)
        for (const e of listed) {
          assert.match(e.id, /^[0-9a-f-]{36}$/)
          assert.strictEqual(new Date(e.createdAt).toISOString(), e.createdAt)
        }
        assert.deepStrictEqual((yield* outbox.list(other)).map((e) => e.data), [{ contactId: c3 }])
        assert.deepStrictEqual(yield* outbox.list(uuid()), [])
      }))

    it.effect("EventOutbox: after a cursor, a workspace's later events in order, in pages, none of another's", () =>
      Effect.gen(function*() {
        const outbox = yield* EventOutbox
        const [ws, other] = [uuid(), uuid()]
        yield* outbox.append(ws, [event("contact.deleted", { contactId: uuid() })])
        const start = yield* outbox.after(ws, null, 100)
        assert.deepStrictEqual(start.events, [])
        const [a, b, c] = [uuid(), uuid(), uuid()]
        yield* outbox.append(ws, [event("contact.deleted", { contactId: a })])
        yield* outbox.append(other, [event("contact.deleted", { contactId: uuid() })])
        yield* outbox.append(ws, [
          event("contact.deleted", { contactId: b }),
          event("contact.deleted", { contactId: c })
        ])
        const first = yield* outbox.after(ws, start.cursor, 2)
        assert.deepStrictEqual(first.events.map((e) => e.data), [{ contactId: a }, { contactId: b }])
        assert.isTrue(first.events.every((e) => e.workspaceId === ws && e.type === "contact.deleted"))
        const second = yield* outbox.after(ws, first.cursor, 2)
        assert.deepStrictEqual(second.events.map((e) => e.data), [{ contactId: c }])
        const idle = yield* outbox.after(ws, second.cursor, 2)
        assert.deepStrictEqual(idle, { events: [], cursor: second.cursor })
      }))

    // ---------------------------------------------------------------- Transactor
    it.effect("Transactor: a failure rolls back the store writes and the outbox append together", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const store = yield* ContactStore
        const outbox = yield* EventOutbox
        const ws = uuid()
        const kept = contact(ws, { firstName: "Kept", createdAt: ts(1) })
        const doomed = contact(ws, { firstName: "Doomed", createdAt: ts(2) })
        yield* store.insert(kept)
        const result = yield* Effect.either(
          tx.withTransaction(
            Effect.gen(function*() {
              yield* store.insert(doomed)
              yield* store.update({ ...kept, firstName: "Changed" })
              yield* outbox.append(ws, [event("contact.updated", { contactId: doomed.id, change: "created" })])
              // inside, the transaction sees its own writes
              assert.isTrue(Option.isSome(yield* store.get(ws, doomed.id)))
              return yield* Effect.fail(new Boom())
            })
          )
        )
        assert.deepStrictEqual(result, Either.left(new Boom()))
        assert.isTrue(Option.isNone(yield* store.get(ws, doomed.id)))
        assert.deepStrictEqual(yield* store.get(ws, kept.id), Option.some(kept))
        assert.deepStrictEqual(yield* outbox.list(ws), [])
      }))

    it.effect("Transactor: a defect rolls back too", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const store = yield* ContactStore
        const outbox = yield* EventOutbox
        const ws = uuid()
        const c = contact(ws, { firstName: "Doomed" })
        const exit = yield* Effect.exit(
          tx.withTransaction(
            Effect.gen(function*() {
              yield* store.insert(c)
              yield* outbox.append(ws, [event("contact.deleted", { contactId: c.id })])
              return yield* Effect.die("boom")
            })
          )
        )
        assert.strictEqual(exit._tag, "Failure")
        assert.isTrue(Option.isNone(yield* store.get(ws, c.id)))
        assert.deepStrictEqual(yield* outbox.list(ws), [])
      }))

    it.effect("Transactor: success commits the store writes and the outbox append", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const store = yield* ContactStore
        const outbox = yield* EventOutbox
        const ws = uuid()
        const c = contact(ws, { firstName: "Committed" })
        const value = yield* tx.withTransaction(
          Effect.gen(function*() {
            yield* store.insert(c)
            yield* outbox.append(ws, [event("contact.updated", { contactId: c.id, change: "created" })])
            return 42
          })
        )
        assert.strictEqual(value, 42)
        assert.deepStrictEqual(yield* store.get(ws, c.id), Option.some(c))
        assert.deepStrictEqual((yield* outbox.list(ws)).map((e) => e.data), [{ contactId: c.id, change: "created" }])
      }))

    it.effect("Transactor.lock: a transaction taking a held key waits for the holder to end, then sees its writes", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const store = yield* ContactStore
        const ws = uuid()
        const key = `test:${uuid()}`
        const phone = "+14155550142" as E164
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const steps: Array<string> = []
        const first = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function*() {
              yield* tx.lock(key)
              yield* store.insert(contact(ws, { firstName: "First", phones: [{ value: phone }] }))
              yield* Deferred.succeed(holding, undefined)
              yield* Deferred.await(release)
              steps.push("first commits")
            })
          )
        )
        yield* Deferred.await(holding)
        const second = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function*() {
              yield* tx.lock(key)
              const seen = yield* store.findByPhones(ws, [phone])
              steps.push(`second sees ${seen.map((c) => c.firstName).join(",")}`)
            })
          )
        )
        yield* Effect.sleep("150 millis")
        assert.deepStrictEqual(steps, [], "the second transaction waits on the key")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(second)
        assert.deepStrictEqual(steps, ["first commits", "second sees First"])
      }))

    it.effect("Transactor.withTransaction(self, key): holds the key from the start, the same key lock() takes; nested too", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const store = yield* ContactStore
        const ws = uuid()
        // a quote and a backslash in the key: it is written into the statement as a literal
        const key = `test:it's\\'x:${uuid()}`
        const phone = "+14155550143" as E164
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const steps: Array<string> = []
        const first = yield* Effect.fork(
          tx.withTransaction(
            Effect.gen(function*() {
              yield* store.insert(contact(ws, { firstName: "First", phones: [{ value: phone }] }))
              yield* Deferred.succeed(holding, undefined)
              yield* Deferred.await(release)
              steps.push("first commits")
            }),
            key
          )
        )
        yield* Deferred.await(holding)
        const seen = (who: string) =>
          Effect.map(
            store.findByPhones(ws, [phone]),
            (cs) => void steps.push(`${who} sees ${cs.map((c) => c.firstName).join(",")}`)
          )
        const second = yield* Effect.fork(tx.withTransaction(Effect.zipRight(tx.lock(key), seen("second"))))
        // nested: the savepoint takes the key
        const third = yield* Effect.fork(tx.withTransaction(tx.withTransaction(seen("third"), key)))
        yield* Effect.sleep("150 millis")
        assert.deepStrictEqual(steps, [], "the others wait on the key")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(second)
        yield* Fiber.join(third)
        assert.deepStrictEqual(steps.slice(0, 1), ["first commits"])
        assert.sameMembers(steps.slice(1), ["second sees First", "third sees First"])
        // a failure rolls back and releases the key
        const failed = yield* Effect.exit(
          tx.withTransaction(
            Effect.zipRight(store.insert(contact(ws, { firstName: "Gone" })), Effect.fail("no" as const)),
            key
          )
        )
        assert.isTrue(failed._tag === "Failure")
        yield* tx.withTransaction(seen("fourth"), key)
        assert.strictEqual(steps[3], "fourth sees First")
      }))

    // ---------------------------------------------------------------- OutboxSignal
    /** Whether the signal fires within `within`; consumes the wake-up. The suite shares one signal. */
    const woken = (within: Duration.DurationInput) =>
      Effect.flatMap(OutboxSignal, (signal) => Effect.map(Effect.timeoutOption(signal.wait, within), Option.isSome))
    /** A workspace with an enabled webhook endpoint: its events wait for the worker (with none they are stored dispatched). */
    const listeningWorkspace = Effect.gen(function*() {
      const ws = uuid()
      yield* (yield* WebhookStore).insertEndpoint(endpointRecord(ws))
      return ws
    })

    it.effect("OutboxSignal: the outermost commit that appended events wakes the worker, which then sees them", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const outbox = yield* EventOutbox
        const signal = yield* OutboxSignal
        yield* woken("10 millis")
        const ws = yield* listeningWorkspace
        // The waiter reads the outbox the moment it wakes, as the worker's fan-out does.
        let woke = false
        const waiter = yield* Effect.fork(
          signal.wait.pipe(Effect.tap(() => (woke = true)), Effect.zipRight(outbox.list(ws)))
        )
        yield* tx.withTransaction(
          Effect.gen(function*() {
            yield* outbox.append(ws, [event("contact.updated", { contactId: uuid(), change: "created" })])
            yield* tx.withTransaction(outbox.append(ws, [event("contact.deleted", { contactId: uuid() })]))
            yield* Effect.sleep("50 millis")
            assert.isFalse(woke, "nothing is announced before the outermost commit")
          })
        )
        assert.deepStrictEqual((yield* Fiber.join(waiter)).map((e) => e.type), ["contact.updated", "contact.deleted"])
      }))

    it.effect("OutboxSignal: a rollback, or a commit without events, wakes no one; an append outside a transaction wakes at once", () =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const outbox = yield* EventOutbox
        const store = yield* ContactStore
        const ws = yield* listeningWorkspace
        yield* woken("10 millis")
        const failed = yield* Effect.exit(
          tx.withTransaction(
            Effect.zipRight(
              outbox.append(ws, [event("contact.deleted", { contactId: uuid() })]),
              Effect.fail(new Boom())
            )
          )
        )
        assert.strictEqual(failed._tag, "Failure")
        assert.isFalse(yield* woken("50 millis"), "rolled back")
        yield* tx.withTransaction(store.insert(contact(ws)))
        assert.isFalse(yield* woken("50 millis"), "no events")
        yield* tx.withTransaction(outbox.append(ws, []))
        assert.isFalse(yield* woken("50 millis"), "an empty append")
        yield* outbox.append(ws, [event("contact.deleted", { contactId: uuid() })])
        assert.isTrue(yield* woken("1 second"), "a lone append commits by itself")
        yield* tx.withTransaction(outbox.append(uuid(), [event("contact.deleted", { contactId: uuid() })]))
        assert.isFalse(
          yield* woken("50 millis"),
          "events of a workspace without an enabled endpoint: nobody waits for them"
        )
      }))

    // ---------------------------------------------------------------- services end to end
    it.layer(Layer.mergeAll(Contacts.layer, Workspaces.layer))("services end to end", (it) => {
      const principal = (workspaceId: string): Principal => ({
        workspaceId,
        keyId: uuid(),
        kind: "test",
        scopes: new Set(allScopes)
      })

      it.effect("Contacts: create, search, page 7 by 3, update, delete; events in order", () =>
        Effect.gen(function*() {
          const svc = yield* Contacts.Contacts
          const outbox = yield* EventOutbox
          const p = principal(uuid())
          const created: Array<string> = []
          for (let i = 1; i <= 7; i++) {
            // distinct creation instants, so newest-first is creation order reversed
            yield* Effect.sleep(Duration.millis(3))
            const c = yield* svc.create(p, {
              firstName: `Person ${i}`,
              phone: `+1415555020${i}`,
              email: `p${i}@example.com`
            })
            created.push(c.id)
            assert.deepStrictEqual(yield* svc.get(p, c.id), c)
          }
          const names = (page: { items: ReadonlyArray<{ firstName: string | null }> }) =>
            page.items.map((c) => c.firstName)
          assert.deepStrictEqual(names(yield* svc.list(p, { q: "PERSON 3" })), ["Person 3"])
          assert.deepStrictEqual(names(yield* svc.list(p, { q: "555-0205" })), ["Person 5"])
          assert.deepStrictEqual(names(yield* svc.list(p, { q: "p6@" })), ["Person 6"])

          const pages: Array<Array<string | null>> = []
          let cursor: string | undefined
          do {
            const page = yield* svc.list(p, { q: "person", limit: 3, cursor })
            pages.push(names(page))
            cursor = page.nextCursor ?? undefined
          } while (cursor !== undefined)
          assert.deepStrictEqual(pages, [["Person 7", "Person 6", "Person 5"], ["Person 4", "Person 3", "Person 2"], [
            "Person 1"
          ]])

          const first = yield* svc.list(p, { limit: 3 })
          yield* failsWith("InvalidArgument", svc.list(p, { q: "person", limit: 3, cursor: first.nextCursor! }))

          const updated = yield* svc.update(p, created[0]!, { lastName: "Updated", tags: ["t"] })
          assert.strictEqual(updated.lastName, "Updated")
          assert.deepStrictEqual(yield* svc.get(p, created[0]!), updated)
          assert.deepStrictEqual(yield* svc.remove(p, created[6]!), { deleted: true })
          yield* failsWith("NotFound", svc.get(p, created[6]!))

          // six left: an exactly full last page, then one more empty page with a null cursor
          const sizes: Array<number> = []
          let next: string | null | undefined
          do {
            const page = yield* svc.list(p, { limit: 3, ...(next ? { cursor: next } : {}) })
            sizes.push(page.items.length)
            next = page.nextCursor
          } while (next !== null)
          assert.deepStrictEqual(sizes, [3, 3, 0])

          const events = (yield* outbox.list(p.workspaceId)).map((e) => [e.type, e.data])
          assert.deepStrictEqual(events, [
            ...created.map((id) => ["contact.updated", { contactId: id, change: "created" }]),
            ["contact.updated", { contactId: created[0], change: "updated", fields: ["lastName", "tags"] }],
            ["contact.deleted", { contactId: created[6] }]
          ])
        }))

      it.effect("Contacts: a placeholder is adopted by a create with its phone", () =>
        Effect.gen(function*() {
          const svc = yield* Contacts.Contacts
          const outbox = yield* EventOutbox
          const p = principal(uuid())
          const phone = freshE164() as E164
          const placeholder = yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)
          assert.strictEqual((yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)).id, placeholder.id)
          const adopted = yield* svc.create(p, { firstName: "Ada", phone })
          assert.strictEqual(adopted.id, placeholder.id)
          assert.strictEqual(adopted.source, "manual")
          assert.deepStrictEqual(yield* svc.get(p, adopted.id), adopted)
          assert.deepStrictEqual((yield* outbox.list(p.workspaceId)).map((e) => e.data), [{
            contactId: adopted.id,
            change: "created"
          }])
        }))

      it.effect("Contacts: a create adopting a placeholder and a PATCH of that placeholder, at once, both land", () =>
        Effect.gen(function*() {
          const svc = yield* Contacts.Contacts
          const p = principal(uuid())
          // One race rarely lands in the window, so run several.
          for (let round = 0; round < 8; round++) {
            const phone = freshE164() as E164
            const placeholder = yield* svc.findOrCreatePlaceholder(p.workspaceId, phone)
            const [created] = yield* Effect.all(
              [
                svc.create(p, { firstName: "Ada", phone }),
                svc.update(p, placeholder.id, { notes: [`round ${round}`] })
              ],
              { concurrency: "unbounded" }
            )
            assert.strictEqual(created.id, placeholder.id, "adopted")
            const final = yield* svc.get(p, placeholder.id)
            assert.deepStrictEqual(
              [final.firstName, final.notes, final.source],
              ["Ada", [`round ${round}`], "manual"],
              `round ${round}`
            )
          }
        }))

      it.effect("Contacts: PATCHes of different fields of one contact, at once, all land", () =>
        Effect.gen(function*() {
          const svc = yield* Contacts.Contacts
          const p = principal(uuid())
          // One race rarely lands in the window, so run several.
          for (let round = 0; round < 6; round++) {
            const c = yield* svc.create(p, { firstName: "Lin" })
            yield* Effect.all(
              [
                svc.update(p, c.id, { company: `Company ${round}` }),
                svc.update(p, c.id, { notes: [`note ${round}`] }),
                svc.update(p, c.id, { tags: [`tag${round}`] }),
                svc.update(p, c.id, { lastName: `Round ${round}` })
              ],
              { concurrency: "unbounded" }
            )
            const final = yield* svc.get(p, c.id)
            assert.deepStrictEqual(
              [final.firstName, final.lastName, final.company, final.notes, final.tags],
              ["Lin", `Round ${round}`, `Company ${round}`, [`note ${round}`], [`tag${round}`]],
              `round ${round}`
            )
          }
        }))

      it.effect("Contacts: a failed update leaves the stored contact and the outbox untouched", () =>
        Effect.gen(function*() {
          const svc = yield* Contacts.Contacts
          const outbox = yield* EventOutbox
          const p = principal(uuid())
          const c = yield* svc.create(p, { firstName: "Ada" })
          yield* failsWith("InvalidArgument", svc.update(p, c.id, { firstName: "Bob", emails: ["nope"] }))
          assert.deepStrictEqual(yield* svc.get(p, c.id), c)
          assert.strictEqual((yield* outbox.list(p.workspaceId)).length, 1)
        }))

      it.effect("Workspaces: keys authenticate by hash, scopes survive, revoked keys do not; numbers are taken once", () =>
        Effect.gen(function*() {
          const ws = yield* Workspaces.Workspaces
          const w = yield* ws.create({ name: "E2E", billing: { identity: "verified" } })
          assert.deepStrictEqual(yield* ws.get(w.id), w)
          const key = yield* ws.createKey(w.id, { kind: "live", scopes: ["contacts:read", "webhooks:manage"] })
          const p = yield* ws.authenticate(key.token)
          assert.deepStrictEqual([p.workspaceId, p.keyId, p.kind, [...p.scopes]], [w.id, key.id, "live", [
            "contacts:read",
            "webhooks:manage"
          ]])
          yield* ws.revokeKey(key.id)
          yield* failsWith("Unauthenticated", ws.authenticate(key.token))
          const e164 = freshE164()
          yield* ws.addNumber(w.id, { e164 })
          const other = yield* ws.create({ name: "Other" })
          yield* failsWith("FailedPrecondition", ws.addNumber(other.id, { e164 }))
        }))
    })

    options.extra?.(it)
  })
