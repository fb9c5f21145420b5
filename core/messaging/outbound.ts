/**
 * Sending SMS/MMS: the gates (scope, target, sending number, toll-free, registration), media, the
 * carrier, then the thread, activity and `message.delivered` in one transaction. Each row is read
 * once on the way, except the thread of a `conversationId`, which is read again under the phone
 * lock because the thread is rewritten whole.
 */
import { Effect, Either, Option, Schema } from "effect"
import { type Principal, requireScope } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { Activity, type ActivityRecord, previewOf } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { FailedPrecondition, Internal, InvalidArgument, NotFound } from "../errors.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { Ids, isUuid } from "../ids.ts"
import { MediaUrls } from "../media.ts"
import { NumberStore, type NumberType } from "../numbers.ts"
import { type E164, normalizePhone } from "../phone.ts"
import { Text } from "../text.ts"
import { nowIso } from "../time.ts"
import { Transactor } from "../transactor.ts"
import type { Attachments } from "./attachments.ts"
import { Carrier } from "./carrier.ts"
import { gateMessage, RegistrationGate } from "./registration.ts"
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

/** The number a message goes out from: the workspace's own, active. */
interface Sender {
  readonly e164: string
  readonly type: typeof NumberType.Type
  readonly inboxId: Effect.Effect<string>
}

const conversationNotFound = new NotFound({ message: "No such conversation" })
const noActiveNumber = new FailedPrecondition({ message: "The workspace has no active phone number: add one before texting" })

export const makeOutbound = (threads: Threads, attachments: Attachments) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    const numbers = yield* NumberStore
    const tx = yield* Transactor
    const outbox = yield* EventOutbox
    const carrier = yield* Carrier
    const mediaUrls = yield* MediaUrls
    const registration = yield* RegistrationGate
    const views = yield* ActivityViews

    const activeNumbers = (workspaceId: string) =>
      Effect.map(numbers.list(workspaceId), (owned) => owned.filter((n) => n.status === "active"))

    /** The workspace's first active number, local preferred. */
    const defaultSender = (workspaceId: string) =>
      Effect.gen(function* () {
        const owned = yield* activeNumbers(workspaceId)
        if (owned.length === 0) return yield* noActiveNumber
        const { e164, type } = owned.find((n) => n.type === "local") ?? owned[0]!
        const inboxId = Effect.map(numbers.findByE164(e164), (found) => Option.getOrThrow(found).inboxId)
        return { e164, type, inboxId } satisfies Sender
      })

    /**
     * A number the caller named (or the thread's): read by itself when it is an active number of
     * the workspace. A refusal keeps the gate order: no active number at all comes first.
     */
    const namedSender = (workspaceId: string, raw: string) =>
      Effect.gen(function* () {
        const parsed = normalizePhone(raw)
        const found = Either.isRight(parsed)
          ? Option.filter(yield* numbers.findByE164(parsed.right), (n) => n.workspaceId === workspaceId && n.number.status === "active")
          : Option.none()
        if (Option.isSome(found)) {
          const { number, inboxId } = found.value
          return { e164: number.e164, type: number.type, inboxId: Effect.succeed(inboxId) } satisfies Sender
        }
        if ((yield* activeNumbers(workspaceId)).length === 0) return yield* noActiveNumber
        if (Either.isLeft(parsed)) return yield* new InvalidArgument({ message: `from: ${parsed.left}` })
        return yield* new NotFound({ message: `from: ${parsed.right} is not a number of this workspace` })
      })

    /** The number and participant of an existing thread. */
    const threadTarget = (workspaceId: string, conversationId: string) =>
      Effect.gen(function* () {
        if (!isUuid(conversationId)) return yield* conversationNotFound
        const thread = yield* store.getThread(workspaceId, conversationId).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(conversationNotFound), onSome: Effect.succeed }))
        )
        return { from: yield* namedSender(workspaceId, thread.numberE164), to: thread.participant as E164 }
      })

    const send = (principal: Principal, input: SendMessageInput) =>
      Effect.gen(function* () {
        yield* requireScope(principal, "messages:send")
        const ws = principal.workspaceId
        if ((input.to === undefined) === (input.conversationId === undefined)) {
          return yield* new InvalidArgument({ message: "Give exactly one of to or conversationId" })
        }
        const { from, to }: { readonly from: Sender; readonly to: E164 } =
          input.conversationId !== undefined
            ? yield* threadTarget(ws, input.conversationId)
            : yield* Effect.gen(function* () {
                const to = yield* phoneField("to", input.to!)
                return { to, from: input.from === undefined ? yield* defaultSender(ws) : yield* namedSender(ws, input.from) }
              })
        if (from.type === "toll_free") {
          return yield* new FailedPrecondition({ message: `${from.e164} is toll-free: toll-free numbers cannot text; send from a local number` })
        }
        const simulated = principal.kind === "test"
        if (!simulated) {
          const state = yield* registration.textingState(ws)
          if (state !== "approved") return yield* new FailedPrecondition({ message: gateMessage[state] })
        }
        const media = yield* attachments.store(ws, input.mediaUrls ?? [], "mediaUrls")
        // The carrier is called before anything is stored: a refused message leaves no trace, and
        // the answer returns once the carrier has accepted it (SPEC). Test keys never reach a carrier.
        const accepted = simulated
          ? { carrierMessageId: null, status: "simulated" as const }
          : yield* carrier
              .send({ from: from.e164, to, body: input.body, mediaUrls: yield* Effect.forEach(media, (m) => mediaUrls.sign(ws, m.key)) })
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
            const thread = yield* threads.outbound({ workspaceId: ws, numberE164: from.e164, participant: to, inboxId: from.inboxId }, now)
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
        const result: SendMessageResult = {
          message: yield* views.view(stored),
          conversationId: stored.conversationId,
          ...(simulated ? { simulated: true as const } : {})
        }
        return result
      })

    return { send } as const
  })
