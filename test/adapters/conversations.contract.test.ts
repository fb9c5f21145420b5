/**
 * The ConversationStore contract, run unchanged against memory, PGlite (in-memory, migrated) and a
 * real Postgres (a fresh database, migrated): threads unique per (number, participant), the contact
 * name of a thread, keyset listing, activities, carrier ids, delivery status, tenant isolation on
 * every method, and message search (words, the last also as a prefix, AND, case-insensitive, punctuation as a word
 * break, transcripts, newest first, limit) with the same answers on every adapter. Without a
 * Postgres URL the Postgres suite is skipped, except under CI=true where that fails.
 */
import { SqlClient } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { describe, it } from "vitest"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { type ActivityRecord, searchQuery, type Thread } from "../../core/conversations/model.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { activity, contact, freshE164, thread, ts, uuid } from "./stores.contract.ts"

type Ports = ConversationStore | ContactStore | WorkspaceStore

/** Distinct, ordered timestamps with millisecond detail. */

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({ id, name: "W", billing: defaultBilling, ...defaultTexting, createdAt: ts(0) })
  return id
})

const get = (ws: string, id: string) => Effect.flatMap(ConversationStore, (s) => s.getThread(ws, id))
const nameOf = (ws: string, id: string) => Effect.map(get(ws, id), (t) => Option.getOrThrow(t).contactName)

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("insertThread stores a thread once per (number, participant); findThread finds it in its workspace only", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const t = thread(ws, { preview: "first", unread: 2, lastActivityAt: ts(5), createdAt: ts(4) })
        assert.deepStrictEqual(yield* store.insertThread(t), t)
        assert.deepStrictEqual(yield* store.findThread(ws, t.numberE164, t.participant), Option.some(t))
        // a second insert for the same pair returns the stored one, not the new one
        const dup = thread(ws, { numberE164: t.numberE164, participant: t.participant, preview: "second" })
        assert.deepStrictEqual(yield* store.insertThread(dup), t)
        assert.isTrue(Option.isNone(yield* store.getThread(ws, dup.id)))
        // other number, other participant, other workspace: separate threads
        const otherNumber = thread(ws, { numberE164: "+14155550199", participant: t.participant })
        const otherWs = thread(other, { numberE164: t.numberE164, participant: t.participant })
        assert.deepStrictEqual(yield* store.insertThread(otherNumber), otherNumber)
        assert.deepStrictEqual(yield* store.insertThread(otherWs), otherWs)
        assert.deepStrictEqual(yield* store.findThread(other, t.numberE164, t.participant), Option.some(otherWs))
        assert.isTrue(Option.isNone(yield* store.findThread(yield* newWorkspace, t.numberE164, t.participant)))
        assert.isTrue(Option.isNone(yield* store.findThread(ws, t.numberE164, freshE164())))
      }))

    it.effect("concurrent inserts of one pair store exactly one thread", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const participant = freshE164()
        const candidates = Array.from({ length: 10 }, () => thread(ws, { participant }))
        const stored = yield* Effect.forEach(candidates, store.insertThread, { concurrency: "unbounded" })
        assert.strictEqual(new Set(stored.map((t) => t.id)).size, 1)
        assert.lengthOf(yield* store.listThreads({ workspaceId: ws, status: null, limit: 100, after: null }), 1)
      }))

    it.effect("getThread: the contact's name, then its company, then the raw number; detachContact keeps the thread", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const contacts = yield* ContactStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const full = contact(ws, { firstName: "Ada", lastName: "Lovelace", company: "Engines" })
        const first = contact(ws, { firstName: "Grace" })
        const last = contact(ws, { lastName: "Hopper" })
        const company = contact(ws, { company: "Analytical Engines" })
        const nameless = contact(ws, { source: "inbound" })
        const foreign = contact(other, { firstName: "Mallory" })
        for (const c of [full, first, last, company, nameless, foreign]) yield* contacts.insert(c)
        const cases: ReadonlyArray<readonly [string | null, (t: Thread) => string]> = [
          [full.id, () => "Ada Lovelace"],
          [first.id, () => "Grace"],
          [last.id, () => "Hopper"],
          [company.id, () => "Analytical Engines"],
          [nameless.id, (t) => t.participant],
          [null, (t) => t.participant],
          // a contact of another workspace is never shown
          [foreign.id, (t) => t.participant]
        ]
        for (const [contactId, expected] of cases) {
          const t = yield* store.insertThread(thread(ws, { contactId }))
          const view = Option.getOrThrow(yield* store.getThread(ws, t.id))
          assert.strictEqual(view.contactName, expected(t), String(contactId))
          assert.deepStrictEqual({ ...view, contactName: undefined }, { ...t, contactName: undefined })
          assert.isTrue(Option.isNone(yield* store.getThread(other, t.id)))
        }
        // detaching: every thread of the contact in that workspace, nothing else
        const t1 = yield* store.insertThread(thread(ws, { contactId: full.id }))
        const t2 = yield* store.insertThread(thread(ws, { contactId: full.id, numberE164: "+14155550199" }))
        const keep = yield* store.insertThread(thread(ws, { contactId: first.id }))
        yield* store.detachContact(other, full.id)
        assert.strictEqual(yield* nameOf(ws, t1.id), "Ada Lovelace")
        yield* store.detachContact(ws, full.id)
        for (const t of [t1, t2]) {
          const view = Option.getOrThrow(yield* store.getThread(ws, t.id))
          assert.strictEqual(view.contactId, null)
          assert.strictEqual(view.contactName, t.participant)
        }
        assert.strictEqual(yield* nameOf(ws, keep.id), "Grace")
        // the name follows the contact as it changes
        yield* contacts.update({ ...first, firstName: "Grace B." })
        assert.strictEqual(yield* nameOf(ws, keep.id), "Grace B.")
      }))

    it.effect("unassignMember clears that member's threads in that workspace only, and counts them", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const gone = uuid()
        const stays = uuid()
        const t1 = yield* store.insertThread(thread(ws, { assigneeUid: gone }))
        const t2 = yield* store.insertThread(thread(ws, { assigneeUid: gone, status: "done", unread: 3 }))
        const kept = yield* store.insertThread(thread(ws, { assigneeUid: stays }))
        const none = yield* store.insertThread(thread(ws))
        const foreign = yield* store.insertThread(thread(other, { assigneeUid: gone }))
        assert.strictEqual(yield* store.unassignMember(ws, gone), 2)
        for (const t of [t1, t2]) {
          const { contactName: _, ...stored } = Option.getOrThrow(yield* get(ws, t.id))
          assert.deepStrictEqual(stored, { ...t, assigneeUid: null })
        }
        assert.strictEqual(Option.getOrThrow(yield* get(ws, kept.id)).assigneeUid, stays)
        assert.strictEqual(Option.getOrThrow(yield* get(ws, none.id)).assigneeUid, null)
        assert.strictEqual(Option.getOrThrow(yield* get(other, foreign.id)).assigneeUid, gone)
        assert.strictEqual(yield* store.unassignMember(ws, gone), 0)
      }))

    it.effect("updateThread changes status, unread, preview, lastActivityAt and contactId, in its workspace only", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const contacts = yield* ContactStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const c = contact(ws, { firstName: "Ada" })
        yield* contacts.insert(c)
        const t = yield* store.insertThread(thread(ws))
        const next: Thread = {
          ...t,
          status: "done",
          unread: 7,
          preview: "later",
          lastActivityAt: ts(99),
          contactId: c.id,
          assigneeUid: "u_1"
        }
        yield* store.updateThread(next)
        assert.deepStrictEqual(yield* get(ws, t.id), Option.some({ ...next, contactName: "Ada" }))
        // the same id under another workspace is not this thread
        yield* store.updateThread({ ...next, workspaceId: other, status: "open", unread: 0 })
        assert.deepStrictEqual(yield* get(ws, t.id), Option.some({ ...next, contactName: "Ada" }))
        assert.isTrue(Option.isNone(yield* get(other, t.id)))
      }))

    it.effect("touchThread sets only the columns it is given: status, contact and assignee changed meanwhile survive; in its workspace only", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const contacts = yield* ContactStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const ada = contact(ws, { firstName: "Ada" })
        const grace = contact(ws, { firstName: "Grace" })
        for (const c of [ada, grace]) yield* contacts.insert(c)
        const t = yield* store.insertThread(
          thread(ws, { contactId: ada.id, unread: 2, preview: "before", lastActivityAt: ts(10) })
        )
        // what other writers change after the toucher read the thread
        yield* store.updateThread({ ...t, status: "done", assigneeUid: "u_1" })
        yield* store.detachContact(ws, ada.id)
        yield* store.touchThread(ws, t.id, { lastActivityAt: ts(20), preview: "sent", unread: 0 })
        const touched: Thread = {
          ...t,
          status: "done",
          assigneeUid: "u_1",
          contactId: null,
          lastActivityAt: ts(20),
          preview: "sent",
          unread: 0
        }
        assert.deepStrictEqual(yield* get(ws, t.id), Option.some({ ...touched, contactName: t.participant }))
        // status and contact, when given
        yield* store.touchThread(ws, t.id, {
          lastActivityAt: ts(30),
          preview: "got",
          unread: 1,
          status: "open",
          contactId: grace.id
        })
        const reopened: Thread = {
          ...touched,
          lastActivityAt: ts(30),
          preview: "got",
          unread: 1,
          status: "open",
          contactId: grace.id
        }
        assert.deepStrictEqual(yield* get(ws, t.id), Option.some({ ...reopened, contactName: "Grace" }))
        // the same id under another workspace is not this thread
        yield* store.touchThread(other, t.id, { lastActivityAt: ts(40), preview: "foreign", unread: 9, status: "done" })
        assert.deepStrictEqual(yield* get(ws, t.id), Option.some({ ...reopened, contactName: "Grace" }))
        assert.isTrue(Option.isNone(yield* get(other, t.id)))
      }))

    it.effect("recordOutbound: a new line's thread as given with its earliest contact; an existing thread touched, its contact kept or attached; the activity on the stored thread; tenant", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const contacts = yield* ContactStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const phone = freshE164()
        // the other workspace's contact with this phone is never attached
        yield* contacts.insert(contact(other, { firstName: "Foreign", phones: [{ value: phone }], createdAt: ts(0) }))
        const fresh = thread(ws, { participant: phone, preview: "first", lastActivityAt: ts(10), createdAt: ts(10) })
        const first = activity(fresh, { conversationId: "", body: "first", createdAt: ts(10) })
        // a new line: inserted as given, no contact to attach
        assert.deepStrictEqual(yield* store.recordOutbound(fresh, first), fresh)
        assert.deepStrictEqual(
          yield* store.getActivity(ws, first.id),
          Option.some({ ...first, conversationId: fresh.id })
        )
        // the line exists: touched (status and assignee set meanwhile survive) and attached to the earliest contact of the phone
        yield* store.updateThread({ ...fresh, status: "done", assigneeUid: "u_1", unread: 3 })
        const later = contact(ws, { firstName: "Later", phones: [{ value: phone }], createdAt: ts(2) })
        const earliest = contact(ws, {
          firstName: "Earliest",
          phones: [{ value: "+14155550000" }, { value: phone }],
          createdAt: ts(1)
        })
        for (const c of [later, earliest]) yield* contacts.insert(c)
        const again = thread(ws, {
          participant: phone,
          inboxId: uuid(),
          preview: "second",
          lastActivityAt: ts(20),
          createdAt: ts(20)
        })
        const second = activity(again, { conversationId: "", body: "second", createdAt: ts(20) })
        const touched: Thread = {
          ...fresh,
          status: "done",
          assigneeUid: "u_1",
          contactId: earliest.id,
          preview: "second",
          unread: 0,
          lastActivityAt: ts(20)
        }
        assert.deepStrictEqual(yield* store.recordOutbound(again, second), touched)
        assert.deepStrictEqual(yield* get(ws, fresh.id), Option.some({ ...touched, contactName: "Earliest" }))
        assert.deepStrictEqual((yield* store.listActivities(ws, fresh.id)).map((a) => a.body), ["first", "second"])
        // a thread with a contact keeps it
        yield* store.updateThread({ ...touched, contactId: later.id })
        const third = activity(again, { conversationId: "", body: "third", createdAt: ts(30) })
        const kept = yield* store.recordOutbound({ ...again, preview: "third", lastActivityAt: ts(30) }, third)
        assert.deepStrictEqual(kept, { ...touched, contactId: later.id, preview: "third", lastActivityAt: ts(30) })
        // the same line in another workspace is another thread
        const theirs = thread(other, {
          numberE164: fresh.numberE164,
          participant: phone,
          lastActivityAt: ts(40),
          createdAt: ts(40)
        })
        const foreign = yield* store.recordOutbound(theirs, activity(theirs, { conversationId: "", createdAt: ts(40) }))
        assert.strictEqual(foreign.id, theirs.id)
        assert.strictEqual((yield* store.listActivities(ws, fresh.id)).length, 3)
      }))

    it.effect("listThreads: most recent activity first, id breaking ties, keyset after, status filter, limit, tenant", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        // three share one instant, so their ids decide
        const plan: ReadonlyArray<readonly [number, "open" | "done"]> = [
          [10, "open"],
          [30, "done"],
          [20, "open"],
          [20, "done"],
          [20, "open"],
          [40, "open"],
          [5, "done"]
        ]
        const threads: Array<Thread> = []
        for (const [at, status] of plan) {
          threads.push(yield* store.insertThread(thread(ws, { lastActivityAt: ts(at), status })))
        }
        yield* store.insertThread(thread(other, { lastActivityAt: ts(50) }))
        const expected = [...threads].sort((a, b) =>
          a.lastActivityAt === b.lastActivityAt ? (a.id < b.id ? 1 : -1) : a.lastActivityAt < b.lastActivityAt ? 1 : -1
        )
        const list = (
          status: "open" | "done" | null,
          limit: number,
          after: { lastActivityAt: string; id: string } | null
        ) => Effect.map(store.listThreads({ workspaceId: ws, status, limit, after }), (rs) => rs.map((t) => t.id))
        assert.deepStrictEqual(yield* list(null, 100, null), expected.map((t) => t.id))
        for (const status of ["open", "done"] as const) {
          assert.deepStrictEqual(
            yield* list(status, 100, null),
            expected.filter((t) => t.status === status).map((t) => t.id)
          )
        }
        // every page size walks the same order with no gaps or repeats
        for (const status of [null, "open", "done"] as const) {
          const want = expected.filter((t) => status === null || t.status === status).map((t) => t.id)
          for (const limit of [1, 2, 3]) {
            const seen: Array<string> = []
            let after: { lastActivityAt: string; id: string } | null = null
            for (let i = 0; i < 20; i++) {
              const page: ReadonlyArray<Thread> = yield* store.listThreads({ workspaceId: ws, status, limit, after })
              assert.isAtMost(page.length, limit)
              seen.push(...page.map((t) => t.id))
              const last = page[page.length - 1]
              if (page.length < limit || last === undefined) break
              after = { lastActivityAt: last.lastActivityAt, id: last.id }
            }
            assert.deepStrictEqual(seen, want, `status ${status} limit ${limit}`)
          }
        }
        // list items carry the contact name
        const first = (yield* store.listThreads({ workspaceId: ws, status: null, limit: 1, after: null }))[0]!
        assert.strictEqual(first.contactName, first.participant)
        assert.deepStrictEqual(
          yield* store.listThreads({ workspaceId: yield* newWorkspace, status: null, limit: 10, after: null }),
          []
        )
      }))

    it.effect("activities: stored as given, listed oldest first, read in their workspace only", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const t = yield* store.insertThread(thread(ws))
        const elsewhere = yield* store.insertThread(thread(ws))
        const mms = activity(t, {
          createdAt: ts(3),
          direction: "inbound",
          deliveryStatus: "received",
          body: "héllo ✓ \u{1F600}",
          media: [{ key: uuid(), contentType: "image/png", size: 123, filename: "a.png" }],
          carrierMessageId: `car_${uuid()}`
        })
        const call = activity(t, {
          createdAt: ts(1),
          type: "call",
          direction: "inbound",
          body: null,
          deliveryStatus: null,
          call: { status: "completed", durationSeconds: 61, nested: { ok: true } },
          aiTags: ["booking", "vip"],
          callTranscript: [
            { speaker: "caller", text: "Hi there", offsetSeconds: 0 },
            { speaker: "agent", text: "Hello!", offsetSeconds: 1.5 }
          ]
        })
        const note = activity(t, {
          createdAt: ts(2),
          type: "internal_note",
          direction: null,
          authorUid: "u_1",
          deliveryStatus: null,
          body: "call back"
        })
        // two at the same instant: id order
        const tieA = activity(t, { createdAt: ts(4) })
        const tieB = activity(t, { createdAt: ts(4) })
        for (const a of [mms, call, note, tieA, tieB, activity(elsewhere, { createdAt: ts(0) })]) {
          yield* store.insertActivity(a)
        }
        const ties = [tieA, tieB].sort((a, b) => (a.id < b.id ? -1 : 1))
        assert.deepStrictEqual(yield* store.listActivities(ws, t.id), [call, note, mms, ...ties])
        assert.deepStrictEqual(yield* store.getActivity(ws, mms.id), Option.some(mms))
        assert.deepStrictEqual(yield* store.getActivity(ws, call.id), Option.some(call))
        assert.isTrue(Option.isNone(yield* store.getActivity(other, mms.id)))
        assert.isTrue(Option.isNone(yield* store.getActivity(ws, uuid())))
        assert.deepStrictEqual(yield* store.listActivities(other, t.id), [])
      }))

    it.effect("findByCarrierId finds an activity whatever its workspace; a carrier id is stored once", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const t = yield* store.insertThread(thread(ws))
        const carrierMessageId = `car_${uuid()}`
        const a = activity(t, { carrierMessageId })
        yield* store.insertActivity(a)
        assert.deepStrictEqual(yield* store.findByCarrierId(carrierMessageId), Option.some(a))
        assert.isTrue(Option.isNone(yield* store.findByCarrierId(`car_${uuid()}`)))
        const dup = yield* Effect.exit(store.insertActivity(activity(t, { carrierMessageId })))
        assert.strictEqual(dup._tag, "Failure")
        assert.deepStrictEqual(yield* store.listActivities(ws, t.id), [a])
        // many activities without a carrier id are fine
        yield* store.insertActivity(activity(t, { createdAt: ts(1) }))
        yield* store.insertActivity(activity(t, { createdAt: ts(2) }))
        assert.lengthOf(yield* store.listActivities(ws, t.id), 3)
      }))

    it.effect("listCalls: call and voicemail activities only, with their threads, newest first, id breaking ties, limit, tenant", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const t = yield* store.insertThread(thread(ws))
        const t2 = yield* store.insertThread(thread(ws, { numberE164: "+14155550101" }))
        const elsewhere = yield* store.insertThread(thread(other))
        const details = { status: "completed", durationSeconds: 30 }
        const call = activity(t, {
          createdAt: ts(1),
          type: "call",
          direction: "inbound",
          deliveryStatus: null,
          body: null,
          call: details
        })
        const voicemail = activity(t2, {
          createdAt: ts(3),
          type: "voicemail",
          direction: "inbound",
          deliveryStatus: null,
          body: null,
          call: { ...details, status: "missed" }
        })
        const tieA = activity(t, {
          createdAt: ts(2),
          type: "call",
          direction: "outbound",
          deliveryStatus: null,
          body: null,
          call: details
        })
        const tieB = activity(t, {
          createdAt: ts(2),
          type: "call",
          direction: "outbound",
          deliveryStatus: null,
          body: null,
          call: details
        })
        const message = activity(t, { createdAt: ts(4) })
        const note = activity(t, { createdAt: ts(5), type: "internal_note", direction: null, deliveryStatus: null })
        const foreign = activity(elsewhere, {
          createdAt: ts(6),
          type: "call",
          direction: "inbound",
          deliveryStatus: null,
          body: null,
          call: details
        })
        for (const a of [call, voicemail, tieA, tieB, message, note, foreign]) yield* store.insertActivity(a)
        const ties = [tieA, tieB].sort((a, b) => (a.id < b.id ? 1 : -1))
        const listed = yield* store.listCalls(ws, 10)
        assert.deepStrictEqual(listed.map((h) => h.activity), [voicemail, ...ties, call])
        assert.deepStrictEqual(listed.map((h) => h.thread.id), [t2.id, t.id, t.id, t.id])
        assert.strictEqual(listed[0]!.thread.numberE164, "+14155550101")
        assert.deepStrictEqual((yield* store.listCalls(ws, 2)).map((h) => h.activity.id), [voicemail.id, ties[0]!.id])
        assert.deepStrictEqual((yield* store.listCalls(other, 10)).map((h) => h.activity.id), [foreign.id])
      }))

    it.effect("setDeliveryStatus changes one activity, in its workspace only", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const t = yield* store.insertThread(thread(ws))
        const a = activity(t)
        const b = activity(t, { createdAt: ts(1) })
        yield* store.insertActivity(a)
        yield* store.insertActivity(b)
        yield* store.setDeliveryStatus(ws, a.id, "delivered")
        yield* store.setDeliveryStatus(other, b.id, "failed")
        assert.strictEqual(Option.getOrThrow(yield* store.getActivity(ws, a.id)).deliveryStatus, "delivered")
        assert.strictEqual(Option.getOrThrow(yield* store.getActivity(ws, b.id)).deliveryStatus, "queued")
      }))

    it.effect("setCallTranscript, setCallMedia and setCallSummary change one call, in its workspace only; the transcript is searchable", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const t = yield* store.insertThread(thread(ws))
        const a = activity(t, {
          type: "call",
          body: null,
          callTranscript: null,
          call: { status: "completed", summary: null, durationSeconds: 12 }
        })
        yield* store.insertActivity(a)
        const transcript = [{ speaker: "agent" as const, text: "Hello, Zanzibar plumbing", offsetSeconds: 0 }, {
          speaker: "caller" as const,
          text: "A leak ☔",
          offsetSeconds: 4
        }]
        yield* store.setCallTranscript(other, a.id, [{ speaker: "caller", text: "not mine", offsetSeconds: 0 }])
        assert.strictEqual(Option.getOrThrow(yield* store.getActivity(ws, a.id)).callTranscript, null)
        assert.deepStrictEqual(yield* store.search(ws, searchQuery("zanzibar")!, 10), [])
        yield* store.setCallTranscript(ws, a.id, transcript)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getActivity(ws, a.id)).callTranscript, transcript)
        assert.deepStrictEqual((yield* store.search(ws, searchQuery("zanzibar")!, 10)).map((h) => h.id), [a.id])
        const media = [{ key: "call_1.mp3", contentType: "audio/mpeg", size: 1234, filename: "recording.mp3" }]
        yield* store.setCallMedia(other, a.id, media)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getActivity(ws, a.id)).media, [])
        yield* store.setCallMedia(ws, a.id, media)
        const after = Option.getOrThrow(yield* store.getActivity(ws, a.id))
        assert.deepStrictEqual([after.media, after.callTranscript], [media, transcript])
        yield* store.setCallSummary(other, a.id, "not mine")
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getActivity(ws, a.id)).call, {
          status: "completed",
          summary: null,
          durationSeconds: 12
        })
        yield* store.setCallSummary(ws, a.id, "Leak under the sink; \"urgent\" ☔")
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getActivity(ws, a.id)).call, {
          status: "completed",
          summary: "Leak under the sink; \"urgent\" ☔",
          durationSeconds: 12
        })
      }))

    it.effect("search: words and prefixes, AND, case-insensitive, punctuation, transcripts, newest first, limit, tenant", () =>
      Effect.gen(function*() {
        const store = yield* ConversationStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const t = yield* store.insertThread(thread(ws))
        const t2 = yield* store.insertThread(thread(ws))
        const docs: Record<string, ActivityRecord> = {}
        const add = (label: string, th: Thread, at: number, patch: Partial<ActivityRecord>) =>
          Effect.gen(function*() {
            const a = activity(th, { createdAt: ts(at), ...patch })
            docs[label] = a
            yield* store.insertActivity(a)
          })
        yield* add("table", t, 1, { body: "Your TABLE for two is ready" })
        yield* add("way", t2, 2, { body: "Thanks! We're on our way, tables are hard to find." })
        yield* add("email", t, 3, { body: "E-mail me at ada@example.com or see example.com/menu/today" })
        yield* add("numbers", t2, 4, {
          body: "Total $19.99 on 2024-01-05, pi is 3.14159, v1.2.3 shipped; order#123 and foo/bar"
        })
        yield* add("accents", t, 5, { body: "Café CRÈME brûlée à l'ÉCOLE" })
        yield* add("call", t, 6, {
          type: "call",
          body: null,
          deliveryStatus: null,
          callTranscript: [
            { speaker: "caller", text: "I'd like to book a table", offsetSeconds: 0 },
            { speaker: "agent", text: "Sure - for how many guests?", offsetSeconds: 3 }
          ]
        })
        yield* add("voicemail", t2, 7, {
          type: "voicemail",
          body: null,
          deliveryStatus: null,
          callTranscript: [{ speaker: "caller", text: "Call me back about the reservation", offsetSeconds: 0 }]
        })
        yield* add("empty", t, 8, { body: null })
        const foreign = yield* store.insertThread(thread(other))
        yield* store.insertActivity(activity(foreign, { body: "table ready reservation", createdAt: ts(9) }))

        const search = (q: string, limit = 100) =>
          Effect.map(
            store.search(ws, searchQuery(q)!, limit),
            (hits) => hits.map((h) => Object.keys(docs).find((k) => docs[k]!.id === h.id) ?? `unknown ${h.id}`)
          )
        const expectations: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
          ["table", ["call", "way", "table"]],
          ["TaB", ["call", "way", "table"]],
          ["tables", ["way"]],
          ["able", []],
          ["table ready", ["table"]],
          ["ready table", ["table"]],
          ["table guests", ["call"]],
          ["table zebra", []],
          ["we're", ["way"]],
          ["re", ["voicemail", "way", "table"]],
          ["way,", ["way"]],
          ["mail", ["email"]],
          ["e mail", ["email"]],
          ["example", ["email"]],
          ["ada example com", ["email"]],
          ["menu", ["email"]],
          ["today", ["email"]],
          ["99", ["numbers"]],
          ["19", ["numbers"]],
          ["2024 01 05", ["numbers"]],
          ["14159", ["numbers"]],
          ["3", ["numbers"]],
          ["v1", ["numbers"]],
          ["123", ["numbers"]],
          ["order", ["numbers"]],
          ["bar", ["numbers"]],
          ["café", ["accents"]],
          ["CAF", ["accents"]],
          ["crème", ["accents"]],
          ["école", ["accents"]],
          ["brûl", ["accents"]],
          ["reservation", ["voicemail"]],
          ["call", ["voicemail"]],
          ["hard find", ["way"]],
          // only the last word is a prefix, and never a stop word
          ["tab ready", []],
          ["table rea", ["table"]],
          ["to", ["call", "way"]],
          ["hard to", ["way"]],
          ["a", ["call"]],
          ["book a", ["call"]],
          ["the", ["voicemail"]],
          ["th", ["voicemail", "way"]]
        ]
        for (const [q, want] of expectations) assert.deepStrictEqual(yield* search(q), want, q)
        // newest first, then the limit keeps the newest
        assert.deepStrictEqual(yield* search("table", 2), ["call", "way"])
        assert.deepStrictEqual(yield* search("table", 1), ["call"])
        // hits carry what a search answers: the activity's text and identity, its thread's participant and number
        const [hit] = yield* store.search(ws, searchQuery("reservation")!, 10)
        const { body, conversationId, createdAt, direction, id, type } = docs["voicemail"]!
        assert.deepStrictEqual(hit, {
          id,
          conversationId,
          type,
          direction,
          body,
          createdAt,
          participant: t2.participant,
          numberE164: t2.numberE164
        })
        assert.strictEqual(conversationId, t2.id)
        assert.deepStrictEqual(yield* store.search(yield* newWorkspace, searchQuery("table")!, 10), [])
      }))
  })

