/**
 * Telnyx Call Control webhooks (research telnyx.md §5 "Call webhooks", field names from the SDK's
 * webhook types) as neutral call events. Signature and freshness are checked first by
 * telnyxWebhooks.ts's `verifyAndParse`, which passes call events through as `Ignored`.
 *
 * - `client_state` comes back base64, as we sent it (telnyxVoice.ts); it is decoded here, and is
 *   null when absent or not base64 of UTF-8 text.
 * - `call.hangup`: the SDK types `start_time` but no `end_time` (the docs list both), so the end is
 *   `end_time` when present, else the event's `occurred_at`. `durationSeconds` is end minus start,
 *   which counts ringing as well: Telnyx's `start_time` is when the leg began.
 * - `call.recording.saved` documents no `call_control_id`: correlate on `callSessionId`. Its URLs
 *   are valid for 10 minutes: download at once.
 *
 * - `call.speak.ended`: a voicemail's greeting has been played; the recording starts then (Telnyx's
 *   speak command documents `call.speak.started` and `call.speak.ended` as its webhooks).
 * - `call.recording.transcription.saved`: a voicemail's transcription (`record_start` with
 *   `transcription: true`), stored as its transcript.
 * - `call.conversation_insights.generated`: its payload is not documented, so only `conversation_id`
 *   is required; the call's ids and `client_state` are read when present. It is a trigger: the
 *   summary itself is fetched from the insights API.
 *
 * Telnyx may repeat events and deliver them out of order: dedupe on `eventId`, order by `occurredAt`.
 */
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import type { CallEventBase, CallLeg, CarrierCallEvent } from "../../core/calls/voice.ts"
import { Envelope, fromBase64, TelnyxWebhookError, type TelnyxWebhookInput, verifyAndParse } from "./telnyxWebhooks.ts"

export type { CarrierCallEvent }

// ------------------------------------------------------------------------------------ payload shapes

const Id = Schema.NonEmptyString
const Text = Schema.optional(Schema.NullOr(Schema.String))

/** The caller: E.164, a SIP URI, or, withheld, `anonymous`, `restricted`, empty or absent (the core reads it). */
const Caller = Text

const LegPayload = Schema.Struct({ call_control_id: Id, call_leg_id: Text, call_session_id: Id, client_state: Text })

const InitiatedPayload = Schema.Struct({
  ...LegPayload.fields,
  direction: Schema.Literal("incoming", "outgoing"),
  from: Caller,
  to: Id,
  caller_id_name: Text
})
const AnsweredPayload = Schema.Struct({ ...LegPayload.fields, from: Caller, to: Id })
const HangupPayload = Schema.Struct({
  ...LegPayload.fields,
  hangup_cause: Text,
  hangup_source: Text,
  start_time: Text,
  end_time: Text
})

const Urls = Schema.optional(Schema.NullOr(Schema.Struct({ wav: Text, mp3: Text })))
const RecordingPayload = Schema.Struct({
  call_session_id: Id,
  call_leg_id: Id,
  call_control_id: Text,
  client_state: Text,
  recording_urls: Urls,
  public_recording_urls: Urls
})
const TranscriptionPayload = Schema.Struct({
  call_session_id: Id,
  call_leg_id: Text,
  call_control_id: Text,
  transcription_text: Schema.String
})
const ConversationPayload = Schema.Struct({
  conversation_id: Id,
  assistant_id: Id,
  duration_sec: Schema.optional(Schema.NullOr(Schema.Number)),
  call_control_id: Text,
  call_session_id: Text,
  client_state: Text
})

/** Lenient: any other field is ignored, and the call's ids may be absent. */
const InsightsPayload = Schema.Struct({
  conversation_id: Id,
  call_control_id: Text,
  call_session_id: Text,
  client_state: Text
})

/** `client_state` as the text we sent; null when absent or not base64 of UTF-8. */
export const decodeClientState = (value: string | null | undefined): string | null => {
  if (value === null || value === undefined || value === "") return null
  const bytes = fromBase64(value)
  if (bytes === null) return null
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return null
  }
}

const nonEmpty = (
  value: string | null | undefined
): string | null => (value === null || value === undefined || value === "" ? null : value)

const seconds = (start: string | null, end: string | null): number | null => {
  const from = Date.parse(start ?? "")
  const to = Date.parse(end ?? "")
  return Number.isNaN(from) || Number.isNaN(to) ? null : Math.max(0, Math.floor((to - from) / 1000))
}

const leg = (p: typeof LegPayload.Type): CallLeg => ({
  callControlId: p.call_control_id,
  callLegId: nonEmpty(p.call_leg_id),
  callSessionId: p.call_session_id,
  clientState: decodeClientState(p.client_state)
})

