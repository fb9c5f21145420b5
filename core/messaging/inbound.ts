/**
 * What the carrier sends us: inbound SMS/MMS and status reports for the messages we sent. Each
 * change and its event commit in one transaction.
 */
import { Effect, identity, Option } from "effect"
import { phoneLock } from "../contacts/service.ts"
import { type ActivityRecord, newActivity, previewOf, WITHHELD } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { NotFound } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { phoneField } from "../kernel/phone.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { NumberStore } from "../numbers/model.ts"
import { carrierWordOf, type Keyword, keywordOf, replyTo } from "../optouts/keywords.ts"
import { OptOuts } from "../optouts/service.ts"
import { RegistrationStore } from "../registration/store.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import type { Attachments } from "./attachments.ts"
import { Carrier, type InboundMessage, type StatusReport } from "./carrier.ts"
import { advance, fromCarrier } from "./deliveryStatus.ts"
import type { Reply } from "./outbound.ts"
import type { Threads } from "./threads.ts"

export const makeInbound = (threads: Threads, attachments: Attachments, reply: Reply) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const numbers = yield* NumberStore
    const tx = yield* Transactor
    const outbox = yield* EventOutbox
    const optOuts = yield* OptOuts
    const carrier = yield* Carrier
    const registrations = yield* RegistrationStore
    const workspaces = yield* WorkspaceStore

    /** How the business names itself in a keyword's answer (CONTRACT "Opt-outs and keywords"). */
    const replyContext = (workspaceId: string) =>
      Effect.gen(function*() {
        const registration = Option.getOrNull(yield* registrations.get(workspaceId))
        if (registration !== null) {
          const b = registration.business
          return {
            brand: b.displayName,
            helpMessage: registration.campaignInput.helpMessage ?? null,
            contact: b.phone ?? b.email ?? b.website ?? null
          }
        }
        const workspace = yield* workspaces.get(workspaceId)
        return {
          brand: Option.match(workspace, { onNone: () => "This business", onSome: (w) => w.name }),
          helpMessage: null,
          contact: null
        }
      })

    /**
     * A keyword's effect, in the inbound text's transaction under the sender's lock: STOP opts the
     * sender out, START opts an opted-out sender back in, HELP changes nothing. Answers what to reply
     * to: a STOP that opted out, a START that opted in, any HELP.
     */
    const applyKeyword = (workspaceId: string, from: string, keyword: Keyword) =>
      Effect.gen(function*() {
        switch (keyword.kind) {
          case "stop":
            return (yield* optOuts.optOut(workspaceId, from, { source: "keyword", keyword: keyword.word, note: null }))
                .created
              ? keyword
              : null
          case "start":
            return (yield* optOuts.optIn(workspaceId, from, {
                source: "keyword",
                keyword: keyword.word,
                actor: "recipient"
              }))
              ? keyword
              : null
          case "help":
            return keyword
        }
      })

    /**
     * An inbound SMS/MMS: thread, placeholder contact, stored media, `message.received`, and its
     * keyword's effect and answer. Idempotent per carrier id. `simulated`: delivered by the test
     * helpers, so its answer is simulated too, and no carrier answered it.
     */
    const receive = (inbound: InboundMessage, simulated = false) =>
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
        const keyword = keywordOf(inbound.body)
        const line = { workspaceId: ws, numberE164: number.number.e164, participant: from, inboxId: number.inboxId }
        // A keyword holds the sender's key as a send does (outbound.ts `transmit`): an opt-out
        // comes before a send's check or after its record.
        const received = yield* (keyword === null ? identity : tx.exclusive(phoneLock(ws, from)))(tx.withTransaction(
          Effect.gen(function*() {
            // One placeholder per new number and no lost unread count, however many texts arrive at once.
            yield* tx.lock(phoneLock(ws, from))
            // The carrier may deliver the same message twice at once: the second copy finds the first here.
            const stored = yield* store.findByCarrierId(inbound.carrierMessageId)
            if (Option.isSome(stored)) return { record: stored.value, answer: null }
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
            return { record, answer: keyword === null ? null : yield* applyKeyword(ws, from, keyword) }
          })
        ))
        const { answer } = received
        // A carrier that answers the text itself (Telnyx's profile) is not answered twice; a text
        // it does not take as its keyword (`Stop.`) is answered here.
        if (answer !== null && (simulated || !carrier.answersKeywords.has(carrierWordOf(inbound.body)))) {
          const text = replyTo(answer.kind, yield* replyContext(ws))
          yield* reply(number, line, text, simulated).pipe(
            Effect.catchAll((e) => Effect.logWarning("A keyword's answer could not be sent", e.message))
          )
        }
        return received.record
      })

    /** A carrier status report: forward-only; an event for each change, none for a stale report. */
    const applyStatus = (report: StatusReport) =>
      Effect.gen(function*() {
        const found = yield* store.findByCarrierId(report.carrierMessageId)
        if (Option.isNone(found)) return Option.none<ActivityRecord>()
        return Option.some(yield* applyStatusTo(found.value, report.status, report.optedOut ?? false))
      })

    /** `optedOut`: the carrier says the recipient opted out with it; a failure then records their opt-out. */
    const applyStatusTo = (activity: ActivityRecord, carrierWord: string, optedOut = false) =>
      Effect.gen(function*() {
        const reported = fromCarrier(carrierWord)
        if (reported === null || activity.direction !== "outbound") return activity
        const updated = yield* tx.withTransaction(
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
        if (optedOut && updated.deliveryStatus === "failed") yield* carrierOptOut(updated, carrierWord)
        return updated
      })

    /** The carrier failed a text because its recipient opted out with it: their opt-out, recorded once. */
    const carrierOptOut = (activity: ActivityRecord, carrierWord: string) =>
      Effect.gen(function*() {
        const thread = yield* store.getThread(activity.workspaceId, activity.conversationId)
        if (Option.isNone(thread) || thread.value.participant === WITHHELD) return
        const phone = thread.value.participant
        yield* tx.exclusive(phoneLock(activity.workspaceId, phone))(
          tx.withTransaction(
            optOuts.optOut(activity.workspaceId, phone, {
              source: "carrier",
              keyword: null,
              note: `The carrier reported ${carrierWord}`
            })
          )
        )
      })

    return { receive, applyStatus, applyStatusTo } as const
  })
