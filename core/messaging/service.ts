/**
 * Messaging use cases: sending SMS/MMS through the gates, storing inbound traffic, applying carrier
 * status reports. Every state change and its events commit in one transaction.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { type Principal, requireScope } from "../auth/principal.ts"
import { Contacts, phoneLock } from "../contacts/service.ts"
import { ContactStore } from "../contacts/store.ts"
import { ConversationStore } from "../conversations/store.ts"
import type { ActivityRecord, Thread } from "../conversations/model.ts"
import { previewOf } from "../conversations/model.ts"
import { FailedPrecondition, Internal, InvalidArgument, NotFound } from "../errors.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { Ids, isUuid } from "../ids.ts"
import { BlobStore, MediaFetcher, MediaUrls, type StoredMedia } from "../media.ts"
import { NumberStore, type NumberRecord } from "../numbers.ts"
import { type E164, normalizePhone } from "../phone.ts"
import { Text } from "../text.ts"
import { nowIso } from "../time.ts"
import { Transactor } from "../transactor.ts"
import { Carrier, type InboundMessage, type StatusReport } from "./carrier.ts"
import { advance, fromCarrier } from "./deliveryStatus.ts"
import { gateMessage, RegistrationGate } from "./registration.ts"
import { ActivityViews } from "./views.ts"

export const SendMessageInput = Schema.Struct({
  body: Text(1600).pipe(Schema.minLength(1)),
  conversationId: Schema.optional(Schema.String),
  to: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  from: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  mediaUrls: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(2048))).pipe(Schema.maxItems(10)))
}).annotations({ identifier: "SendMessageInput", parseOptions: { onExcessProperty: "error" } })
export type SendMessageInput = typeof SendMessageInput.Type

const conversationNotFound = new NotFound({ message: "No such conversation" })

export const make = Effect.gen(function* () {
  const store = yield* ConversationStore
  const numbers = yield* NumberStore
  const contacts = yield* Contacts
  const contactStore = yield* ContactStore
  const tx = yield* Transactor
  const outbox = yield* EventOutbox
  const carrier = yield* Carrier
  const fetcher = yield* MediaFetcher
  const blobs = yield* BlobStore
  const mediaUrls = yield* MediaUrls
  const registration = yield* RegistrationGate
  const views = yield* ActivityViews

  const phone = (field: string, raw: string) =>
    Effect.mapError(normalizePhone(raw), (why) => new InvalidArgument({ message: `${field}: ${why}` }))

  /** Fetches and stores media once; errors name the offending `mediaUrls[i]`. */
  const storeMedia = (workspaceId: string, urls: ReadonlyArray<string>, field: string) =>
    Effect.forEach(
      urls,
      (url, i) =>
        Effect.gen(function* () {
          const fetched = yield* fetcher.fetch(url).pipe(
            Effect.mapError((e) => new InvalidArgument({ message: `${field}[${i}]: ${e.message}` }))
          )
          const { uuid } = yield* Ids
          const key = uuid()
          yield* blobs.put(workspaceId, key, fetched.bytes, fetched.contentType)
          const stored: StoredMedia = { key, contentType: fetched.contentType, size: fetched.bytes.byteLength, filename: fetched.filename }
          return stored
        }),
      { concurrency: 4 }
    )

  /**
   * The thread of (number, participant), created on first contact. Inbound traffic from an unknown
   * number creates a placeholder contact; an outbound message attaches the thread to an existing
   * contact of that number, if any, and creates none.
   */
  const threadFor = (workspaceId: string, number: NumberRecord, participant: E164, now: string, direction: "inbound" | "outbound") =>
    Effect.gen(function* () {
      const contactId =
        direction === "inbound"
          ? (yield* contacts.findOrCreatePlaceholder(workspaceId, participant)).id
          : ((yield* contactStore.findByPhones(workspaceId, [participant]))[0]?.id ?? null)
      const existing = yield* store.findThread(workspaceId, number.number.e164, participant)
      if (Option.isSome(existing)) {
        // A thread whose contact was deleted is re-attached to the contact the number now belongs to.
        return existing.value.contactId === null ? { ...existing.value, contactId } : existing.value
      }
      const { uuid } = yield* Ids
      const thread: Thread = {
        id: uuid(),
        workspaceId,
        inboxId: number.inboxId,
        numberE164: number.number.e164,
        participant,
        contactId,
        status: "open",
        assigneeUid: null,
        lastActivityAt: now,
        preview: null,
        unread: 0,
        createdAt: now
      }
      return yield* store.insertThread(thread)
    })

  /** The number to send from: the thread's, the requested one, or the workspace's first active number. */
  const sendingNumber = (workspaceId: string, requested: string | undefined) =>
    Effect.gen(function* () {
      const owned = (yield* numbers.list(workspaceId)).filter((n) => n.status === "active")
      if (owned.length === 0) {
        return yield* new FailedPrecondition({ message: "The workspace has no active phone number: add one before texting" })
      }
      if (requested !== undefined) {
        const e164 = yield* phone("from", requested)
        if (!owned.some((n) => n.e164 === e164)) return yield* new NotFound({ message: `from: ${e164} is not a number of this workspace` })
        return e164
      }
      return (owned.find((n) => n.type === "local") ?? owned[0]!).e164
    })

  const send = (principal: Principal, input: SendMessageInput) =>
    Effect.gen(function* () {
      yield* requireScope(principal, "messages:send")
      const ws = principal.workspaceId
      if ((input.to === undefined) === (input.conversationId === undefined)) {
        return yield* new InvalidArgument({ message: "Give exactly one of to or conversationId" })
      }
      let from: string
      let to: E164
      if (input.conversationId !== undefined) {
        if (!isUuid(input.conversationId)) return yield* conversationNotFound
        const thread = yield* store.getThread(ws, input.conversationId).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(conversationNotFound), onSome: Effect.succeed }))
        )
        from = thread.numberE164
        to = thread.participant as E164
        yield* sendingNumber(ws, from)
      } else {
        to = yield* phone("to", input.to!)
        from = yield* sendingNumber(ws, input.from)
      }
      const number = Option.getOrThrow(yield* numbers.findByE164(from))
      if (number.number.type === "toll_free") {
        return yield* new FailedPrecondition({ message: `${from} is toll-free: toll-free numbers cannot text; send from a local number` })
      }
      const simulated = principal.kind === "test"
      if (!simulated) {
        const state = yield* registration.textingState(ws)
        if (state !== "approved") return yield* new FailedPrecondition({ message: gateMessage[state] })
      }
      const media = yield* storeMedia(ws, input.mediaUrls ?? [], "mediaUrls")
      // The carrier is called before anything is stored: a refused message leaves no trace, and
      // the answer returns once the carrier has accepted it (SPEC). Test keys never reach a carrier.
      const accepted = simulated
        ? { carrierMessageId: null, status: "simulated" as const }
        : yield* carrier
            .send({ from, to, body: input.body, mediaUrls: yield* Effect.forEach(media, (m) => mediaUrls.sign(ws, m.key)) })
            .pipe(
              Effect.mapError((e) =>
                e.reason === "rejected"
                  ? new FailedPrecondition({ message: `The carrier refused the message: ${e.message}` })
                  : new Internal({ message: `The carrier is unavailable (${e.message}); retry with the same Idempotency-Key` })
              )
            )
      const now = yield* nowIso
      const { uuid } = yield* Ids
      const activity: ActivityRecord = {
        id: uuid(),
        workspaceId: ws,
        conversationId: "",
        type: "message",
        direction: "outbound",
        authorUid: null,
        body: input.body,
        media,
        deliveryStatus: accepted.status,
        carrierMessageId: accepted.carrierMessageId,
        call: null,
        aiTags: [],
        callTranscript: null,
        createdAt: now
      }
      const stored = yield* tx.withTransaction(
        Effect.gen(function* () {
          // The thread row is read, then rewritten: one writer per participant at a time.
          yield* tx.lock(phoneLock(ws, to))
          const thread = yield* threadFor(ws, number, to, now, "outbound")
          const record = { ...activity, conversationId: thread.id }
          yield* store.insertActivity(record)
          // An outbound message means the team has seen the thread.
          yield* store.updateThread({ ...thread, lastActivityAt: now, preview: previewOf(input.body, media.length), unread: 0 })
          yield* outbox.append(ws, [
            event("message.delivered", { conversationId: thread.id, inboxId: thread.inboxId, activityId: record.id })
          ])
          return record
        })
      )
      return { message: yield* views.view(stored), conversationId: stored.conversationId, ...(simulated ? { simulated: true as const } : {}) }
    })

  /** An inbound SMS/MMS: thread, placeholder contact, stored media, `message.received`. Idempotent per carrier id. */
  const receive = (inbound: InboundMessage) =>
    Effect.gen(function* () {
      const existing = yield* store.findByCarrierId(inbound.carrierMessageId)
      if (Option.isSome(existing)) return existing.value
      const to = yield* phone("to", inbound.to)
      const from = yield* phone("from", inbound.from)
      const number = yield* numbers.findByE164(to).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new NotFound({ message: `${to} is not a workspace number` })), onSome: Effect.succeed }))
      )
      const ws = number.workspaceId
      // The text matters more than its attachments: media that cannot be fetched is logged and
      // left out rather than losing the message (the carrier would not resend it).
      const media = (yield* Effect.forEach(inbound.media, (m, i) =>
        storeMedia(ws, [m.url], `media[${i}]`).pipe(
          Effect.catchAll((e) => Effect.logWarning("Inbound media could not be stored", e.message).pipe(Effect.as([])))
        )
      )).flat()
      const now = yield* nowIso
      const { uuid } = yield* Ids
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          // One placeholder per new number and no lost unread count, however many texts arrive at once.
          yield* tx.lock(phoneLock(ws, from))
          // The carrier may deliver the same message twice at once: the second copy finds the first here.
          const stored = yield* store.findByCarrierId(inbound.carrierMessageId)
          if (Option.isSome(stored)) return stored.value
          const thread = yield* threadFor(ws, number, from, now, "inbound")
          const record: ActivityRecord = {
            id: uuid(),
            workspaceId: ws,
            conversationId: thread.id,
            type: "message",
            direction: "inbound",
            authorUid: null,
            body: inbound.body,
            media,
            deliveryStatus: "received",
            carrierMessageId: inbound.carrierMessageId,
            call: null,
            aiTags: [],
            callTranscript: null,
            createdAt: now
          }
          yield* store.insertActivity(record)
          // New inbound traffic reopens a done thread and counts as unread.
          yield* store.updateThread({
            ...thread,
            status: "open",
            lastActivityAt: now,
            preview: previewOf(inbound.body, media.length),
            unread: thread.unread + 1
          })
          yield* outbox.append(ws, [
            event("message.received", {
              numberE164: number.number.e164,
              conversationId: thread.id,
              inboxId: thread.inboxId,
              activityId: record.id,
              contactId: thread.contactId!
            })
          ])
          return record
        })
      )
    })

  /** A carrier status report: forward-only; an event for each change, none for a stale report. */
  const applyStatus = (report: StatusReport) =>
    Effect.gen(function* () {
      const found = yield* store.findByCarrierId(report.carrierMessageId)
      if (Option.isNone(found)) return Option.none<ActivityRecord>()
      return Option.some(yield* applyStatusTo(found.value, report.status))
    })

  const applyStatusTo = (activity: ActivityRecord, carrierWord: string) =>
    Effect.gen(function* () {
      const reported = fromCarrier(carrierWord)
      if (reported === null || activity.direction !== "outbound") return activity
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          // Reports for one message arrive at once: decide on the status read under its lock, or a
          // late "sent" could overwrite "delivered".
          yield* tx.lock(`activity:${activity.workspaceId}:${activity.id}`)
          const latest = Option.getOrElse(yield* store.getActivity(activity.workspaceId, activity.id), () => activity)
          const current = latest.deliveryStatus ?? "queued"
          const next = advance(current, reported)
          if (next === current) return latest
          const thread = Option.getOrThrow(yield* store.getThread(activity.workspaceId, activity.conversationId))
          yield* store.setDeliveryStatus(activity.workspaceId, activity.id, next)
          const data = { conversationId: thread.id, inboxId: thread.inboxId, activityId: activity.id, deliveryStatus: carrierWord }
          yield* outbox.append(activity.workspaceId, [next === "failed" ? event("message.failed", data) : event("message.delivered", data)])
          return { ...latest, deliveryStatus: next }
        })
      )
    })

  return { send, receive, applyStatus, applyStatusTo } as const
})

export class Messaging extends Context.Tag("core/Messaging")<Messaging, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Messaging, make)
