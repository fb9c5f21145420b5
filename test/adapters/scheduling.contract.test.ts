/**
 * The contract of the scheduling store (core/scheduling/store.ts) and the texting pace
 * (core/pacing/pacer.ts), run unchanged against memory, PGlite and a real Postgres: scheduled
 * messages and broadcasts read back exactly and list in their orders; the queue's claim takes only
 * pending sends due on their workspace's clock, leases them, never hands one send to two claimers
 * and skips a workspace whose pace is booked beyond the horizon; release, markSending and settle
 * answer only the claim that holds a send; counts always add up and a broadcast's end is reported
 * exactly once; the sweep gives up sends left in flight; cancel skips what has not left.
 *
 * The queue is shared by every workspace (claimDue, sweep and nextDue are not scoped), so each test
 * starts from an empty queue: `clearQueue` cancels every source the suite made and sweeps what is
 * in flight. `now` is an argument of the queue, so claims run on fixed instants of 2024.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { newAgentConfig } from "../../core/agent/model.ts"
import { AgentStore } from "../../core/agent/store.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { Pacer, spacingMs } from "../../core/pacing/pacer.ts"
import {
  type BroadcastCounts,
  type BroadcastRecord,
  CANCELED,
  type Failure,
  OPTED_OUT,
  type ScheduledRecord,
  type SendRecord,
  type SendState,
  UNKNOWN_OUTCOME
} from "../../core/scheduling/model.ts"
import { type Completed, SchedulingStore, type Settlement } from "../../core/scheduling/store.ts"
import { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { defaultBilling, defaultTexting, type Workspace } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = SchedulingStore | Pacer | WorkspaceClock | WorkspaceStore | AgentStore | Transactor

/** `ts(seconds)` in ms: the queue's `now`. */
const at = (seconds: number) => Date.parse(ts(seconds))
const LEASE = 30_000
const HORIZON = 2_000

const newWorkspace = (patch: Partial<Workspace> = {}) =>
  Effect.gen(function*() {
    const w: Workspace = {
      id: uuid(),
      name: "Scheduling",
      billing: defaultBilling,
      ...defaultTexting,
      createdAt: ts(0),
      ...patch
    }
    yield* (yield* WorkspaceStore).insert(w)
    return w.id
  })

const phone = (i: number) => `+1415${String(5_550_000 + i).padStart(7, "0")}`

const sendOf = (
  ws: string,
  source: SendRecord["source"],
  sourceId: string,
  seq: number,
  to: string,
  dueAt: string,
  patch: Partial<SendRecord> = {}
): SendRecord => ({
  workspaceId: ws,
  id: uuid(),
  source,
  sourceId,
  seq,
  to,
  contactId: null,
  segments: 1,
  dueAt,
  state: "pending",
  messageId: null,
  failure: null,
  updatedAt: ts(0),
  ...patch
})

interface Scheduled {
  readonly record: ScheduledRecord
  readonly send: SendRecord
}

const scheduledOf = (ws: string, sendAt: string, patch: Partial<ScheduledRecord> = {}): Scheduled => {
  const record: ScheduledRecord = {
    workspaceId: ws,
    id: uuid(),
    keyId: uuid(),
    live: false,
    to: "+14155550100",
    from: null,
    conversationId: null,
    body: "Hello",
    mediaUrls: [],
    sendAt,
    createdAt: ts(0),
    ...patch
  }
  return { record, send: sendOf(ws, "scheduled", record.id, 0, record.to, record.sendAt) }
}

interface BroadcastOf {
  readonly record: BroadcastRecord
  readonly sends: ReadonlyArray<SendRecord>
}

const pendingCounts = (n: number): BroadcastCounts => ({
  total: n,
  sent: 0,
  failed: 0,
  skippedOptedOut: 0,
  skippedCanceled: 0,
  pending: n
})

const broadcastOf = (ws: string, n: number, sendAt: string, patch: Partial<BroadcastRecord> = {}): BroadcastOf => {
  const record: BroadcastRecord = {
    workspaceId: ws,
    id: uuid(),
    keyId: uuid(),
    live: false,
    from: null,
    body: "Spring sale",
    mediaUrls: [],
    sendAt,
    state: "active",
    counts: pendingCounts(n),
    createdAt: ts(0),
    completedAt: null,
    ...patch
  }
  const sends = Array.from({ length: n }, (_, i) => sendOf(ws, "broadcast", record.id, i, phone(i), sendAt))
  return { record, sends }
}

/** Every source the suite made, so each test can start from an empty queue. */
const made: Array<{ readonly workspaceId: string; readonly id: string }> = []

const putScheduled = (s: Scheduled) =>
  Effect.flatMap(SchedulingStore, (store) => {
    made.push({ workspaceId: s.record.workspaceId, id: s.record.id })
    return store.insertScheduled(s.record, s.send)
  })

const putBroadcast = (b: BroadcastOf) =>
  Effect.flatMap(SchedulingStore, (store) => {
    made.push({ workspaceId: b.record.workspaceId, id: b.record.id })
    return store.insertBroadcast(b.record, b.sends)
  })

/** Nothing pending or in flight: every source made so far canceled, every send in flight swept. */
const clearQueue = Effect.gen(function*() {
  const store = yield* SchedulingStore
  for (const m of made.splice(0)) yield* store.cancel(m.workspaceId, m.id, ts(0))
  yield* store.sweep(0, ts(0), true)
})

const ids = (rows: ReadonlyArray<{ readonly send: SendRecord }>) => rows.map((r) => r.send.id)
const sendIds = (rows: ReadonlyArray<SendRecord>) => rows.map((s) => s.id)

const getBroadcast = (ws: string, id: string) =>
  Effect.flatMap(SchedulingStore, (store) => Effect.map(store.getBroadcast(ws, id), Option.getOrThrow))

const getScheduled = (ws: string, id: string) =>
  Effect.flatMap(SchedulingStore, (store) => Effect.map(store.getScheduled(ws, id), Option.getOrThrow))

/** Every recipient of a broadcast, in seq order. */
const recipients = (b: BroadcastOf, states: ReadonlyArray<SendState> | null = null) =>
  Effect.flatMap(SchedulingStore, (store) =>
    store.listRecipients({
      workspaceId: b.record.workspaceId,
      broadcastId: b.record.id,
      states,
      afterSeq: null,
      limit: 100_000
    }))

const recipient = (b: BroadcastOf, seq: number) =>
  Effect.map(recipients(b), (rs) => {
    const r = rs.find((s) => s.seq === seq)
    assert.isDefined(r, `recipient ${seq}`)
    return r!
  })