const payload = <A, I>(
  schema: Schema.Schema<A, I>,
  value: unknown,
  eventType: string
): Either.Either<A, TelnyxWebhookError> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema, { errors: "first" })(value),
    (e) =>
      new TelnyxWebhookError({
        reason: "malformed",
        message: `${eventType} payload: ${ParseResult.TreeFormatter.formatErrorSync(e).replace(/\s+/g, " ")}`
      })
  )

const Json = Schema.parseJson(Envelope)

/**
 * The call event an already verified Telnyx webhook body carries: none for any other event
 * (messaging, 10DLC, `call.speak.started`, …); a `malformed` error for a body that is not an
 * envelope, or a call event without the fields it must have.
 */
export const parseCallEvent = (rawBody: string): Either.Either<Option.Option<CarrierCallEvent>, TelnyxWebhookError> =>
  Either.flatMap(
    Either.mapLeft(
      Schema.decodeUnknownEither(Json)(rawBody),
      () => new TelnyxWebhookError({ reason: "malformed", message: "not a Telnyx event envelope" })
    ),
    ({ data }): Either.Either<Option.Option<CarrierCallEvent>, TelnyxWebhookError> => {
      const base: CallEventBase = { eventId: data.id, occurredAt: data.occurred_at ?? null }
      const type = data.event_type
      const some = <A, I>(schema: Schema.Schema<A, I>, build: (p: A) => CarrierCallEvent) =>
        Either.map(payload(schema, data.payload, type), (p) => Option.some(build(p)))
      switch (type) {
        case "call.initiated":
          return some(InitiatedPayload, (p) => ({
            ...base,
            ...leg(p),
            _tag: "Initiated",
            direction: p.direction === "incoming" ? "inbound" : "outbound",
            from: p.from ?? "",
            to: p.to,
            callerName: nonEmpty(p.caller_id_name)
          }))
        case "call.answered":
          return some(AnsweredPayload, (p) => ({ ...base, ...leg(p), _tag: "Answered", from: p.from ?? "", to: p.to }))
        case "call.speak.ended":
          return some(LegPayload, (p) => ({ ...base, ...leg(p), _tag: "SpeakEnded" }))
        case "call.hangup":
          return some(HangupPayload, (p) => {
            const startTime = nonEmpty(p.start_time)
            const endTime = nonEmpty(p.end_time) ?? base.occurredAt
            return {
              ...base,
              ...leg(p),
              _tag: "Hangup",
              cause: nonEmpty(p.hangup_cause) ?? "unspecified",
              source: nonEmpty(p.hangup_source) ?? "unknown",
              startTime,
              endTime,
              durationSeconds: seconds(startTime, endTime)
            }
          })
        case "call.recording.saved":
          return some(RecordingPayload, (p) => {
            const urls = p.recording_urls ?? p.public_recording_urls ?? {}
            const wav = nonEmpty(urls.wav)
            const mp3 = nonEmpty(urls.mp3)
            return {
              ...base,
              _tag: "RecordingSaved",
              callSessionId: p.call_session_id,
              callLegId: p.call_leg_id,
              callControlId: nonEmpty(p.call_control_id),
              clientState: decodeClientState(p.client_state),
              urls: { ...(wav === null ? {} : { wav }), ...(mp3 === null ? {} : { mp3 }) }
            }
          })
        case "call.recording.transcription.saved":
          return some(TranscriptionPayload, (p) => ({
            ...base,
            _tag: "TranscriptionSaved",
            callSessionId: p.call_session_id,
            callLegId: nonEmpty(p.call_leg_id),
            callControlId: nonEmpty(p.call_control_id),
            text: p.transcription_text
          }))
        case "call.conversation.ended":
          return some(ConversationPayload, (p) => ({
            ...base,
            _tag: "ConversationEnded",
            conversationId: p.conversation_id,
            assistantId: p.assistant_id,
            durationSeconds: p.duration_sec === undefined || p.duration_sec === null
              ? null
              : Math.max(0, Math.round(p.duration_sec)),
            callControlId: nonEmpty(p.call_control_id),
            callSessionId: nonEmpty(p.call_session_id),
            clientState: decodeClientState(p.client_state)
          }))
        case "call.conversation_insights.generated":
          return some(InsightsPayload, (p) => ({
            ...base,
            _tag: "InsightsGenerated",
            conversationId: p.conversation_id,
            callControlId: nonEmpty(p.call_control_id),
            callSessionId: nonEmpty(p.call_session_id),
            clientState: decodeClientState(p.client_state)
          }))
        default:
          return Either.right(Option.none())
      }
    }
  )

/** Verifies a Telnyx webhook (signature, timestamp, envelope), then reads the call event it carries. */
export const verifyCallEvent = (
  input: TelnyxWebhookInput
): Effect.Effect<Option.Option<CarrierCallEvent>, TelnyxWebhookError> =>
  Effect.zipRight(verifyAndParse(input), parseCallEvent(input.rawBody))
