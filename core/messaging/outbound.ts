/**
 * Sending SMS/MMS: the gates (scope, target, sending number, toll-free, registration), media, the
 * carrier, then the thread, activity and `message.delivered` in one transaction. Each row is read
 * once on the way: the thread a caller names is read before the carrier call and, under the phone
 * lock, only the columns a message sets are written to it.
 */
import { Data, Effect, Either, Option, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { Activity, type ActivityRecord, newActivity, previewOf, type Thread, WITHHELD } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { FailedPrecondition, Internal, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids } from "../kernel/ids.ts"
import { type E164, normalizePhone, phoneField } from "../kernel/phone.ts"
import { Text } from "../kernel/text.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { MediaUrls, type StoredMedia } from "../media/model.ts"
import { defaultNumber, notOrdered, type NumberRecord, NumberStore } from "../numbers/model.ts"
import { optedOutMessage } from "../optouts/model.ts"
import { OptOuts } from "../optouts/service.ts"
import { notAssigned } from "../registration/assignment.ts"
import { gateMessage, RegistrationGate } from "../registration/gate.ts"
import type { Attachments } from "./attachments.ts"
import { type Accepted, Carrier, type CarrierError } from "./carrier.ts"
import { type Line, type Threads } from "./threads.ts"
import { ActivityViews } from "./views.ts"

export const SendMessageInput = Schema.Struct({
  body: Text(1600).pipe(Schema.minLength(1)),
  conversationId: Schema.optional(Schema.String),
  to: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  from: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  mediaUrls: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(2048))).pipe(Schema.maxItems(10)))
}).annotations({ identifier: "SendMessageInput", parseOptions: { onExcessProperty: "error" } })
export type SendMessageInput = typeof SendMessageInput.Type

/** What a send answers; an idempotent replay gives back its encoding. */
export const SendMessageResult = Schema.Struct({
  message: Activity,
  conversationId: Schema.UUID,
  simulated: Schema.optional(Schema.Literal(true))
})
export type SendMessageResult = typeof SendMessageResult.Type

const conversationNotFound = new NotFound({ message: "No such conversation" })
const withheldThread = new FailedPrecondition({
  message: "conversationId: this conversation is with withheld callers; there is no number to text"
})
const noActiveNumber = new FailedPrecondition({
  message: "The workspace has no active phone number: add one before texting"
})

/**
 * What a queued send (core/scheduling) adds to the path `POST /messages` takes, so the two cannot
 * drift: `inRecord` settles it in the transaction that records the message (false, for a test
 * key's send: no longer this worker's to send; roll back, nothing stored).
 */
export interface SendHooks {
  readonly inRecord: (message: ActivityRecord) => Effect.Effect<boolean>
}

/** A queued send that another worker, or a cancel, took over: nothing was sent. */
export class Superseded extends Data.TaggedError("Superseded") {}

const noHooks: SendHooks = { inRecord: () => Effect.succeed(true) }

/** Sends a keyword's answer (outbound.ts `reply`). */
export type Reply = (
  sender: NumberRecord,
  line: Line,
  body: string,
  simulated: boolean
) => Effect.Effect<Option.Option<ActivityRecord>, FailedPrecondition | Internal>

