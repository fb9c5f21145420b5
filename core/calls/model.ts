/**
 * Calls and voicemails (SPEC "Activity", CONTRACT "GET /calls", "POST /calls", `callTranscript`).
 * A call is an activity of type `call` or `voicemail` in the thread of (workspace number, other
 * party); `CallDetails` is what its `call` object holds, and `CallItem` what `GET /calls` lists.
 */
import { Schema } from "effect"
import { TranscriptEntry } from "../conversations/model.ts"
import { PageSize } from "../kernel/pagination.ts"
import { Text } from "../kernel/text.ts"

export const CallDirection = Schema.Literal("inbound", "outbound")
export type CallDirection = typeof CallDirection.Type

/** `completed`: someone picked up and the call ended; `missed`: nobody did (a voicemail may follow). */
export const CallStatus = Schema.Literal("completed", "missed")
export type CallStatus = typeof CallStatus.Type

/**
 * A listed call's status: `in_progress` only in `POST /calls`'s answer for a call a real carrier is
 * still placing (it is recorded, `completed` or `missed`, when its hangup arrives).
 */
export const CallItemStatus = Schema.Literal("completed", "missed", "in_progress")

/** Who picked up (SPEC `call.answered`); null when nobody did or an outside line (forward) did. */
export const AnsweredBy = Schema.Literal("agent", "member", "callee")
export type AnsweredBy = typeof AnsweredBy.Type

/** The `call` object of a call or voicemail activity. */
export const CallDetails = Schema.Struct({
  status: CallStatus,
  /** The caller (inbound) or the workspace number (outbound); null when the caller withheld it. */
  from: Schema.NullOr(Schema.String),
  to: Schema.String,
  durationSeconds: Schema.Number,
  answeredBy: Schema.NullOr(AnsweredBy),
  agentId: Schema.NullOr(Schema.UUID),
  /** The teammate who answered in the app (`answeredBy` `member`). */
  memberUid: Schema.NullOr(Schema.String),
  /** The outside number a forwarded call was sent to. */
  forwardedTo: Schema.NullOr(Schema.String),
  carrierCallId: Schema.NullOr(Schema.String),
  summary: Schema.NullOr(Schema.String),
  /** The agent job an outbound call was placed for. */
  job: Schema.NullOr(Schema.String),
  endedAt: Schema.String,
  /** Placed by a test key: nothing was dialled, and it uses none of the agent's minutes. */
  simulated: Schema.optional(Schema.Boolean)
})
export type CallDetails = typeof CallDetails.Type
/** A call activity's stored `call` object, read back. */
export const decodeCallDetails = Schema.decodeUnknownSync(CallDetails)

/** CONTRACT "GET /calls" item. */
export const CallItem = Schema.Struct({
  id: Schema.UUID,
  conversationId: Schema.UUID,
  type: Schema.Literal("call", "voicemail"),
  direction: CallDirection,
  status: CallItemStatus,
  from: Schema.NullOr(Schema.String),
  to: Schema.String,
  numberE164: Schema.String,
  durationSeconds: Schema.Number,
  answeredBy: Schema.NullOr(AnsweredBy),
  agentId: Schema.NullOr(Schema.UUID),
  carrierCallId: Schema.NullOr(Schema.String),
  /** A short-lived signed URL of the recording (voicemail audio for a voicemail). */
  recordingUrl: Schema.NullOr(Schema.String),
  transcript: Schema.NullOr(Schema.Array(TranscriptEntry)),
  summary: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  endedAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Call" })
export type CallItem = typeof CallItem.Type

/** `GET /calls` (the `calls_list` tool); REST reads `limit` from text. */
export const ListCallsInput = Schema.Struct({
  limit: Schema.optional(PageSize(200))
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type ListCallsInput = typeof ListCallsInput.Type

export const CallList = Schema.Struct({ calls: Schema.Array(CallItem) })

/** `POST /calls` (the `calls_place` tool). */
export const PlaceCallInput = Schema.Struct({
  to: Schema.String.pipe(Schema.maxLength(32)),
  from: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  /** The name of one of the published agent's jobs. */
  job: Schema.optional(Text(200)),
  /** Extra instructions for this call only. */
  instructions: Schema.optional(Text(4000))
}).annotations({ identifier: "PlaceCallInput", parseOptions: { onExcessProperty: "error" } })
export type PlaceCallInput = typeof PlaceCallInput.Type

export const PlaceCallResult = Schema.Struct({
  call: CallItem,
  conversationId: Schema.UUID,
  simulated: Schema.optional(Schema.Literal(true))
})
export type PlaceCallResult = typeof PlaceCallResult.Type

/** CONTRACT "Test helpers" `POST /inbound-calls` scenarios. */
export const CallScenario = Schema.Literal("answered", "missed", "voicemail", "flow_completed", "flow_aborted")
export type CallScenario = typeof CallScenario.Type

export const SimulatedCallInput = Schema.Struct({
  /** The caller's number; null for a caller who withheld it. Not the number called. */
  from: Schema.NullOr(Schema.String.pipe(Schema.maxLength(32))),
  to: Schema.String.pipe(Schema.maxLength(32)),
  scenario: CallScenario,
  durationSeconds: Schema.optional(Schema.Int.pipe(Schema.between(1, 4 * 3600)))
}).annotations({ identifier: "SimulatedCallInput", parseOptions: { onExcessProperty: "error" } })
export type SimulatedCallInput = typeof SimulatedCallInput.Type

export const SimulatedCallResult = Schema.Struct({ call: CallItem, carrierCallId: Schema.String })