contract("ConversationStore: memory", MemoryStores.layer)

/**
 * The send's statement is prepared (adapters/sql/prepared.ts): planned once, generically, for every
 * phone. Its contact lookup must still go through the phones index: walking contacts_recent in order
 * and filtering reads every contact of the workspace for a phone no contact has. Index use is read
 * from Postgres's statistics, on a pool whose sessions always use the generic plan. And Postgres
 * must choose that generic plan by itself, or it plans every send anew.
 */
const genericPlans = (url: string) => {
  /** On a fresh database (dropped after), through `options` for each session: a workspace with 3,000 analyzed contacts, each with a phone of its own. */
  const withManyContacts = async (
    name: string,
    options: string,
    body: (ws: string) => Effect.Effect<void, unknown, Ports | SqlClient.SqlClient>
  ) => {
    const db = await freshDatabase(url, name)
    try {
      await Effect.runPromise(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const ws = yield* newWorkspace
          const seed = contact(ws, { firstName: "Many", phones: [{ value: "+14155550000" }], createdAt: ts(0) })
          yield* (yield* ContactStore).insert(seed)
          yield* sql`INSERT INTO contacts
            SELECT (jsonb_populate_record(c, jsonb_build_object('id', gen_random_uuid(), 'phones', jsonb_build_array(jsonb_build_object('value', '+1628' || lpad(g::text, 7, '0')))))).*
            FROM contacts c, generate_series(1, 3000) g WHERE c.id = ${seed.id}`
          yield* sql`ANALYZE contacts`
          yield* body(ws)
        }).pipe(
          Effect.provide(
            sqlStores(Postgres.layer({ url: Redacted.make(`${db.url}?options=${encodeURIComponent(options)}`) }))
          )
        )
      )
    } finally {
      await db.drop()
    }
  }
  /** Sends to phones no contact has, on one connection (a transaction), then `after` on it. */
  const sends = <A>(ws: string, count: number, after: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const store = yield* ConversationStore
          for (let i = 0; i < count; i++) {
            const t = thread(ws)
            assert.strictEqual((yield* store.recordOutbound(t, activity(t, { conversationId: "" }))).contactId, null)
          }
          return yield* after
        })
      ))

  describe("ConversationStore: Postgres, the send's statement under its generic plan", () => {
    it("finds the participant's contact through the phones index, not by reading the workspace's contacts", () =>
      withManyContacts("conversations_plan", "-c plan_cache_mode=force_generic_plan", (ws) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const reads = Effect.map(
            sql<{ name: string; scans: string; tuples: string }>`
              SELECT indexrelname AS name, idx_scan AS scans, idx_tup_read AS tuples FROM pg_stat_user_indexes
              WHERE indexrelname IN ('contacts_recent', 'contacts_phones')`,
            (rows) =>
              Object.fromEntries(rows.map((r) => [r.name, { scans: Number(r.scans), tuples: Number(r.tuples) }]))
          )
          const before = yield* reads
          // The sends' statistics reach the views when their connection goes idle (forced).
          yield* sends(ws, 3, sql`SELECT pg_stat_force_next_flush()`)
          yield* Effect.sleep("200 millis")
          const after = yield* reads
          assert.isAtLeast(after["contacts_phones"]!.scans - before["contacts_phones"]!.scans, 3)
          assert.isBelow(after["contacts_recent"]!.tuples - before["contacts_recent"]!.tuples, 100)
        })))

    it("settles on the generic plan by itself (the phone hidden from custom plans), instead of planning every send", () =>
      withManyContacts("conversations_plan_auto", "-c plan_cache_mode=auto", (ws) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const plans = yield* sends(
            ws,
            10,
            sql<
              { generic: string }
            >`SELECT generic_plans AS generic FROM pg_prepared_statements WHERE statement LIKE '%INSERT INTO threads%'`
          )
          assert.strictEqual(plans.length, 1)
          assert.isAtLeast(Number(plans[0]!.generic), 4)
        })))
  })
}

sqlContract({
  name: (db) => `ConversationStore: ${db}`,
  adapter: sqlStores,
  suite: contract,
  database: "conversations",
  onPostgres: genericPlans
})