export const makeOutbound = (threads: Threads, attachments: Attachments) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const numbers = yield* NumberStore
    const tx = yield* Transactor
    const outbox = yield* EventOutbox
    const carrier = yield* Carrier
    const mediaUrls = yield* MediaUrls
    const registration = yield* RegistrationGate
    const views = yield* ActivityViews
    const optOuts = yield* OptOuts

    /** The workspace's first active number, local preferred (and, for live keys, ordered at the carrier). */
    const defaultSender = (workspaceId: string, live: boolean) =>
      Effect.gen(function*() {
        const sender = defaultNumber(yield* numbers.listActive(workspaceId), live)
        return sender ?? (yield* noActiveNumber)
      })

    /**
     * A number the caller named (or the thread's): read by itself when it is an active number of
     * the workspace. A refusal keeps the gate order: no active number at all comes first.
     */
    const namedSender = (workspaceId: string, raw: string) =>
      Effect.gen(function*() {
        const parsed = normalizePhone(raw)
        const found = Either.isRight(parsed)
          ? Option.filter(
            yield* numbers.findByE164(parsed.right),
            (n) => n.workspaceId === workspaceId && n.number.status === "active"
          )
          : Option.none()
        if (Option.isSome(found)) return found.value
        if ((yield* numbers.listActive(workspaceId)).length === 0) return yield* noActiveNumber
        if (Either.isLeft(parsed)) return yield* new InvalidArgument({ message: `from: ${parsed.left}` })
        return yield* new NotFound({ message: `from: ${parsed.right} is not a number of this workspace` })
      })

    /** An existing thread, its number and participant (a phone number: a withheld caller's thread has none). */
    const threadTarget = (workspaceId: string, conversationId: string) =>
      Effect.gen(function*() {
        const thread = yield* findOr404(conversationId, (id) => store.getThread(workspaceId, id), conversationNotFound)
        if (thread.participant === WITHHELD) return yield* withheldThread
        return { thread, sender: yield* namedSender(workspaceId, thread.numberE164), to: thread.participant as E164 }
      })

    const send = (principal: Principal, input: SendMessageInput) =>
      Effect.catchTag(sendWith(principal, input, noHooks), "Superseded", () => Effect.die("no hooks, no superseding"))

    const sendWith = (principal: Principal, input: SendMessageInput, hooks: SendHooks) =>
      Effect.gen(function*() {
        const ws = principal.workspaceId
        if ((input.to === undefined) === (input.conversationId === undefined)) {
          return yield* new InvalidArgument({ message: "Give exactly one of to or conversationId" })
        }
        const { thread, sender, to }: { readonly thread?: Thread; readonly sender: NumberRecord; readonly to: E164 } =
          input.conversationId !== undefined
            ? yield* threadTarget(ws, input.conversationId)
            : yield* Effect.gen(function*() {
              const to = yield* phoneField("to", input.to!)
              return {
                to,
                sender: input.from === undefined
                  ? yield* defaultSender(ws, principal.kind === "live")
                  : yield* namedSender(ws, input.from)
              }
            })
        const from = sender.number
        if (from.type === "toll_free") {
          return yield* new FailedPrecondition({
            message:
              `${from.e164} is toll-free: texting from toll-free numbers is unavailable; send from a local number`
          })
        }
        const simulated = principal.kind === "test"
        if (!simulated) {
          if (!sender.ordered) return yield* notOrdered(from.e164)
          const state = yield* registration.textingState(ws, sender)
          if (state === "unassigned") return yield* notAssigned(from.e164)
          if (state !== "approved") return yield* new FailedPrecondition({ message: gateMessage[state] })
        }
        // An opted-out recipient's attachments are neither fetched nor stored: checked here too, before
        // the fetch, when there are any; `transmit` checks again under the recipient's key.
        if ((input.mediaUrls ?? []).length > 0) yield* optOuts.ensureCanText(ws, to)
        const media = yield* attachments.store(ws, input.mediaUrls ?? [], "mediaUrls")
        const line: Line = {
          workspaceId: ws,
          numberE164: thread?.numberE164 ?? from.e164,
          participant: to,
          inboxId: thread?.inboxId ?? sender.inboxId
        }
        const sent = yield* transmit({
          line,
          from: from.e164,
          body: input.body,
          media,
          simulated,
          reply: false,
          authorUid: principal.memberId ?? null
        }, hooks)
        if (Either.isLeft(sent)) return yield* new FailedPrecondition({ message: optedOutMessage(sent.left) })
        const result: SendMessageResult = {
          message: yield* views.view(sent.right),
          conversationId: sent.right.conversationId,
          ...(simulated ? { simulated: true as const } : {})
        }
        return result
      })

    /**
     * A keyword's answer from the number that was texted (inbound.ts), the one text allowed after an
     * opt-out. It passes the gates a live text passes, unless the keyword came through the test
     * helpers (`simulated`): a number that cannot text sends none. Answers the stored message, if sent.
     */
    const reply: Reply = (sender, line, body, simulated) =>
      Effect.gen(function*() {
        if (
          !simulated && (!sender.ordered || (yield* registration.textingState(line.workspaceId, sender)) !== "approved")
        ) {
          yield* Effect.logInfo("A keyword was not answered: the number cannot text", sender.number.e164)
          return Option.none<ActivityRecord>()
        }
        const sent = yield* transmit(
          { line, from: sender.number.e164, body, media: [], simulated, reply: true, authorUid: null },
          noHooks
        )
        return Either.getRight(sent)
      }).pipe(Effect.catchTag("Superseded", () => Effect.die("no hooks, no superseding")))

    /**
     * Hands a text to the carrier (a simulated one to nobody) and records it in the thread with
     * `message.delivered`, holding the recipient's key (`Transactor.exclusive`, contacts/service.ts
     * `phoneLock`) from the opt-out check to the record; every opt-out holds it too, so an opt-out
     * comes before the check or after the record, never between. The carrier is called before
     * anything is stored, so a refused text leaves no trace, except the carrier's opt-out refusal:
     * the text is recorded failed (`message.failed`) with the recipient's opt-out, and that opt-out
     * is the answer (Left).
     */
    const transmit = (t: {
      readonly line: Line
      readonly from: E164
      readonly body: string
      readonly media: ReadonlyArray<StoredMedia>
      readonly simulated: boolean
      /** A keyword's answer: not refused for an opt-out. */
      readonly reply: boolean
      /** The member who wrote it in the console (SPEC's `authorUid`); null for keys and the service's own answers. */
      readonly authorUid: string | null
    }, hooks: SendHooks) => {
      const ws = t.line.workspaceId
      const to = t.line.participant as E164
      const key = phoneLock(ws, to)
      const check = t.reply ? Effect.void : optOuts.ensureCanText(ws, to)
      /** The text in its thread, with its event; run in a transaction holding the key. */
      const record = (
        accepted: Either.Either<Pick<Accepted, "status"> & { readonly carrierMessageId: string | null }, CarrierError>
      ) =>
        Effect.gen(function*() {
          const now = yield* nowIso
          const { uuid } = yield* Ids
          const activity = newActivity({
            id: uuid(),
            workspaceId: ws,
            conversationId: "",
            type: "message",
            direction: "outbound",
            authorUid: t.authorUid,
            body: t.body,
            media: t.media,
            deliveryStatus: Either.isRight(accepted) ? accepted.right.status : "failed",
            carrierMessageId: Either.isRight(accepted) ? accepted.right.carrierMessageId : null,
            createdAt: now
          })
          // The thread is created once and its contact looked up once, under the lock.
          const { id: conversationId, inboxId } = yield* threads.sent(
            t.line,
            { at: now, preview: previewOf(t.body, t.media.length) },
            activity
          )
          const data = { conversationId, inboxId, activityId: activity.id }
          if (Either.isLeft(accepted)) {
            yield* outbox.append(ws, [event("message.failed", { ...data, deliveryStatus: "failed" })])
            const { optOut } = yield* optOuts.optOut(ws, to, {
              source: "carrier",
              keyword: null,
              note: accepted.left.message
            })
            return Either.left(optOut)
          }
          yield* outbox.append(ws, [event("message.delivered", data)])
          const message = { ...activity, conversationId }
          if (!(yield* hooks.inRecord(message)) && t.simulated) return yield* new Superseded()
          return Either.right(message)
        })
      // Test keys never reach a carrier: nothing is called outside, so one transaction holds the key.
      if (t.simulated) {
        return tx.withTransaction(
          Effect.zipRight(check, record(Either.right({ carrierMessageId: null, status: "simulated" }))),
          key
        )
      }
      // The answer returns once the carrier has accepted the text (SPEC).
      return tx.exclusive(key)(Effect.gen(function*() {
        yield* check
        const accepted = yield* Effect.either(carrier.send({
          from: t.from,
          to,
          body: t.body,
          mediaUrls: yield* Effect.forEach(t.media, (m) => mediaUrls.sign(ws, m.key))
        }))
        if (Either.isLeft(accepted) && accepted.left.reason !== "opted_out") {
          return yield* accepted.left.reason === "rejected"
            ? new FailedPrecondition({ message: `The carrier refused the message: ${accepted.left.message}` })
            : new Internal({
              message: `The carrier is unavailable (${accepted.left.message}); retry with the same Idempotency-Key`
            })
        }
        return yield* tx.withTransaction(record(accepted), key)
      }))
    }

    return { send, sendWith, reply } as const
  })
