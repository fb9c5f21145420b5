/**
 * What the carrier sends us: inbound SMS/MMS and status reports for the messages we sent. Each
 * change and its event commit in one transaction.
 */
import { Effect, Option } from "effect"
import { phoneLock } from "../contacts/service.ts"
import { type ActivityRecord, newActivity, previewOf } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { NotFound } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { NumberStore } from "../numbers/model.ts"
import type { Attachments } from "./attachments.ts"
import type { InboundMessage, StatusReport } from "./carrier.ts"
import { advance, fromCarrier } from "./deliveryStatus.ts"
import { phoneField, type Threads } from "./threads.ts"

export const makeInbound = (threads: Threads, attachments: Attachments) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const numbers = yield* NumberStore
    const tx = yield* Transactor
    const outbox = yield* EventOutbox

    /** An inbound SMS/MMS: thread, placeholder contact, stored media, `message.received`. Idempotent per carrier id. */
    const receive = (inbound: InboundMessage) =>
      Effect.gen(function*() {
        const existing = yield* store.findByCarrierId(inbound.carrierMessageId)
        if (Option.isSome(existing)) return existing.value
        const to = yield* phoneField("to", inbound.to)
        const from = yield* phoneField("from", inbound.from)
        const number = yield* Effect.flatMap(
          numbers.findByE164(to),
          Effect.orElseFail(() => new NotFound({ message: `${to} is not a workspace number` }))
        )
        const ws = number.workspaceId
        // The text matters more than its attachments: media that cannot be fetched is logged and
        // left out rather than losing the message (the carrier would not resend it).
        const media = (yield* Effect.forEach(inbound.media, (m, i) =>
          attachments.store(ws, [m.url], `media[${i}]`).pipe(
            Effect.catchAll((e) =>
              Effect.logWarning("Inbound media could not be stored", e.message).pipe(Effect.as([]))
            )
          ))).flat()
        const now = yield* nowIso
        const { uuid } = yield* Ids
        return yield* tx.withTransaction(
          Effect.gen(function*() {
            // One placeholder per new number and no lost unread count, however many texts arrive at once.
            yield* tx.lock(phoneLock(ws, from))
            // The carrier may deliver the same message twice at once: the second copy finds the first here.
            const stored = yield* store.findByCarrierId(inbound.carrierMessageId)
            if (Option.isSome(stored)) return stored.value
            const line = { workspaceId: ws, numberE164: number.number.e164, participant: from, inboxId: number.inboxId }
            const thread = yield* threads.inbound(line, { at: now, preview: previewOf(inbound.body, media.length) })
            const record = newActivity({
              id: uuid(),
              workspaceId: ws,
              conversationId: thread.id,
              type: "message",
              direction: "inbound",
              body: inbound.body,
              media,
              deliveryStatus: "received",
              carrierMessageId: inbound.carrierMessageId,
              createdAt: now
            })
            yield* store.insertActivity(record)
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
      Effect.gen(function*() {
        const found = yield* store.findByCarrierId(report.carrierMessageId)
        if (Option.isNone(found)) return Option.none<ActivityRecord>()
        return Option.some(yield* applyStatusTo(found.value, report.status))
      })

    const applyStatusTo = (activity: ActivityRecord, carrierWord: string) =>
      Effect.gen(function*() {
        const reported = fromCarrier(carrierWord)
        if (reported === null || activity.direction !== "outbound") return activity
        return yield* tx.withTransaction(
          Effect.gen(function*() {
            // Reports for one message arrive at once: decide on the status read under its lock, or a
            // late "sent" could overwrite "delivered".
            yield* tx.lock(`activity:${activity.workspaceId}:${activity.id}`)
            const latest = Option.getOrElse(yield* store.getActivity(activity.workspaceId, activity.id), () => activity)
            const current = latest.deliveryStatus ?? "queued"
            const next = advance(current, reported)
            if (next === current) return latest
            const thread = Option.getOrThrow(yield* store.getThread(activity.workspaceId, activity.conversationId))
            yield* store.setDeliveryStatus(activity.workspaceId, activity.id, next)
            const data = {
              conversationId: thread.id,
              inboxId: thread.inboxId,
              activityId: activity.id,
              deliveryStatus: carrierWord
            }
            yield* outbox.append(activity.workspaceId, [
              next === "failed" ? event("message.failed", data) : event("message.delivered", data)
            ])
            return { ...latest, deliveryStatus: next }
          })
        )
      })

    return { receive, applyStatus, applyStatusTo } as const
  })