const assertAddsUp = (c: BroadcastCounts) =>
  assert.strictEqual(
    c.total,
    c.sent + c.failed + c.skippedOptedOut + c.skippedCanceled + c.pending,
    `counts add up: ${JSON.stringify(c)}`
  )

/** A broadcast's stored counts, checked against its recipients' states. */
const countsOf = (b: BroadcastOf) =>
  Effect.gen(function*() {
    const counts = (yield* getBroadcast(b.record.workspaceId, b.record.id)).counts
    assertAddsUp(counts)
    const rs = yield* recipients(b)
    const skipped = (code: string) => rs.filter((s) => s.state === "skipped" && s.failure?.code === code).length
    assert.deepStrictEqual(counts, {
      total: rs.length,
      sent: rs.filter((s) => s.state === "sent").length,
      failed: rs.filter((s) => s.state === "failed").length,
      skippedOptedOut: skipped(OPTED_OUT),
      skippedCanceled: skipped(CANCELED),
      pending: rs.filter((s) => s.state === "pending" || s.state === "sending").length
    }, "counts match the recipients")
    return counts
  })

const sent = (messageId: string = uuid()): Settlement => ({ state: "sent", messageId, failure: null })
const failed = (failure: Failure = { code: "invalid_argument", message: "to: not a mobile number" }): Settlement => ({
  state: "failed",
  messageId: null,
  failure
})
const optedOut: Settlement = {
  state: "skipped",
  messageId: null,
  failure: { code: OPTED_OUT, message: "The recipient opted out" }
}
const skippedCanceled: Settlement = {
  state: "skipped",
  messageId: null,
  failure: { code: CANCELED, message: "Canceled before it was sent" }
}

