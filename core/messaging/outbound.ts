/**
 * Sending SMS/MMS: the gates (scope, target, sending number, toll-free, registration), media, the
 * carrier, then the thread, activity and `message.delivered` in one transaction. Each row is read
 * once on the way: the thread a caller names is read before the carrier call and, under the phone
 * lock, only the columns a message sets are written to it.
 */
import { Effect, Either, Option, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { Activity, newActivity, previewOf, type Thread, WITHHELD } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { FailedPrecondition, Internal, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids } from "../kernel/ids.ts"
import { type E164, normalizePhone } from "../kernel/phone.ts"
import { Text } from "../kernel/text.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { MediaUrls } from "../media/model.ts"
import { defaultNumber, notOrdered, type NumberRecord, NumberStore } from "../numbers/model.ts"
import { notAssigned } from "../registration/assignment.ts"
import { gateMessage, RegistrationGate } from "../registration/gate.ts"
import type { Attachments } from "./attachments.ts"
import { Carrier } from "./carrier.ts"
import { phoneField, type Threads } from "./threads.ts"
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
        const media = yield* attachments.store(ws, input.mediaUrls ?? [], "mediaUrls")
        // The carrier is called before anything is stored: a refused message leaves no trace, and
        // the answer returns once the carrier has accepted it (SPEC). Test keys never reach a carrier.
        const accepted = simulated
          ? { carrierMessageId: null, status: "simulated" as const }
          : yield* carrier
            .send({
              from: from.e164,
              to,
              body: input.body,
              mediaUrls: yield* Effect.forEach(media, (m) => mediaUrls.sign(ws, m.key))
            })
            .pipe(
              Effect.mapError((e) =>
                e.reason === "rejected"
                  ? new FailedPrecondition({ message: `The carrier refused the message: ${e.message}` })
                  : new Internal({
                    message: `The carrier is unavailable (${e.message}); retry with the same Idempotency-Key`
                  })
              )
            )
        const now = yield* nowIso
        const { uuid } = yield* Ids
        const activity = newActivity({
          id: uuid(),
          workspaceId: ws,
          conversationId: "",
          type: "message",
          direction: "outbound",
          body: input.body,
          media,
          deliveryStatus: accepted.status,
          carrierMessageId: accepted.carrierMessageId,
          createdAt: now
        })
        const line = {
          workspaceId: ws,
          numberE164: thread?.numberE164 ?? from.e164,
          participant: to,
          inboxId: thread?.inboxId ?? sender.inboxId
        }
        const message = { at: now, preview: previewOf(input.body, media.length) }
        // Under the participant's lock (one writer per participant at a time): the thread is created
        // once and its contact looked up once.
        const stored = yield* tx.withTransaction(
          Effect.gen(function*() {
            const { id: conversationId, inboxId } = yield* threads.sent(line, message, activity)
            yield* outbox.append(ws, [event("message.delivered", { conversationId, inboxId, activityId: activity.id })])
            return { ...activity, conversationId }
          }),
          phoneLock(ws, to)
        )
        const result: SendMessageResult = {
          message: yield* views.view(stored),
          conversationId: stored.conversationId,
          ...(simulated ? { simulated: true as const } : {})
        }
        return result
      })

    return { send } as const
  })
