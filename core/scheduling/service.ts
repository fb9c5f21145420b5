/**
 * The use cases of scheduled messages and broadcasts (CONTRACT "Scheduled messages and
 * broadcasts"): what `POST`, `GET` and `DELETE` do. Input is checked at once; gates, opt-outs and
 * media are checked when each text is sent (engine.ts), through the path `POST /messages` takes.
 */
import { Context, Effect, Either, Layer, Option } from "effect"
import type { Principal } from "../auth/principal.ts"
import { ContactStore } from "../contacts/store.ts"
import { WITHHELD } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { FailedPrecondition, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids, isUuid } from "../kernel/ids.ts"
import { CursorCodec, type Page } from "../kernel/pagination.ts"
import { normalizePhone, phoneField } from "../kernel/phone.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { NumberStore } from "../numbers/model.ts"
import { segmentsOf } from "../pacing/segments.ts"
import { workspaceNow } from "../workspaces/clock.ts"
import {
  type Broadcast,
  type BroadcastRecipient,
  type BroadcastRecord,
  type CreateBroadcastInput,
  type CreateScheduledMessageInput,
  type ListBroadcastsInput,
  type ListRecipientsInput,
  type ListScheduledMessagesInput,
  MAX_RECIPIENTS,
  recipientOf,
  type ScheduledMessage,
  type ScheduledRecord,
  scheduledStatusOf,
  type SendRecord,
  type SendState
} from "./model.ts"
import { type Completed, SchedulingStore } from "./store.ts"

const MINUTE = 60_000
const MAX_AHEAD = 30 * 24 * 60 * MINUTE
/** A client that asks for "one minute from now" reaches us a moment later. */
const LEEWAY = 5_000

const scheduledNotFound = new NotFound({ message: "No such scheduled message" })
const broadcastNotFound = new NotFound({ message: "No such broadcast" })

export const scheduledView = (record: ScheduledRecord, send: SendRecord): ScheduledMessage => ({
  id: record.id,
  to: record.to,
  from: record.from,
  conversationId: record.conversationId,
  body: record.body,
  mediaUrls: record.mediaUrls,
  sendAt: record.sendAt,
  status: scheduledStatusOf(send.state),
  messageId: send.messageId,
  failure: send.state === "failed" ? send.failure : null,
  createdAt: record.createdAt
})

/** A broadcast as shown: `scheduled` until its time comes on the workspace's clock. */
export const broadcastView = (b: BroadcastRecord, now: number): Broadcast => ({
  id: b.id,
  from: b.from,
  body: b.body,
  mediaUrls: b.mediaUrls,
  status: b.state === "active" ? (Date.parse(b.sendAt) > now ? "scheduled" : "sending") : b.state,
  sendAt: b.sendAt,
  counts: b.counts,
  createdAt: b.createdAt,
  completedAt: b.completedAt
})

/** `broadcast.completed`, appended in the transaction that ended the broadcast. */
export const completedEvent = (c: Completed) =>
  event("broadcast.completed", { broadcastId: c.broadcastId, counts: c.counts })

/** A source's send to one recipient, pending from the source's `sendAt`. */
const queued = (
  source: ScheduledRecord | BroadcastRecord,
  recipient: Pick<SendRecord, "seq" | "to" | "contactId" | "segments">,
  id: string
): SendRecord => ({
  workspaceId: source.workspaceId,
  id,
  source: "counts" in source ? "broadcast" : "scheduled",
  sourceId: source.id,
  ...recipient,
  dueAt: source.sendAt,
  state: "pending",
  messageId: null,
  failure: null,
  updatedAt: source.createdAt
})

const mediaProblem = (urls: ReadonlyArray<string>): string | undefined => {
  for (const [i, u] of urls.entries()) {
    const parsed = URL.canParse(u) ? new URL(u) : null
    if (parsed === null || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
      return `mediaUrls[${i}]: must be an http(s) URL`
    }
  }
  return undefined
}