const completedOf = (r: { readonly completed: Option.Option<Completed> }) => Option.getOrNull(r.completed)

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "180 seconds" })(name, (it) => {
    /** Every test starts from an empty queue. */
    const test = (title: string, body: () => Effect.Effect<void, never, Ports>) =>
      it.effect(title, () => Effect.zipRight(clearQueue, body()))

    test("scheduled messages: read back exactly; soonest first, then id; `after` pages; `states` filters; workspaces isolated", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const other = yield* newWorkspace()
        const full = scheduledOf(ws, ts(300), {
          live: true,
          from: "+14155550199",
          conversationId: uuid(),
          body: "Your table is ready ✓ \"Ada\"\nSee you soon",
          mediaUrls: ["https://cdn.example.com/a.png", "https://cdn.example.com/b.jpg?x=1"],
          createdAt: ts(5)
        })
        // Three at one instant (ordered by id), others before and after, inserted out of order.
        const messages = [
          full,
          scheduledOf(ws, ts(200)),
          scheduledOf(ws, ts(200)),
          scheduledOf(ws, ts(100)),
          scheduledOf(ws, ts(200)),
          scheduledOf(ws, ts(400))
        ]
        for (const m of messages) yield* putScheduled(m)
        const elsewhere = scheduledOf(other, ts(50))
        yield* putScheduled(elsewhere)

        assert.deepStrictEqual(Option.getOrThrow(yield* store.getScheduled(ws, full.record.id)), full)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getScheduled(other, elsewhere.record.id)), elsewhere)
        assert.isTrue(Option.isNone(yield* store.getScheduled(other, full.record.id)), "another workspace's")
        assert.isTrue(Option.isNone(yield* store.getScheduled(ws, uuid())))

        const expected = [...messages].sort((a, b) =>
          Date.parse(a.record.sendAt) - Date.parse(b.record.sendAt) || (a.record.id < b.record.id ? -1 : 1)
        )
        const list = (after: { sendAt: string; id: string } | null, limit: number, states: Array<SendState> | null) =>
          store.listScheduled({ workspaceId: ws, states, after, limit })
        assert.deepStrictEqual(yield* list(null, 50, null), expected)
        assert.deepStrictEqual(yield* list(null, 2, null), expected.slice(0, 2))
        assert.deepStrictEqual(
          yield* store.listScheduled({ workspaceId: other, states: null, after: null, limit: 50 }),
          [
            elsewhere
          ]
        )
        for (const size of [1, 2, 4]) {
          const seen: Array<string> = []
          let after: { sendAt: string; id: string } | null = null
          for (;;) {
            const page: ReadonlyArray<Scheduled> = yield* list(after, size, null)
            assert.isAtMost(page.length, size)
            seen.push(...page.map((m) => m.record.id))
            const last = page[page.length - 1]
            if (page.length < size || last === undefined) break
            after = { sendAt: last.record.sendAt, id: last.record.id }
          }
          assert.deepStrictEqual(seen, expected.map((m) => m.record.id), `pages of ${size}`)
        }
        // `after` inside the tie at ts(200): the rest of the tie, then the later ones.
        const tie = expected[2]!
        assert.deepStrictEqual(
          (yield* list({ sendAt: tie.record.sendAt, id: tie.record.id }, 50, null)).map((m) => m.record.id),
          expected.slice(3).map((m) => m.record.id)
        )

        // States, as the queue moves them: the soonest is sent, the one at ts(300) in flight, the last canceled.
        const first = expected[0]!
        const last = expected[expected.length - 1]!
        assert.strictEqual(expected[4], full)
        const one = yield* store.claimDue(at(150), LEASE, HORIZON, 10)
        assert.deepStrictEqual(
          ids(one),
          [elsewhere.send.id, first.send.id],
          "only the soonest are due, in any workspace"
        )
        const messageId = uuid()
        assert.isTrue(
          (yield* store.settle(first.send.workspaceId, first.send.id, one[1]!.claimId, sent(messageId), ts(151)))
            .settled
        )
        assert.isTrue(
          (yield* store.settle(elsewhere.send.workspaceId, elsewhere.send.id, one[0]!.claimId, sent(), ts(151))).settled
        )
        const more = yield* store.claimDue(at(350), LEASE, HORIZON, 10)
        // Claims take the soonest due first, then by seq, then by the send's id (not the message's).
        const bySend = expected.slice(1, 5).map((m) => m.send).sort((a, b) =>
          Date.parse(a.dueAt) - Date.parse(b.dueAt) || (a.id < b.id ? -1 : 1)
        )
        assert.deepStrictEqual(ids(more), sendIds(bySend), "soonest first, then by id")
        assert.strictEqual(ids(more)[3], full.send.id)
        assert.isTrue(yield* store.markSending(full.send.workspaceId, full.send.id, more[0]!.claimId, at(400)))
        assert.strictEqual((yield* store.cancel(ws, last.record.id, ts(352))).skipped, 1)

        const stateOf = (m: Scheduled, state: SendState, patch: Partial<SendRecord> = {}): Scheduled => ({
          record: m.record,
          send: { ...m.send, state, ...patch }
        })
        const firstSent = stateOf(first, "sent", { messageId, updatedAt: ts(151) })
        const fullSending = stateOf(full, "sending")
        const lastCanceled = stateOf(last, "skipped", {
          failure: { code: CANCELED, message: "Canceled before it was sent" },
          updatedAt: ts(352)
        })
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getScheduled(ws, first.record.id)), firstSent)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getScheduled(ws, full.record.id)), fullSending)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getScheduled(ws, last.record.id)), lastCanceled)
        assert.deepStrictEqual(yield* list(null, 50, ["sent"]), [firstSent])
        assert.deepStrictEqual(yield* list(null, 50, ["skipped"]), [lastCanceled])
        assert.deepStrictEqual(yield* list(null, 50, ["failed"]), [])
        assert.deepStrictEqual(yield* list(null, 50, ["pending", "sending"]), [...expected.slice(1, 4), fullSending])
        assert.deepStrictEqual(
          yield* list({ sendAt: tie.record.sendAt, id: tie.record.id }, 50, ["pending", "sending"]),
          [expected[3]!, fullSending]
        )
        assert.deepStrictEqual(yield* list(null, 50, ["sent", "skipped"]), [firstSent, lastCanceled])
      }))

    test("broadcasts: 2,000 recipients read back in seq order; `afterSeq` pages; `states` filters; workspaces isolated", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const other = yield* newWorkspace()
        const base = broadcastOf(ws, 2_000, ts(100), {
          live: true,
          from: "+14155550198",
          body: "Spring sale — 20% off ✓",
          mediaUrls: ["https://cdn.example.com/sale.png"],
          createdAt: ts(3)
        })
        // Recipients with contacts and longer texts, handed over out of order.
        const b: BroadcastOf = {
          record: base.record,
          sends: base.sends.map((s) =>
            s.seq % 3 === 0 ? { ...s, contactId: uuid(), segments: 1 + (s.seq % 4), to: phone(s.seq) } : s
          )
        }
        yield* putBroadcast({ record: b.record, sends: [...b.sends].reverse() })

        assert.deepStrictEqual(Option.getOrThrow(yield* store.getBroadcast(ws, b.record.id)), b.record)
        assert.isTrue(Option.isNone(yield* store.getBroadcast(other, b.record.id)), "another workspace's")
        assert.isTrue(Option.isNone(yield* store.getBroadcast(ws, uuid())))

        const page = (afterSeq: number | null, limit: number, states: Array<SendState> | null = null) =>
          store.listRecipients({ workspaceId: ws, broadcastId: b.record.id, states, afterSeq, limit })
        assert.deepStrictEqual(yield* page(null, 5_000), b.sends)
        assert.deepStrictEqual(yield* page(null, 3), b.sends.slice(0, 3))
        assert.deepStrictEqual(yield* page(1_990, 5), b.sends.slice(1_991, 1_996))
        assert.deepStrictEqual(yield* page(1_999, 5), [])
        const seen: Array<SendRecord> = []
        let afterSeq: number | null = null
        for (;;) {
          const rows: ReadonlyArray<SendRecord> = yield* page(afterSeq, 200)
          seen.push(...rows)
          const last = rows[rows.length - 1]
          if (rows.length < 200 || last === undefined) break
          afterSeq = last.seq
        }
        assert.strictEqual(seen.length, 2_000)
        assert.deepStrictEqual(sendIds(seen), sendIds(b.sends), "pages of 200")
        assert.deepStrictEqual(
          yield* store.listRecipients({
            workspaceId: other,
            broadcastId: b.record.id,
            states: null,
            afterSeq: null,
            limit: 50
          }),
          []
        )

        // The first three (the soonest due, then by seq) are sent, failed and skipped.
        const claimed = yield* store.claimDue(at(100), LEASE, HORIZON, 3)
        assert.deepStrictEqual(ids(claimed), sendIds(b.sends.slice(0, 3)))
        const c = claimed[0]!.claimId
        const messageId = uuid()
        const failure = { code: "invalid_argument", message: "to: not a mobile number" }
        yield* store.settle(b.sends[0]!.workspaceId, b.sends[0]!.id, c, sent(messageId), ts(101))
        yield* store.settle(b.sends[1]!.workspaceId, b.sends[1]!.id, c, failed(failure), ts(102))
        yield* store.settle(b.sends[2]!.workspaceId, b.sends[2]!.id, c, optedOut, ts(103))
        const settled = [
          { ...b.sends[0]!, state: "sent" as const, messageId, updatedAt: ts(101) },
          { ...b.sends[1]!, state: "failed" as const, failure, updatedAt: ts(102) },
          { ...b.sends[2]!, state: "skipped" as const, failure: optedOut.failure, updatedAt: ts(103) }
        ]
        assert.deepStrictEqual(yield* page(null, 5), [...settled, ...b.sends.slice(3, 5)])
        assert.deepStrictEqual(yield* page(null, 50, ["sent"]), settled.slice(0, 1))
        assert.deepStrictEqual(yield* page(null, 50, ["failed", "skipped"]), settled.slice(1))
        assert.deepStrictEqual(yield* page(1, 50, ["failed", "skipped"]), settled.slice(2))
        assert.deepStrictEqual(yield* page(null, 50, ["sending"]), [])
        const pending = yield* page(null, 5_000, ["pending"])
        assert.strictEqual(pending.length, 1_997)
        assert.deepStrictEqual(pending.slice(0, 2), b.sends.slice(3, 5))
        assert.deepStrictEqual(yield* countsOf(b), {
          total: 2_000,
          sent: 1,
          failed: 1,
          skippedOptedOut: 1,
          skippedCanceled: 0,
          pending: 1_997
        })
      }))

    test("listBroadcasts: newest first, then id descending; `after` pages without gaps or repeats; workspaces isolated", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const other = yield* newWorkspace()
        const broadcasts = [
          broadcastOf(ws, 1, ts(500), { createdAt: ts(30) }),
          broadcastOf(ws, 2, ts(500), { createdAt: ts(31) }),
          broadcastOf(ws, 1, ts(500), { createdAt: ts(31) }),
          broadcastOf(ws, 1, ts(500), { createdAt: ts(32) }),
          broadcastOf(ws, 1, ts(500), { createdAt: ts(31) }),
          broadcastOf(ws, 0, ts(500), { createdAt: ts(29) })
        ]
        for (const b of broadcasts) yield* putBroadcast(b)
        const elsewhere = broadcastOf(other, 1, ts(500), { createdAt: ts(31) })
        yield* putBroadcast(elsewhere)

        const expected = broadcasts.map((b) => b.record).sort((a, b) =>
          a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1
        )
        const list = (after: { createdAt: string; id: string } | null, limit: number) =>
          store.listBroadcasts({ workspaceId: ws, after, limit })
        assert.deepStrictEqual(yield* list(null, 50), expected)
        assert.deepStrictEqual(yield* list(null, 2), expected.slice(0, 2))
        assert.deepStrictEqual(yield* store.listBroadcasts({ workspaceId: other, after: null, limit: 50 }), [
          elsewhere.record
        ])
        for (const size of [1, 2, 4]) {
          const seen: Array<string> = []
          let after: { createdAt: string; id: string } | null = null
          for (;;) {
            const page: ReadonlyArray<BroadcastRecord> = yield* list(after, size)
            assert.isAtMost(page.length, size)
            seen.push(...page.map((b) => b.id))
            const last = page[page.length - 1]
            if (page.length < size || last === undefined) break
            after = { createdAt: last.createdAt, id: last.id }
          }
          assert.deepStrictEqual(seen, expected.map((b) => b.id), `pages of ${size}`)
        }
        const tie = expected[2]!
        assert.strictEqual(tie.createdAt, ts(31))
        assert.deepStrictEqual(yield* list({ createdAt: tie.createdAt, id: tie.id }, 50), expected.slice(3))
      }))

    test("claimDue: pending sends due on their workspace's clock, soonest first, up to the limit, with their source and workspace", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const agents = yield* AgentStore
        const quiet = { start: "22:30", end: "07:15" }
        const ws = yield* newWorkspace({ textingSegmentsPerMinute: 30, quietHours: quiet })
        const moved = yield* newWorkspace({ quietHours: null })
        yield* agents.put({
          id: uuid(),
          workspaceId: moved,
          draft: { ...newAgentConfig, timezone: "America/Denver" },
          published: null,
          carrierAssistantId: null,
          createdAt: ts(0),
          updatedAt: ts(0),
          publishedAt: null
        })
        const conversationId = uuid()
        const early = scheduledOf(ws, ts(5), {
          live: true,
          from: "+14155550197",
          conversationId,
          body: "Reminder ✓",
          mediaUrls: ["https://cdn.example.com/r.png"]
        })
        const later = scheduledOf(ws, ts(10))
        const exactly = scheduledOf(ws, ts(50))
        const future = scheduledOf(ws, ts(60))
        const b = broadcastOf(moved, 2, ts(100), {
          live: true,
          from: null,
          body: "Sale",
          mediaUrls: ["https://cdn.example.com/s.png"]
        })
        for (const m of [later, future, early, exactly]) yield* putScheduled(m)
        yield* putBroadcast(b)

        const two = yield* store.claimDue(at(50), LEASE, HORIZON, 2)
        assert.deepStrictEqual(ids(two), [early.send.id, later.send.id])
        assert.strictEqual(two[0]!.claimId, two[1]!.claimId, "one claim for the batch")
        assert.deepStrictEqual(two[0], {
          send: early.send,
          claimId: two[0]!.claimId,
          keyId: early.record.keyId,
          live: true,
          from: "+14155550197",
          conversationId,
          body: "Reminder ✓",
          mediaUrls: ["https://cdn.example.com/r.png"],
          quietHours: quiet,
          segmentsPerMinute: 30,
          timeZone: null,
          clockOffsetMs: 0
        })
        const rest = yield* store.claimDue(at(50), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(rest), [exactly.send.id], "leased ones are skipped; the rest is not due yet")
        assert.notStrictEqual(rest[0]!.claimId, two[0]!.claimId, "each claim its own id")

        // The clock test helper moves one workspace's clock: its broadcast falls due, no one else's send.
        assert.strictEqual(yield* (yield* WorkspaceClock).advance(moved, 50_000), 50_000)
        const onMoved = yield* store.claimDue(at(50), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(onMoved), sendIds(b.sends))
        assert.deepStrictEqual(onMoved[1], {
          send: b.sends[1]!,
          claimId: onMoved[1]!.claimId,
          keyId: b.record.keyId,
          live: true,
          from: null,
          conversationId: null,
          body: "Sale",
          mediaUrls: ["https://cdn.example.com/s.png"],
          quietHours: null,
          segmentsPerMinute: defaultTexting.textingSegmentsPerMinute,
          timeZone: "America/Denver",
          clockOffsetMs: 50_000
        })

        // A lease holds until it ends (claimed at ts(50): until ts(80)); then each send is claimable again.
        assert.deepStrictEqual(
          ids(yield* store.claimDue(at(50) + LEASE, LEASE, HORIZON, 10)),
          [future.send.id],
          "the others are still leased"
        )
        const again = yield* store.claimDue(at(50) + LEASE + 1, LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(again), [early.send.id, later.send.id, exactly.send.id, ...sendIds(b.sends)])

        // Sent, in flight, canceled: never claimed again, whatever their lease.
        const c = again[0]!.claimId
        assert.isTrue((yield* store.settle(early.send.workspaceId, early.send.id, c, sent(), ts(90))).settled)
        assert.isTrue(yield* store.markSending(later.send.workspaceId, later.send.id, c, at(90)))
        yield* store.cancel(ws, exactly.record.id, ts(90))
        yield* store.cancel(moved, b.record.id, ts(90))
        const last = yield* store.claimDue(at(500), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(last), [future.send.id])
        assert.deepStrictEqual(yield* store.claimDue(at(1_000), LEASE, HORIZON, 0), [], "limit 0")
      }))

    test("claimDue: two concurrent claimers never get the same send", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const a = yield* newWorkspace()
        const z = yield* newWorkspace()
        const ba = broadcastOf(a, 150, ts(10))
        const bz = broadcastOf(z, 150, ts(11))
        yield* putBroadcast(ba)
        yield* putBroadcast(bz)
        const all = new Set([...sendIds(ba.sends), ...sendIds(bz.sends)])

        // Two claims at once, each asking for more than half.
        const [one, two] = yield* Effect.all([
          store.claimDue(at(20), LEASE, HORIZON, 200),
          store.claimDue(at(20), LEASE, HORIZON, 200)
        ], { concurrency: "unbounded" })
        const both = [...ids(one), ...ids(two)]
        assert.strictEqual(both.length, 300, `${one.length} + ${two.length}`)
        assert.strictEqual(new Set(both).size, 300, "no send in both")
        assert.isTrue(both.every((id) => all.has(id)))

        // Once the leases end, workers claiming small batches over and over share them out the same way.
        const taken: Array<string> = []
        const worker = Effect.gen(function*() {
          for (;;) {
            const batch = yield* store.claimDue(at(20) + LEASE + 1, LEASE, HORIZON, 7)
            if (batch.length === 0) return
            taken.push(...ids(batch))
          }
        })
        yield* Effect.all([worker, worker, worker], { concurrency: "unbounded" })
        assert.strictEqual(taken.length, 300)
        assert.strictEqual(new Set(taken).size, 300)
      }))

    test("claimDue: a workspace whose pace is booked beyond the horizon is skipped until it is not", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const pacer = yield* Pacer
        const busy = yield* newWorkspace()
        const idle = yield* newWorkspace()
        const onBusy = scheduledOf(busy, ts(1))
        const onIdle = scheduledOf(idle, ts(1))
        yield* putScheduled(onBusy)
        yield* putScheduled(onIdle)
        const now = at(10)
        const lease = 600_000
        // One segment at one a minute: the pace is booked until now + 60s.
        assert.strictEqual(Option.getOrThrow(yield* pacer.reserve(busy, 1, 1, now, HORIZON)), now)

        assert.deepStrictEqual(ids(yield* store.claimDue(now, lease, HORIZON, 10)), [onIdle.send.id])
        // Booked beyond now + horizon until now + 58s; then within it.
        assert.deepStrictEqual(yield* store.claimDue(now + 57_999, lease, HORIZON, 10), [])
        const later = yield* store.claimDue(now + 58_000, lease, HORIZON, 10)
        assert.deepStrictEqual(ids(later), [onBusy.send.id])
        yield* store.release(onBusy.send.workspaceId, later[0]!.claimId, [onBusy.send.id], null)
        assert.deepStrictEqual(
          ids(yield* store.claimDue(now, lease, 60_000, 10)),
          [onBusy.send.id],
          "a horizon reaching the booking"
        )
      }))

    test("release ends the lease; with dueAt the send falls due then; a stale claim changes nothing", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const b = broadcastOf(ws, 3, ts(10))
        yield* putBroadcast(b)
        const [s0, s1, s2] = b.sends
        const first = yield* store.claimDue(at(20), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(first), sendIds(b.sends))
        const c1 = first[0]!.claimId

        yield* store.release(s0!.workspaceId, c1, [s0!.id], null)
        const second = yield* store.claimDue(at(21), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(second), [s0!.id], "only the released one")
        const c2 = second[0]!.claimId

        // c1 no longer holds s0: its release changes neither the lease nor the time.
        yield* store.release(s0!.workspaceId, c1, [s0!.id], ts(1))
        assert.deepStrictEqual(yield* store.claimDue(at(22), LEASE, HORIZON, 10), [])
        assert.deepStrictEqual(yield* recipient(b, 0), s0)

        // Quiet hours: s0 waits until ts(200).
        yield* store.release(s0!.workspaceId, c2, [s0!.id], ts(200))
        assert.deepStrictEqual(yield* recipient(b, 0), { ...s0!, dueAt: ts(200) })
        assert.deepStrictEqual(yield* store.claimDue(at(23), LEASE, HORIZON, 10), [])
        assert.deepStrictEqual(
          ids(yield* store.claimDue(at(20) + LEASE + 1, LEASE, HORIZON, 10)),
          [s1!.id, s2!.id],
          "s0 is not due"
        )
        assert.deepStrictEqual(ids(yield* store.claimDue(at(199), LEASE, HORIZON, 10)), [s1!.id, s2!.id])

        // A send in flight is not released; an empty or unknown list changes nothing.
        const third = yield* store.claimDue(at(199) + LEASE + 1, LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(third), [s1!.id, s2!.id, s0!.id])
        const c3 = third[0]!.claimId
        assert.isTrue(yield* store.markSending(s1!.workspaceId, s1!.id, c3, at(300)))
        yield* store.release(s1!.workspaceId, c3, [s1!.id, uuid()], ts(900))
        yield* store.release(s1!.workspaceId, c3, [], ts(900))
        assert.deepStrictEqual(yield* recipient(b, 1), { ...s1!, state: "sending" })
        assert.isTrue((yield* store.settle(s1!.workspaceId, s1!.id, c3, sent(), ts(250))).settled, "still its claim's")
      }))

    test("markSending: true once for the claim that holds the send; false for a stale claim and after cancel", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const b = broadcastOf(ws, 2, ts(10))
        const m = scheduledOf(ws, ts(11))
        yield* putBroadcast(b)
        yield* putScheduled(m)
        const first = yield* store.claimDue(at(20), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(first), [...sendIds(b.sends), m.send.id])
        const c1 = first[0]!.claimId
        const [s0, s1] = b.sends

        assert.isTrue(yield* store.markSending(s0!.workspaceId, s0!.id, c1, at(80)))
        assert.isFalse(yield* store.markSending(s0!.workspaceId, s0!.id, c1, at(90)), "once")
        assert.deepStrictEqual(yield* recipient(b, 0), { ...s0!, state: "sending" })
        assert.isFalse(yield* store.markSending(s0!.workspaceId, uuid(), c1, at(80)), "no such send")

        // s1's lease ends and another claim takes it: the first claim's mark is refused.
        const second = yield* store.claimDue(at(20) + LEASE + 1, LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(second), [s1!.id, m.send.id], "a send in flight is not claimed again")
        const c2 = second[0]!.claimId
        assert.isFalse(yield* store.markSending(s1!.workspaceId, s1!.id, c1, at(90)))
        assert.deepStrictEqual(yield* recipient(b, 1), s1)
        assert.isTrue(yield* store.markSending(s1!.workspaceId, s1!.id, c2, at(90)))

        // Canceled before the mark: refused, and it stays skipped.
        yield* store.cancel(ws, m.record.id, ts(55))
        assert.isFalse(yield* store.markSending(m.send.workspaceId, m.send.id, c2, at(90)))
        assert.strictEqual((yield* getScheduled(ws, m.record.id)).send.state, "skipped")
      }))

    test("settle: counts move by outcome and add up; the broadcast completes exactly once; a stale claim is refused", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const b = broadcastOf(ws, 5, ts(10))
        yield* putBroadcast(b)
        const [s0, s1, s2, s3, s4] = b.sends
        const first = yield* store.claimDue(at(20), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(first), sendIds(b.sends))
        const c1 = first[0]!.claimId

        const messageId = uuid()
        assert.deepStrictEqual(
          completedOf(yield* store.settle(s0!.workspaceId, s0!.id, c1, sent(messageId), ts(21))),
          null
        )
        assert.deepStrictEqual(yield* countsOf(b), { ...pendingCounts(5), sent: 1, pending: 4 })
        // From `sending`, as a live send is settled.
        assert.isTrue(yield* store.markSending(s1!.workspaceId, s1!.id, c1, at(80)))
        const failure = { code: "forbidden", message: "The number is not registered" }
        assert.isTrue((yield* store.settle(s1!.workspaceId, s1!.id, c1, failed(failure), ts(22))).settled)
        assert.isTrue((yield* store.settle(s2!.workspaceId, s2!.id, c1, optedOut, ts(23))).settled)
        assert.isTrue((yield* store.settle(s3!.workspaceId, s3!.id, c1, skippedCanceled, ts(24))).settled)
        assert.deepStrictEqual(yield* countsOf(b), {
          total: 5,
          sent: 1,
          failed: 1,
          skippedOptedOut: 1,
          skippedCanceled: 1,
          pending: 1
        })
        assert.deepStrictEqual(yield* recipients(b, ["sent", "failed", "skipped"]), [
          { ...s0!, state: "sent", messageId, updatedAt: ts(21) },
          { ...s1!, state: "failed", failure, updatedAt: ts(22) },
          { ...s2!, state: "skipped", failure: optedOut.failure, updatedAt: ts(23) },
          { ...s3!, state: "skipped", failure: skippedCanceled.failure, updatedAt: ts(24) }
        ])
        assert.isFalse((yield* store.settle(s0!.workspaceId, s0!.id, c1, failed(), ts(25))).settled, "settled already")

        // s4's lease ends and another claim takes it: the first claim can no longer settle it.
        const second = yield* store.claimDue(at(20) + LEASE + 1, LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(second), [s4!.id])
        const c2 = second[0]!.claimId
        const stale = yield* store.settle(s4!.workspaceId, s4!.id, c1, sent(), ts(60))
        assert.isFalse(stale.settled)
        assert.deepStrictEqual(completedOf(stale), null)
        assert.deepStrictEqual(yield* recipient(b, 4), s4)
        assert.strictEqual((yield* countsOf(b)).pending, 1)
        assert.isFalse((yield* store.settle(s4!.workspaceId, uuid(), c2, sent(), ts(60))).settled, "no such send")

        const finalCounts = { total: 5, sent: 2, failed: 1, skippedOptedOut: 1, skippedCanceled: 1, pending: 0 }
        const last = yield* store.settle(s4!.workspaceId, s4!.id, c2, sent(), ts(61))
        assert.isTrue(last.settled)
        assert.deepStrictEqual(completedOf(last), { workspaceId: ws, broadcastId: b.record.id, counts: finalCounts })
        assert.deepStrictEqual(yield* getBroadcast(ws, b.record.id), {
          ...b.record,
          state: "completed",
          counts: finalCounts,
          completedAt: ts(61)
        })
        assert.deepStrictEqual(yield* countsOf(b), finalCounts)
        const again = yield* store.settle(s4!.workspaceId, s4!.id, c2, sent(), ts(62))
        assert.isFalse(again.settled)
        assert.deepStrictEqual(completedOf(again), null, "completed once")

        // A scheduled message has no counts: settled, never completed.
        const m = scheduledOf(ws, ts(10))
        yield* putScheduled(m)
        const claimed = yield* store.claimDue(at(100), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(claimed), [m.send.id])
        const alone = yield* store.settle(m.send.workspaceId, m.send.id, claimed[0]!.claimId, sent(messageId), ts(101))
        assert.isTrue(alone.settled)
        assert.deepStrictEqual(completedOf(alone), null)
        assert.deepStrictEqual(
          (yield* getScheduled(ws, m.record.id)).send,
          { ...m.send, state: "sent", messageId, updatedAt: ts(101) }
        )
      }))

    test("settle runs in the caller's transaction: a rollback leaves the send and the counts", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const tx = yield* Transactor
        const ws = yield* newWorkspace()
        const b = broadcastOf(ws, 1, ts(10))
        yield* putBroadcast(b)
        const claimed = yield* store.claimDue(at(20), LEASE, HORIZON, 10)
        const c = claimed[0]!.claimId
        const rolledBack = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          assert.isTrue(
            Option.isSome((yield* store.settle(b.sends[0]!.workspaceId, b.sends[0]!.id, c, sent(), ts(21))).completed)
          )
          return yield* Effect.fail("boom")
        })))
        assert.strictEqual(rolledBack._tag, "Failure")
        assert.deepStrictEqual(yield* recipient(b, 0), b.sends[0])
        assert.deepStrictEqual(yield* getBroadcast(ws, b.record.id), b.record)
        const done = yield* store.settle(b.sends[0]!.workspaceId, b.sends[0]!.id, c, sent(), ts(22))
        assert.deepStrictEqual(completedOf(done)?.counts, { ...pendingCounts(1), sent: 1, pending: 0 })
      }))

    test("sweep: sends in flight whose mark ran out (every one with `all`) fail with unknown_outcome; counts follow; completion reported", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const b = broadcastOf(ws, 4, ts(10))
        const m = scheduledOf(ws, ts(11))
        yield* putBroadcast(b)
        yield* putScheduled(m)
        const claimed = yield* store.claimDue(at(20), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(claimed), [...sendIds(b.sends), m.send.id])
        const c = claimed[0]!.claimId
        const [s0, s1, s2, s3] = b.sends
        assert.isTrue(yield* store.markSending(s0!.workspaceId, s0!.id, c, at(100)))
        assert.isTrue(yield* store.markSending(s1!.workspaceId, s1!.id, c, at(200)))
        assert.isTrue(yield* store.markSending(m.send.workspaceId, m.send.id, c, at(100)))
        assert.isTrue((yield* store.settle(s2!.workspaceId, s2!.id, c, sent(), ts(30))).settled)
        // s3 stays pending (leased, then not): the sweep never touches it.

        assert.deepStrictEqual(yield* store.sweep(at(100), ts(100), false), [], "not yet ran out")
        assert.deepStrictEqual(yield* store.sweep(at(100) + 1, ts(101), false), [])
        const unknown = {
          code: UNKNOWN_OUTCOME,
          message:
            "The process sending this text stopped before recording the carrier's answer: it may have been delivered, and is not sent again"
        }
        assert.deepStrictEqual(yield* recipient(b, 0), {
          ...s0!,
          state: "failed",
          failure: unknown,
          updatedAt: ts(101)
        })
        assert.deepStrictEqual(yield* recipient(b, 1), { ...s1!, state: "sending" })
        assert.deepStrictEqual(yield* recipient(b, 3), s3)
        assert.deepStrictEqual(
          (yield* getScheduled(ws, m.record.id)).send,
          { ...m.send, state: "failed", failure: unknown, updatedAt: ts(101) }
        )
        assert.deepStrictEqual(yield* countsOf(b), { ...pendingCounts(4), sent: 1, failed: 1, pending: 2 })

        // s3 is settled; then the sweep with `all` (a sole worker's start) gives up s1 early and ends the broadcast.
        assert.isTrue((yield* store.settle(s3!.workspaceId, s3!.id, c, optedOut, ts(102))).settled)
        const finalCounts = { ...pendingCounts(4), sent: 1, failed: 2, skippedOptedOut: 1, pending: 0 }
        assert.deepStrictEqual(yield* store.sweep(at(150), ts(150), true), [
          { workspaceId: ws, broadcastId: b.record.id, counts: finalCounts }
        ])
        assert.deepStrictEqual(yield* recipient(b, 1), {
          ...s1!,
          state: "failed",
          failure: unknown,
          updatedAt: ts(150)
        })
        assert.deepStrictEqual(yield* getBroadcast(ws, b.record.id), {
          ...b.record,
          state: "completed",
          counts: finalCounts,
          completedAt: ts(150)
        })
        assert.deepStrictEqual(yield* countsOf(b), finalCounts)
        assert.deepStrictEqual(yield* store.sweep(at(1_000), ts(1_000), true), [], "nothing left in flight")
        assert.deepStrictEqual(yield* store.claimDue(at(1_000), LEASE, HORIZON, 10), [], "never sent again")
      }))

    test("settle upgrades a swept unknown_outcome to what really happened (failed - 1, outcome + 1), once", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const b = broadcastOf(ws, 3, ts(10))
        yield* putBroadcast(b)
        const claimed = yield* store.claimDue(at(20), LEASE, HORIZON, 10)
        const c = claimed[0]!.claimId
        for (const s of b.sends) assert.isTrue(yield* store.markSending(s.workspaceId, s.id, c, at(60)))
        const swept = { ...pendingCounts(3), failed: 3, pending: 0 }
        assert.deepStrictEqual(yield* store.sweep(at(61), ts(61), false), [
          { workspaceId: ws, broadcastId: b.record.id, counts: swept }
        ])
        const [s0, s1, s2] = b.sends

        const messageId = uuid()
        const upgraded = yield* store.settle(s0!.workspaceId, s0!.id, c, sent(messageId), ts(70))
        assert.isTrue(upgraded.settled)
        assert.deepStrictEqual(completedOf(upgraded), null, "it completed at the sweep")
        assert.deepStrictEqual(yield* countsOf(b), { ...swept, sent: 1, failed: 2 })
        assert.deepStrictEqual(yield* recipient(b, 0), { ...s0!, state: "sent", messageId, updatedAt: ts(70) })
        assert.isFalse((yield* store.settle(s0!.workspaceId, s0!.id, c, sent(), ts(71))).settled, "once")

        // A failure the carrier did report replaces the unknown one: failed stays failed.
        const failure = { code: "carrier_error", message: "Rejected by the carrier" }
        assert.isTrue((yield* store.settle(s1!.workspaceId, s1!.id, c, failed(failure), ts(72))).settled)
        assert.deepStrictEqual(yield* recipient(b, 1), { ...s1!, state: "failed", failure, updatedAt: ts(72) })
        assert.deepStrictEqual(yield* countsOf(b), { ...swept, sent: 1, failed: 2 })
        assert.isFalse(
          (yield* store.settle(s1!.workspaceId, s1!.id, c, sent(), ts(73))).settled,
          "a reported failure is final"
        )

        assert.isTrue((yield* store.settle(s2!.workspaceId, s2!.id, c, optedOut, ts(74))).settled)
        const finalCounts = { ...swept, sent: 1, failed: 1, skippedOptedOut: 1 }
        assert.deepStrictEqual(yield* countsOf(b), finalCounts)
        assert.deepStrictEqual(yield* getBroadcast(ws, b.record.id), {
          ...b.record,
          state: "completed",
          counts: finalCounts,
          completedAt: ts(61)
        })
      }))

    test("cancel skips pending sends (leased or not) with `canceled`; sends in flight finish; the broadcast is canceled", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const ws = yield* newWorkspace()
        const other = yield* newWorkspace()
        const b = broadcastOf(ws, 4, ts(10))
        yield* putBroadcast(b)
        const [s0, s1, s2, s3] = b.sends
        const claimed = yield* store.claimDue(at(20), LEASE, HORIZON, 2)
        assert.deepStrictEqual(ids(claimed), [s0!.id, s1!.id])
        const c = claimed[0]!.claimId
        assert.isTrue(yield* store.markSending(s0!.workspaceId, s0!.id, c, at(80)))

        const notHers = yield* store.cancel(other, b.record.id, ts(30))
        assert.strictEqual(notHers.skipped, 0, "another workspace's")
        assert.deepStrictEqual(yield* getBroadcast(ws, b.record.id), b.record)

        const canceled = yield* store.cancel(ws, b.record.id, ts(30))
        assert.strictEqual(canceled.skipped, 3)
        assert.deepStrictEqual(completedOf(canceled), null, "s0 is still in flight")
        const failure = { code: CANCELED, message: "Canceled before it was sent" }
        assert.deepStrictEqual(yield* recipients(b), [
          { ...s0!, state: "sending" },
          ...[s1!, s2!, s3!].map((s) => ({ ...s, state: "skipped" as const, failure, updatedAt: ts(30) }))
        ])
        assert.deepStrictEqual(yield* getBroadcast(ws, b.record.id), {
          ...b.record,
          state: "canceled",
          counts: { ...pendingCounts(4), skippedCanceled: 3, pending: 1 }
        })
        assert.deepStrictEqual(yield* countsOf(b), { ...pendingCounts(4), skippedCanceled: 3, pending: 1 })
        assert.isFalse(
          (yield* store.settle(s1!.workspaceId, s1!.id, c, sent(), ts(31))).settled,
          "a canceled send is not settled"
        )
        assert.deepStrictEqual(yield* store.claimDue(at(20) + LEASE + 1, LEASE, HORIZON, 10), [])

        // The send in flight finishes and ends the broadcast, which stays canceled.
        const finalCounts = { ...pendingCounts(4), sent: 1, skippedCanceled: 3, pending: 0 }
        const last = yield* store.settle(s0!.workspaceId, s0!.id, c, sent(), ts(40))
        assert.deepStrictEqual(completedOf(last), { workspaceId: ws, broadcastId: b.record.id, counts: finalCounts })
        assert.deepStrictEqual(yield* getBroadcast(ws, b.record.id), {
          ...b.record,
          state: "canceled",
          counts: finalCounts,
          completedAt: ts(40)
        })
        const again = yield* store.cancel(ws, b.record.id, ts(50))
        assert.strictEqual(again.skipped, 0)
        assert.deepStrictEqual(completedOf(again), null)

        // With nothing in flight, cancel itself ends the broadcast.
        const idle = broadcastOf(ws, 3, ts(500))
        yield* putBroadcast(idle)
        const ended = yield* store.cancel(ws, idle.record.id, ts(60))
        assert.strictEqual(ended.skipped, 3)
        const idleCounts = { ...pendingCounts(3), skippedCanceled: 3, pending: 0 }
        assert.deepStrictEqual(completedOf(ended), { workspaceId: ws, broadcastId: idle.record.id, counts: idleCounts })
        assert.deepStrictEqual(yield* getBroadcast(ws, idle.record.id), {
          ...idle.record,
          state: "canceled",
          counts: idleCounts,
          completedAt: ts(60)
        })

        // A scheduled message: skipped once; no counts, no completion.
        const m = scheduledOf(ws, ts(500))
        yield* putScheduled(m)
        const one = yield* store.cancel(ws, m.record.id, ts(70))
        assert.strictEqual(one.skipped, 1)
        assert.deepStrictEqual(completedOf(one), null)
        assert.deepStrictEqual(
          (yield* getScheduled(ws, m.record.id)).send,
          { ...m.send, state: "skipped", failure, updatedAt: ts(70) }
        )
        assert.strictEqual((yield* store.cancel(ws, m.record.id, ts(71))).skipped, 0)
        assert.strictEqual((yield* store.cancel(ws, uuid(), ts(71))).skipped, 0, "no such source")
      }))

    test("nextDue: the soonest pending send's dueAt, leased or not, read without the workspace clocks", () =>
      Effect.gen(function*() {
        const store = yield* SchedulingStore
        const clock = yield* WorkspaceClock
        assert.isTrue(Option.isNone(yield* store.nextDue()), "an empty queue")
        const a = yield* newWorkspace()
        const z = yield* newWorkspace()
        const b = broadcastOf(z, 2, ts(400))
        yield* putBroadcast(b)
        assert.strictEqual(Option.getOrThrow(yield* store.nextDue()), at(400))
        const m = scheduledOf(a, ts(300))
        yield* putScheduled(m)
        assert.strictEqual(Option.getOrThrow(yield* store.nextDue()), at(300))
        // A clock moved ahead only makes sends due sooner, which the worker's poll covers.
        yield* clock.advance(a, 150_000)
        yield* clock.advance(z, 50_000)
        assert.strictEqual(Option.getOrThrow(yield* store.nextDue()), at(300))

        // Leased, it is still pending; in flight or settled, it is not.
        const claimed = yield* store.claimDue(at(200), LEASE, HORIZON, 10)
        assert.deepStrictEqual(ids(claimed), [m.send.id], "due on its workspace's clock")
        assert.strictEqual(Option.getOrThrow(yield* store.nextDue()), at(300))
        assert.isTrue(yield* store.markSending(m.send.workspaceId, m.send.id, claimed[0]!.claimId, at(400)))
        assert.strictEqual(Option.getOrThrow(yield* store.nextDue()), at(400))
        yield* store.cancel(z, b.record.id, ts(301))
        assert.isTrue(Option.isNone(yield* store.nextDue()))
      }))

    it.effect("Pacer.reserve: the first booking starts now; the next ones follow, spaced by their segments; none beyond the horizon; workspaces apart", () =>
      Effect.gen(function*() {
        const pacer = yield* Pacer
        const a = uuid()
        const z = uuid()
        const now = at(1_000)
        const reserve = (ws: string, segments: number, perMinute: number, t: number, horizon = HORIZON) =>
          Effect.map(pacer.reserve(ws, segments, perMinute, t, horizon), Option.getOrNull)

        assert.strictEqual(yield* reserve(a, 1, 60, now), now)
        assert.strictEqual(yield* reserve(a, 2, 60, now), now + spacingMs(1, 60))
        // Booked until now + 3s: the next would start beyond now + 2s, so none is booked.
        assert.strictEqual(spacingMs(1, 60) + spacingMs(2, 60), 3_000)
        assert.strictEqual(yield* reserve(a, 1, 60, now), null)
        assert.strictEqual(yield* reserve(a, 1, 60, now + 999), null)
        assert.strictEqual(yield* reserve(a, 1, 60, now + 1_000), now + 3_000, "at the horizon exactly")
        assert.strictEqual(yield* reserve(a, 1, 60, now, 10_000), now + 4_000, "a longer horizon")

        // Another workspace has its own pace.
        assert.strictEqual(yield* reserve(z, 1, 60, now), now)
        assert.strictEqual(yield* reserve(z, 0, 7, now), now + spacingMs(1, 60))
        assert.strictEqual(spacingMs(0, 7), 8_572, "at least one segment, rounded up")
        assert.strictEqual(yield* reserve(z, 1, 7, now + 60_000), now + 60_000, "a pace gone quiet starts at now")
        assert.strictEqual(yield* reserve(z, 1, 7, now + 60_000, 10_000), now + 60_000 + 8_572)

        assert.strictEqual(yield* reserve(a, 1, 60, now + 5_000), now + 5_000)
      }))
  })

contract("SchedulingStore, Pacer: memory", MemoryStores.layer)

sqlContract({
  name: (db) => `SchedulingStore, Pacer: ${db}`,
  adapter: (client) => sqlStores(client),
  suite: contract,
  database: "scheduling"
})
