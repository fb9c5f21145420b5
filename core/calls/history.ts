/**
 * Call history: a call as `GET /calls` lists it, and the writing of a finished call (its recording
 * as a blob, then in one transaction its thread, its call or voicemail activity and the events that
 * report it, events.ts). Inbound (inbound.ts), outbound (outbound.ts) and carrier calls
 * (carrierEvents.ts) all end here.
 */
import { Effect } from "effect"
import type { Principal } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { type ActivityRecord, newActivity, type Thread } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { EventOutbox } from "../events/outbox.ts"
import { Ids } from "../kernel/ids.ts"
import { Transactor } from "../kernel/transactor.ts"
import { BlobStore, MediaUrls, type StoredMedia } from "../media/model.ts"
import { type Line, makeThreads } from "../messaging/threads.ts"
import { type CallOutcome, type CallPlan, endedEvent, type LiveFacts, outcomeOf, recordedEvents } from "./events.ts"
import { type CallDetails, type CallItem, decodeCallDetails, type ListCallsInput } from "./model.ts"
import type { CallEnd } from "./voice.ts"

/** A finished call as `recordCall` takes it. */
export interface FinishedCall {
  /** The activity's id when already given out (`POST /calls`); a new one otherwise. */
  readonly id?: string
  readonly plan: CallPlan
  readonly line: Line
  readonly startedAt: number
  readonly facts: LiveFacts
  readonly details: Omit<CallDetails, "status" | "answeredBy" | "durationSeconds" | "summary" | "endedAt">
  readonly end: CallEnd
  /**
   * A carrier's call: only `call.completed` or `call.missed` now; the recording and transcript
   * arrive later in webhooks of their own (carrierEvents.ts), each with its event.
   */
  readonly mediaLater?: boolean
}

const previewOf = (type: CallOutcome["type"], status: CallOutcome["status"], direction: "inbound" | "outbound") =>
  type === "voicemail"
    ? "Voicemail"
    : status === "missed"
    ? "Missed call"
    : direction === "inbound"
    ? "Incoming call"
    : "Outgoing call"

export const makeHistory = Effect.gen(function*() {
  const store = yield* ConversationStore
  const tx = yield* Transactor
  const outbox = yield* EventOutbox
  const blobs = yield* BlobStore
  const urls = yield* MediaUrls
  const threads = yield* makeThreads

  /** A call activity as `GET /calls` lists it; the recording is its first media file. */
  const itemOf = (a: ActivityRecord, thread: Pick<Thread, "numberE164">): Effect.Effect<CallItem> =>
    Effect.gen(function*() {
      const call = decodeCallDetails(a.call)
      const recording = a.media[0]
      return {
        id: a.id,
        conversationId: a.conversationId,
        type: a.type === "voicemail" ? "voicemail" : "call",
        direction: a.direction ?? "inbound",
        status: call.status,
        from: call.from,
        to: call.to,
        numberE164: thread.numberE164,
        durationSeconds: call.durationSeconds,
        answeredBy: call.answeredBy,
        agentId: call.agentId,
        carrierCallId: call.carrierCallId,
        recordingUrl: recording === undefined ? null : yield* urls.sign(a.workspaceId, recording.key),
        transcript: a.callTranscript,
        summary: call.summary,
        createdAt: a.createdAt,
        endedAt: call.endedAt
      }
    })

  /** `GET /calls`. */
  const list = (p: Principal, input: ListCallsInput) =>
    Effect.gen(function*() {
      const hits = yield* store.listCalls(p.workspaceId, input.limit ?? 50)
      return { calls: yield* Effect.forEach(hits, ({ activity, thread }) => itemOf(activity, thread)) }
    })

  /**
   * Records a finished call: its recording as a blob, then in one transaction the thread of (number,
   * other party), the call or voicemail activity and the events that report it.
   */
  const recordCall = (args: FinishedCall) =>
    Effect.gen(function*() {
      const { plan, line, end } = args
      const outcome = outcomeOf(plan)
      const ws = line.workspaceId
      const { uuid } = yield* Ids
      const id = args.id ?? uuid()
      const media: Array<StoredMedia> = []
      if (outcome.recorded && end.recording !== null) {
        const key = `call_${id}.wav`
        yield* blobs.put(ws, key, end.recording.bytes, end.recording.contentType)
        media.push({
          key,
          contentType: end.recording.contentType,
          size: end.recording.bytes.length,
          filename: outcome.type === "voicemail" ? "voicemail.wav" : "recording.wav"
        })
      }
      const summary = outcome.recorded ? end.summary : null
      const details: CallDetails = {
        ...args.details,
        status: outcome.status,
        answeredBy: outcome.answeredBy,
        durationSeconds: end.durationSeconds,
        summary,
        endedAt: new Date(args.startedAt + end.durationSeconds * 1000).toISOString()
      }
      const createdAt = new Date(args.startedAt).toISOString()
      return yield* tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(phoneLock(ws, line.participant))
          const message = { at: createdAt, preview: previewOf(outcome.type, outcome.status, plan.direction) }
          const thread = plan.direction === "inbound"
            ? yield* threads.inbound(line, message)
            : yield* threads.outbound(line, message)
          const activity = newActivity({
            id,
            workspaceId: ws,
            conversationId: thread.id,
            type: outcome.type,
            direction: plan.direction,
            media,
            call: details,
            callTranscript: outcome.recorded && !args.mediaLater ? end.transcript : null,
            createdAt
          })
          yield* store.insertActivity(activity)
          const facts = { ...args.facts, conversationId: thread.id, inboxId: thread.inboxId, activityId: id, summary }
          yield* outbox.append(ws, args.mediaLater ? [endedEvent(plan, facts)] : recordedEvents(plan, facts))
          return { activity, thread }
        })
      )
    })

  return { itemOf, list, recordCall } as const
})

export type History = Effect.Effect.Success<typeof makeHistory>