export const make = Effect.gen(function*() {
  const store = yield* SchedulingStore
  const conversations = yield* ConversationStore
  const numbers = yield* NumberStore
  const contacts = yield* ContactStore
  const tx = yield* Transactor
  const cursors = yield* CursorCodec
  const outbox = yield* EventOutbox

  /** A sending number the caller named: checked now (the gates are checked at send time). */
  const checkFrom = (workspaceId: string, raw: string | undefined) =>
    Effect.gen(function*() {
      if (raw === undefined) return null
      const from = yield* phoneField("from", raw)
      const found = yield* numbers.findByE164(from)
      if (Option.isNone(found) || found.value.workspaceId !== workspaceId) {
        return yield* new NotFound({ message: `from: ${from} is not a number of this workspace` })
      }
      return from
    })

  const checkMedia = (urls: ReadonlyArray<string>) => {
    const problem = mediaProblem(urls)
    return problem === undefined ? Effect.void : Effect.fail(new InvalidArgument({ message: problem }))
  }

  /** `sendAt` as ISO, within what the caller may ask: from `min` ahead to 30 days ahead, on the workspace's clock. */
  const checkSendAt = (workspaceId: string, sendAt: string, minAhead: number) =>
    Effect.gen(function*() {
      const now = yield* workspaceNow(workspaceId)
      const at = Date.parse(sendAt)
      if (at < now + minAhead - LEEWAY) {
        return yield* new InvalidArgument({
          message: minAhead > 0
            ? `sendAt: must be at least 1 minute ahead (now is ${new Date(now).toISOString()})`
            : `sendAt: must not be in the past (now is ${new Date(now).toISOString()})`
        })
      }
      if (at > now + MAX_AHEAD) {
        return yield* new InvalidArgument({ message: "sendAt: must be at most 30 days ahead" })
      }
      return { at: new Date(at).toISOString(), now }
    })

  const createScheduled = (p: Principal, input: CreateScheduledMessageInput) =>
    Effect.gen(function*() {
      const ws = p.workspaceId
      if ((input.to === undefined) === (input.conversationId === undefined)) {
        return yield* new InvalidArgument({ message: "Give exactly one of to or conversationId" })
      }
      const { at } = yield* checkSendAt(ws, input.sendAt, MINUTE)
      yield* checkMedia(input.mediaUrls ?? [])
      const from = yield* checkFrom(ws, input.from)
      const to = input.conversationId !== undefined
        ? yield* Effect.gen(function*() {
          const thread = yield* findOr404(
            input.conversationId!,
            (id) => conversations.getThread(ws, id),
            new NotFound({ message: "No such conversation" })
          )
          if (thread.participant === WITHHELD) {
            return yield* new FailedPrecondition({
              message: "conversationId: this conversation is with withheld callers; there is no number to text"
            })
          }
          return thread.participant
        })
        : yield* phoneField("to", input.to!)
      const { uuid } = yield* Ids
      const createdAt = yield* nowIso
      const record: ScheduledRecord = {
        workspaceId: ws,
        id: uuid(),
        keyId: p.keyId,
        live: p.kind === "live",
        to,
        from,
        conversationId: input.conversationId ?? null,
        body: input.body,
        mediaUrls: input.mediaUrls ?? [],
        sendAt: at,
        createdAt
      }
      const send = queued(record, { seq: 0, to, contactId: null, segments: segmentsOf(input.body).segments }, uuid())
      yield* tx.withTransaction(store.insertScheduled(record, send))
      return { scheduledMessage: scheduledView(record, send) }
    })

  const getScheduled = (p: Principal, id: string) =>
    Effect.map(
      findOr404(id, (i) => store.getScheduled(p.workspaceId, i), scheduledNotFound),
      ({ record, send }) => ({ scheduledMessage: scheduledView(record, send) })
    )

  const statesOf: Record<ScheduledMessage["status"], ReadonlyArray<SendState>> = {
    scheduled: ["pending", "sending"],
    sent: ["sent"],
    failed: ["failed"],
    canceled: ["skipped"]
  }

  const listScheduled = (p: Principal, input: ListScheduledMessagesInput) =>
    Effect.gen(function*() {
      const limit = input.limit ?? 50
      const scope = `scheduled-messages:${p.workspaceId}:${input.status ?? ""}`
      let after: { sendAt: string; id: string } | null = null
      if (input.cursor !== undefined) {
        const [sendAt, id] = yield* cursors.decode(scope, input.cursor)
        if (typeof sendAt !== "string" || typeof id !== "string") {
          return yield* new InvalidArgument({ message: "cursor is invalid" })
        }
        after = { sendAt, id }
      }
      const rows = yield* store.listScheduled({
        workspaceId: p.workspaceId,
        states: input.status === undefined ? null : statesOf[input.status],
        after,
        limit
      })
      const last = rows[rows.length - 1]
      const page: Page<ScheduledMessage> = {
        items: rows.map(({ record, send }) => scheduledView(record, send)),
        nextCursor: rows.length === limit && last !== undefined
          ? yield* cursors.encode(scope, [last.record.sendAt, last.record.id])
          : null
      }
      return page
    })

  const cancelScheduled = (p: Principal, id: string) =>
    Effect.gen(function*() {
      const ws = p.workspaceId
      return yield* tx.withTransaction(Effect.gen(function*() {
        const found = yield* findOr404(id, (i) => store.getScheduled(ws, i), scheduledNotFound)
        const state = found.send.state
        if (state !== "pending" && state !== "skipped") {
          return yield* new FailedPrecondition({
            message: state === "sending"
              ? "This scheduled message is being sent; it can no longer be canceled"
              : `This scheduled message was already ${state}; it can no longer be canceled`
          })
        }
        // A worker may have marked it in flight since it was read: then nothing was skipped.
        if (state === "pending" && (yield* store.cancel(ws, found.record.id, yield* nowIso)).skipped === 0) {
          return yield* new FailedPrecondition({
            message: "This scheduled message is being sent; it can no longer be canceled"
          })
        }
        const after = yield* store.getScheduled(ws, found.record.id)
        const { record, send } = Option.getOrThrow(after)
        return { scheduledMessage: scheduledView(record, send) }
      }))
    })

  /** The recipients, deduplicated by phone in the order given: phones, then contacts by id, then by tag. */
  const audienceOf = (ws: string, input: CreateBroadcastInput["recipients"]) =>
    Effect.gen(function*() {
      const recipients = new Map<string, string | null>()
      for (const [i, raw] of (input.phones ?? []).entries()) {
        const phone = normalizePhone(raw)
        if (Either.isLeft(phone)) {
          return yield* new InvalidArgument({ message: `recipients.phones[${i}]: ${phone.left}` })
        }
        if (!recipients.has(phone.right)) recipients.set(phone.right, null)
      }
      const ids = [...new Set(input.contactIds ?? [])]
      const unknown = ids.find((id) => !isUuid(id))
      if (unknown !== undefined) {
        return yield* new InvalidArgument({ message: `recipients.contactIds: no contact ${unknown}` })
      }
      const tags = [...new Set(input.tags ?? [])]
      const found = yield* contacts.audience(ws, ids, tags, MAX_RECIPIENTS + ids.length + 1)
      const byId = new Map(found.map((c) => [c.id, c]))
      for (const id of ids) {
        const c = byId.get(id)
        if (c === undefined) return yield* new InvalidArgument({ message: `recipients.contactIds: no contact ${id}` })
        if (c.phone === null) {
          return yield* new InvalidArgument({ message: `recipients.contactIds: contact ${id} has no phone number` })
        }
      }
      // Named contacts first, then the tagged ones (oldest first); a tagged contact without a phone is no recipient.
      const named = new Set(ids)
      for (const c of [...ids.map((id) => byId.get(id)!), ...found.filter((c) => !named.has(c.id))]) {
        if (c.phone === null) continue
        // A phone given directly is that contact's too: the contact is named.
        if (!recipients.has(c.phone) || recipients.get(c.phone) === null) recipients.set(c.phone, c.id)
      }
      if (recipients.size === 0) {
        return yield* new InvalidArgument({
          message: "recipients: no one to send to; give phones, contactIds or tags of contacts with phone numbers"
        })
      }
      if (recipients.size > MAX_RECIPIENTS) {
        return yield* new InvalidArgument({
          message: `recipients: at most ${MAX_RECIPIENTS} after removing duplicates (these come to ${
            recipients.size > MAX_RECIPIENTS + ids.length ? "more" : recipients.size
          })`
        })
      }
      return [...recipients.entries()]
    })

  const createBroadcast = (p: Principal, input: CreateBroadcastInput) =>
    Effect.gen(function*() {
      const ws = p.workspaceId
      const now = yield* workspaceNow(ws)
      const sendAt = input.sendAt === undefined
        ? new Date(now).toISOString()
        : (yield* checkSendAt(ws, input.sendAt, 0)).at
      yield* checkMedia(input.mediaUrls ?? [])
      const from = yield* checkFrom(ws, input.from)
      const audience = yield* audienceOf(ws, input.recipients)
      const { uuid } = yield* Ids
      const createdAt = yield* nowIso
      const total = audience.length
      const record: BroadcastRecord = {
        workspaceId: ws,
        id: uuid(),
        keyId: p.keyId,
        live: p.kind === "live",
        from,
        body: input.body,
        mediaUrls: input.mediaUrls ?? [],
        sendAt,
        state: "active",
        counts: { total, sent: 0, failed: 0, skippedOptedOut: 0, skippedCanceled: 0, pending: total },
        createdAt,
        completedAt: null
      }
      const segments = segmentsOf(input.body).segments
      const sends = audience.map(([to, contactId], seq) => queued(record, { seq, to, contactId, segments }, uuid()))
      yield* tx.withTransaction(store.insertBroadcast(record, sends))
      return { broadcast: broadcastView(record, now) }
    })

  const getBroadcast = (p: Principal, id: string) =>
    Effect.gen(function*() {
      const b = yield* findOr404(id, (i) => store.getBroadcast(p.workspaceId, i), broadcastNotFound)
      return { broadcast: broadcastView(b, yield* workspaceNow(p.workspaceId)) }
    })

  const listBroadcasts = (p: Principal, input: ListBroadcastsInput) =>
    Effect.gen(function*() {
      const limit = input.limit ?? 50
      const scope = `broadcasts:${p.workspaceId}`
      let after: { createdAt: string; id: string } | null = null
      if (input.cursor !== undefined) {
        const [createdAt, id] = yield* cursors.decode(scope, input.cursor)
        if (typeof createdAt !== "string" || typeof id !== "string") {
          return yield* new InvalidArgument({ message: "cursor is invalid" })
        }
        after = { createdAt, id }
      }
      const rows = yield* store.listBroadcasts({ workspaceId: p.workspaceId, after, limit })
      const now = yield* workspaceNow(p.workspaceId)
      const last = rows[rows.length - 1]
      const page: Page<Broadcast> = {
        items: rows.map((b) => broadcastView(b, now)),
        nextCursor: rows.length === limit && last !== undefined
          ? yield* cursors.encode(scope, [last.createdAt, last.id])
          : null
      }
      return page
    })

  const listRecipients = (p: Principal, id: string, input: ListRecipientsInput) =>
    Effect.gen(function*() {
      const b = yield* findOr404(id, (i) => store.getBroadcast(p.workspaceId, i), broadcastNotFound)
      const limit = input.limit ?? 50
      const scope = `broadcast-recipients:${b.id}:${input.status ?? ""}`
      let afterSeq: number | null = null
      if (input.cursor !== undefined) {
        const [seq] = yield* cursors.decode(scope, input.cursor)
        if (typeof seq !== "number") return yield* new InvalidArgument({ message: "cursor is invalid" })
        afterSeq = seq
      }
      const states: ReadonlyArray<SendState> | null = input.status === undefined
        ? null
        : input.status === "pending"
        ? ["pending", "sending"]
        : [input.status]
      const rows = yield* store.listRecipients({
        workspaceId: p.workspaceId,
        broadcastId: b.id,
        states,
        afterSeq,
        limit
      })
      const last = rows[rows.length - 1]
      const page: Page<BroadcastRecipient> = {
        items: rows.map(recipientOf),
        nextCursor: rows.length === limit && last !== undefined ? yield* cursors.encode(scope, [last.seq]) : null
      }
      return page
    })

  const cancelBroadcast = (p: Principal, id: string) =>
    Effect.gen(function*() {
      const ws = p.workspaceId
      return yield* tx.withTransaction(Effect.gen(function*() {
        const b = yield* findOr404(id, (i) => store.getBroadcast(ws, i), broadcastNotFound)
        if (b.state === "completed") {
          return yield* new FailedPrecondition({
            message: "This broadcast has completed; it can no longer be canceled"
          })
        }
        if (b.state === "active") {
          const { completed } = yield* store.cancel(ws, b.id, yield* nowIso)
          if (Option.isSome(completed)) yield* outbox.append(ws, [completedEvent(completed.value)])
        }
        const after = Option.getOrThrow(yield* store.getBroadcast(ws, b.id))
        return { broadcast: broadcastView(after, yield* workspaceNow(ws)) }
      }))
    })

  return {
    createScheduled,
    getScheduled,
    listScheduled,
    cancelScheduled,
    createBroadcast,
    getBroadcast,
    listBroadcasts,
    listRecipients,
    cancelBroadcast
  } as const
})

export class Scheduling extends Context.Tag("core/Scheduling")<Scheduling, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Scheduling, make)
