/**
 * Telnyx Call Control and AI assistants (research telnyx.md §5 and §6) through the shared client
 * (telnyxClient.ts). Self-contained: the core Voice port is wired to it elsewhere.
 *
 * - Calls: `POST /v2/calls` dials (with `link_to`, a leg of the call it names: same
 *   `call_session_id`); `POST /v2/calls/{call_control_id}/actions/{answer,transfer,hangup,speak,
 *   record_start,bridge}` commands one leg. `client_state` goes out base64 (Telnyx echoes it, still
 *   base64, in every later webhook: telnyxCallWebhooks.ts decodes it).
 * - Assistants: `POST /v2/ai/assistants` creates, `POST /v2/ai/assistants/{id}` updates (the verb
 *   Telnyx's SDK uses for `assistants.update`; there is no PATCH or PUT). Answers are the bare
 *   assistant object; a `{data}` wrapper is accepted too, as the shape is only known from the SDK.
 * - Summaries are made by Telnyx's AI Insights: an insight group assigned to the assistant
 *   (`insight_settings.insight_group_id`) runs its insights on every conversation
 *   (https://developers.telnyx.com/docs/inference/ai-insights/insight-groups). `summaryInsightGroup`
 *   reuses the assistant's group, else creates a "Call summary" insight
 *   (`POST /v2/ai/conversations/insights`), a group (`POST /v2/ai/conversations/insight-groups`) and
 *   assigns one to the other (`POST .../insight-groups/{group}/insights/{insight}/assign`); each answers
 *   `{data: {id, …}}`.
 * - Transcripts: `GET /v2/ai/conversations/{id}/messages`, `{data: [{role, text, sent_at, created_at}]}`.
 * - Summaries: `GET /v2/ai/conversations/{id}/conversations-insights` (Telnyx docs,
 *   get_conversations_public__conversation_id__insights_get), `{data: [{id, status: pending|
 *   in_progress|completed|failed, conversation_insights: [{insight_id, result}]}]}`.
 *
 * Failures: a 4xx is Telnyx refusing the command, `rejected` with its own words; 401/403 (our
 * account), 408, 429, 5xx, timeouts, network failures and malformed answers are `unavailable`.
 * A dial or command is not idempotent by itself (a second dial rings the callee twice), so POSTs are
 * retried only on a 429, which Telnyx did not process, unless the caller gave a `commandId`:
 * Telnyx ignores a repeated command with the same id, so then 408 and 5xx are retried too. An
 * assistant update and every read are idempotent and retried on 408/429/5xx; a create only on 429.
 * A POST that timed out or met a 5xx may have gone through, and its message says so.
 *
 * The API key never appears in an error (the client keeps it Redacted).
 */
import { Data, Effect, Either, Schema } from "effect"
import { classify, decodeAnswer, makeClient, refusal, type TelnyxConfig, type TelnyxFailure } from "./telnyxClient.ts"

export class TelnyxVoiceError extends Data.TaggedError("TelnyxVoiceError")<{
  readonly reason: "rejected" | "unavailable"
  readonly message: string
}> {}

/** Statuses that mean Telnyx did not process a request that is safe to send again. */
const IDEMPOTENT_RETRY_ON: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504])
/** Only a 429 surely left a non-idempotent POST unprocessed. */
const WRITE_RETRY_ON: ReadonlySet<number> = new Set([429])

/** What the recording of a call is made of: mp3, one channel per party (caller and agent apart). */
export const RECORD_FORMAT = "mp3"
export const RECORD_CHANNELS = "dual"

export interface DialInput {
  /** Our number, E.164. */
  readonly from: string
  /** The callee, E.164. */
  readonly to: string
  /** The Call Control App the call belongs to (its webhooks go to the app's URL). */
  readonly connectionId: string
  /** An AI assistant that talks once the callee picks up. */
  readonly assistantId?: string
  /** Replaces the assistant's instructions for this call only (the dial's `assistant.instructions`). */
  readonly assistantInstructions?: string
  /** Echoed (base64) in every webhook of the call; sent base64. */
  readonly clientState?: string
  /** Telnyx ignores a second dial with the same id; with one, 5xx are retried. */
  readonly commandId?: string
  /** Record from the moment the callee answers. */
  readonly record?: boolean
  /** How long to ring (Telnyx accepts 5–600 s) before the call ends with `hangup_cause: timeout`. */
  readonly timeoutSecs?: number
  /**
   * Another leg's `call_control_id`: the new leg shares its call session (`link_to`, "Use another
   * call's control id for sharing the same call session id", Telnyx's dial reference
   * https://developers.telnyx.com/api-reference/call-commands/dial), so its webhooks name that call.
   */
  readonly linkTo?: string
}

export interface DialedCall {
  /** Commands go to this leg token. */
  readonly callControlId: string
  readonly callLegId: string
  /** Groups the legs of one call (a transfer adds one): our call record's key. */
  readonly callSessionId: string
}

export interface AnswerOptions {
  /** The AI assistant that takes the call. */
  readonly assistantId?: string
  readonly clientState?: string
  /** Record from the answer on. */
  readonly record?: boolean
  readonly commandId?: string
}

/** Any command may carry an id Telnyx dedupes on (with one, 5xx are retried), and our client_state. */
export interface CommandOptions {
  readonly commandId?: string
  /** Echoed (base64) in the call's later webhooks; sent base64. */
  readonly clientState?: string
}

/** A `speak` command (https://developers.telnyx.com/api-reference/call-commands/speak-text). */
export interface SpeakInput {
  /** The text said. */
  readonly payload: string
  /** Telnyx's voice: `female`/`male` (basic) or a provider voice such as `Telnyx.KokoroTTS.af_heart`. */
  readonly voice: string
  /** A basic voice's language, such as `en-US`; Telnyx's default when absent. */
  readonly language?: string
}

/** The voice a voicemail greeting is spoken in: Telnyx's basic voice, which every account has. */
export const GREETING_VOICE = "female"

/** What `record_start` adds to the recording: Telnyx's transcription of it (`call.recording.transcription.saved`), and a beep. */
export interface RecordOptions extends CommandOptions {
  readonly transcription?: boolean
  readonly playBeep?: boolean
  /** Where the recording is from: both parties (`dual`) or one channel (`single`). */
  readonly channels?: "single" | "dual"
}

export interface AssistantInput {
  /** Update this assistant; null or absent: create one. */
  readonly assistantId?: string | null
  readonly name: string
  readonly instructions: string
  /** What the assistant says first when it answers. */
  readonly greeting?: string
  /** Telnyx's voice id (`voice_settings.voice`), such as `Telnyx.KokoroTTS.af_heart`. */
  readonly voice?: string
  /** The caller's language for speech recognition (`transcription.language`, ISO 639-1 such as `en`). */
  readonly language?: string
  /** The insight group Telnyx runs on every conversation (`insight_settings`): the call summary. */
  readonly insightGroupId?: string
}

/** One line of a call transcript, as CONTRACT's `callTranscript` entry (an AI call has only these two speakers). */
export interface TranscriptEntry {
  readonly speaker: "agent" | "caller"
  readonly text: string
  /** Whole seconds since the first line (or since `startedAt` when given). */
  readonly offsetSeconds: number
}

/** A conversation's AI insights: any still being made, else the completed ones' results. */
export type ConversationInsights = { readonly _tag: "Pending" } | {
  readonly _tag: "Ready"
  readonly text: string | null
}

export interface TelnyxVoice {
  readonly dial: (input: DialInput) => Effect.Effect<DialedCall, TelnyxVoiceError>
  readonly answer: (callControlId: string, options?: AnswerOptions) => Effect.Effect<void, TelnyxVoiceError>
  /** Transfers the call to `to` (E.164 or SIP URI); Telnyx dials it as a new leg of the session. */
  readonly transfer: (
    callControlId: string,
    to: string,
    options?: CommandOptions
  ) => Effect.Effect<void, TelnyxVoiceError>
  readonly hangup: (callControlId: string, options?: CommandOptions) => Effect.Effect<void, TelnyxVoiceError>
  /**
   * Joins leg `callControlId` with leg `other` (`actions/bridge`,
   * https://developers.telnyx.com/api-reference/call-commands/bridge-calls): `call.bridged` follows on
   * both, and when either hangs up Telnyx hangs up the other (no `park_after_unbridge` sent).
   */
  readonly bridge: (
    callControlId: string,
    other: string,
    options?: CommandOptions
  ) => Effect.Effect<void, TelnyxVoiceError>
  /** Says `payload` on the call; `call.speak.ended` follows once it has been played. */
  readonly speak: (
    callControlId: string,
    input: SpeakInput,
    options?: CommandOptions
  ) => Effect.Effect<void, TelnyxVoiceError>
  /**
   * Records the rest of the call; `call.recording.saved` follows the hangup, and with `transcription`
   * `call.recording.transcription.saved`.
   */
  readonly startRecording: (callControlId: string, options?: RecordOptions) => Effect.Effect<void, TelnyxVoiceError>
  readonly upsertAssistant: (input: AssistantInput) => Effect.Effect<{ readonly assistantId: string }, TelnyxVoiceError>
  /** The insight group that makes the assistant's call summaries: the assistant's own, else a new one. */
  readonly summaryInsightGroup: (assistantId: string | null) => Effect.Effect<string, TelnyxVoiceError>
  /** The transcript of an assistant's conversation, oldest line first; tool calls and empty lines left out. */
  readonly conversationMessages: (
    conversationId: string,
    startedAt?: string
  ) => Effect.Effect<ReadonlyArray<TranscriptEntry>, TelnyxVoiceError>
  /** The summary of an assistant's conversation: its completed insights' results, joined. */
  readonly conversationInsights: (conversationId: string) => Effect.Effect<ConversationInsights, TelnyxVoiceError>
}

// ------------------------------------------------------------------------------------ request bodies

/** UTF-8 text as base64, as Telnyx requires of `client_state`. */
export const toBase64 = (text: string): string => {
  let bin = ""
  for (const byte of new TextEncoder().encode(text)) bin += String.fromCharCode(byte)
  return btoa(bin)
}

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** What a dial and an answer share: our client_state (base64), recording from the answer on, the assistant. */
export const answerBody = (
  options: Pick<AnswerOptions, "assistantId" | "clientState" | "record"> & Pick<DialInput, "assistantInstructions">
) => ({
  ...optional("client_state", options.clientState === undefined ? undefined : toBase64(options.clientState)),
  ...(options.record
    ? { record: "record-from-answer", record_format: RECORD_FORMAT, record_channels: RECORD_CHANNELS }
    : {}),
  ...optional(
    "assistant",
    options.assistantId === undefined
      ? undefined
      : { id: options.assistantId, ...optional("instructions", options.assistantInstructions) }
  )
})

/** The `POST /v2/calls` body (research §5 "Dial"). */
export const dialBody = (input: DialInput) => ({
  connection_id: input.connectionId,
  from: input.from,
  to: input.to,
  ...answerBody(input),
  ...optional("command_id", input.commandId),
  ...optional("timeout_secs", input.timeoutSecs),
  ...optional("link_to", input.linkTo)
})

/** The assistant create/update body: only the fields we own, so an update leaves Telnyx's other settings alone. */
export const assistantBody = (input: AssistantInput) => ({
  name: input.name,
  instructions: input.instructions,
  ...optional("greeting", input.greeting),
  ...optional("voice_settings", input.voice === undefined ? undefined : { voice: input.voice }),
  ...optional("transcription", input.language === undefined ? undefined : { language: input.language }),
  ...optional(
    "insight_settings",
    input.insightGroupId === undefined ? undefined : { insight_group_id: input.insightGroupId }
  )
})

/** The `record_start` body: required `format` and `channels`, then what was asked for. */
export const recordBody = (options: RecordOptions) => ({
  format: RECORD_FORMAT,
  channels: options.channels ?? RECORD_CHANNELS,
  ...optional("transcription", options.transcription),
  ...optional("play_beep", options.playBeep)
})

// ------------------------------------------------------------------------------------ answers

const decodeDialed = decodeAnswer(
  Schema.Struct({
    data: Schema.Struct({
      call_control_id: Schema.NonEmptyString,
      call_leg_id: Schema.NonEmptyString,
      call_session_id: Schema.NonEmptyString
    })
  }),
  "{data: {call_control_id, call_leg_id, call_session_id}}"
)

const AssistantId = Schema.Struct({ id: Schema.NonEmptyString })
const decodeAssistant = decodeAnswer(
  Schema.Union(AssistantId, Schema.Struct({ data: AssistantId })),
  "an assistant {id}"
)

const decodeData = decodeAnswer(Schema.Struct({ data: AssistantId }), "{data: {id}}")
/** The assistant as read: only its insight group matters here. */
const decodeInsightSettings = decodeAnswer(
  Schema.Struct({
    insight_settings: Schema.optional(
      Schema.NullOr(Schema.Struct({ insight_group_id: Schema.optional(Schema.NullOr(Schema.String)) }))
    )
  }),
  "an assistant"
)

/** What the summary insight asks of Telnyx's model: SPEC's `call.summary.completed` text. */
export const SUMMARY_INSIGHT = {
  name: "Call summary",
  instructions:
    "Summarize this phone call in two or three sentences for the business's team: who called, what they wanted, and what was agreed or needs a follow-up."
}

const Time = Schema.optional(Schema.NullOr(Schema.String))
/** One conversation message; `text` is null on tool calls. */
const Message = Schema.Struct({
  role: Schema.String,
  text: Schema.optional(Schema.NullOr(Schema.String)),
  sent_at: Time,
  created_at: Time
})
type Message = typeof Message.Type
const decodeMessages = decodeAnswer(Schema.Struct({ data: Schema.Array(Message) }), "{data: [{role, text, sent_at}]}")

/** `result` is text in Telnyx's examples; anything else (or an unknown status) is left out rather than refused. */
const InsightRun = Schema.Struct({
  status: Schema.String,
  conversation_insights: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ result: Schema.optional(Schema.Unknown) })))
  )
})
type InsightRun = typeof InsightRun.Type
const decodeInsights = decodeAnswer(
  Schema.Struct({ data: Schema.Array(InsightRun) }),
  "{data: [{status, conversation_insights}]}"
)

/**
 * Pending while any run is `pending` or `in_progress`, or none is listed yet (the insights webhook
 * said they were made); else the completed runs' non-empty results, in Telnyx's order, a blank line
 * apart; null when none (all failed).
 */
export const insightsSummary = (runs: ReadonlyArray<InsightRun>): ConversationInsights => {
  if (runs.length === 0 || runs.some((r) => r.status === "pending" || r.status === "in_progress")) {
    return { _tag: "Pending" }
  }
  const texts = runs
    .filter((r) => r.status === "completed")
    .flatMap((r) => r.conversation_insights ?? [])
    .flatMap((i) => (typeof i.result === "string" && i.result.trim() !== "" ? [i.result.trim()] : []))
  return { _tag: "Ready", text: texts.length === 0 ? null : texts.join("\n\n") }
}

const SPEAKERS: Readonly<Record<string, TranscriptEntry["speaker"]>> = { assistant: "agent", user: "caller" }

/**
 * The lines said aloud, oldest first (by `sent_at`, else `created_at`: Telnyx's list order is not
 * documented), untimed ones last; offsets in whole seconds from `startedAt` or the first timed line.
 */
export const transcript = (messages: ReadonlyArray<Message>, startedAt?: string): ReadonlyArray<TranscriptEntry> => {
  const lines = messages.flatMap((m) => {
    const speaker = SPEAKERS[m.role]
    const text = (m.text ?? "").trim()
    const at = Date.parse(m.sent_at ?? m.created_at ?? "")
    return speaker === undefined || text === ""
      ? []
      : [{ speaker, text, at: Number.isNaN(at) ? Number.POSITIVE_INFINITY : at }]
  })
  // Array.prototype.sort is stable: lines said at the same time keep Telnyx's order.
  lines.sort((a, b) => (a.at === b.at ? 0 : a.at < b.at ? -1 : 1))
  const start = Date.parse(startedAt ?? "")
  const origin = Number.isNaN(start) ? (lines[0]?.at ?? 0) : start
  let last = 0
  return lines.map(({ at, speaker, text }) => {
    if (Number.isFinite(at)) last = Math.max(0, Math.floor((at - origin) / 1000))
    return { speaker, text, offsetSeconds: last }
  })
}

// ------------------------------------------------------------------------------------ the client

const unavailable = (message: string) => new TelnyxVoiceError({ reason: "unavailable", message })

const voiceError = (f: TelnyxFailure, method: string): TelnyxVoiceError => {
  const error = Either.match(classify(f), {
    onLeft: unavailable,
    onRight: (r) => new TelnyxVoiceError({ reason: "rejected", message: refusal(r) })
  })
  // A POST Telnyx did not answer, or answered with a 5xx, may have been carried out.
  const unsure = method === "POST" && error.reason === "unavailable" && !(f._tag === "Status" && f.status < 500)
  return unsure ? unavailable(`${error.message}; it may have gone through`) : error
}

const segment = encodeURIComponent

export const make = (config: TelnyxConfig): TelnyxVoice => {
  const telnyx = makeClient(config)

  const call = <A>(
    method: "GET" | "POST",
    path: string,
    retryOn: ReadonlySet<number>,
    decode: (text: string) => Either.Either<A, string>,
    body?: unknown
  ): Effect.Effect<A, TelnyxVoiceError> =>
    telnyx({ method, path, retryOn, ...(body === undefined ? {} : { body }) }).pipe(
      Effect.mapError((f) => voiceError(f, method)),
      Effect.flatMap(({ status, text }) =>
        Either.match(decode(text), {
          onLeft: (why) =>
            Effect.fail(
              unavailable(`Telnyx returned a malformed answer to ${method} ${path} (HTTP ${status}; ${why})`)
            ),
          onRight: Effect.succeed
        })
      )
    )

  const commandRetry = (
    commandId: string | undefined
  ) => (commandId === undefined ? WRITE_RETRY_ON : IDEMPOTENT_RETRY_ON)

  /** `POST /v2/calls/{id}/actions/{action}`; Telnyx answers `{data: {result}}`, which says nothing more. */
  const action = (
    callControlId: string,
    name: string,
    body: Record<string, unknown>,
    commandId: string | undefined,
    clientState?: string
  ) =>
    call("POST", `/v2/calls/${segment(callControlId)}/actions/${name}`, commandRetry(commandId), Either.right, {
      ...body,
      ...optional("client_state", clientState === undefined ? undefined : toBase64(clientState)),
      ...optional("command_id", commandId)
    }).pipe(Effect.asVoid, Effect.withSpan(`TelnyxVoice.${name}`, { attributes: { "carrier.name": "telnyx" } }))

  return {
    dial: (input) =>
      call("POST", "/v2/calls", commandRetry(input.commandId), decodeDialed, dialBody(input)).pipe(
        Effect.map(({ data }) => ({
          callControlId: data.call_control_id,
          callLegId: data.call_leg_id,
          callSessionId: data.call_session_id
        })),
        Effect.withSpan("TelnyxVoice.dial", {
          attributes: { "carrier.name": "telnyx", "call.assistant": input.assistantId !== undefined }
        })
      ),
    answer: (callControlId, options = {}) => action(callControlId, "answer", answerBody(options), options.commandId),
    transfer: (callControlId, to, options = {}) => action(callControlId, "transfer", { to }, options.commandId),
    hangup: (callControlId, options = {}) => action(callControlId, "hangup", {}, options.commandId),
    bridge: (callControlId, other, options = {}) =>
      action(callControlId, "bridge", { call_control_id: other }, options.commandId, options.clientState),
    speak: (callControlId, input, options = {}) =>
      action(
        callControlId,
        "speak",
        { payload: input.payload, voice: input.voice, ...optional("language", input.language) },
        options.commandId,
        options.clientState
      ),
    startRecording: (callControlId, options = {}) =>
      action(callControlId, "record_start", recordBody(options), options.commandId, options.clientState),
    upsertAssistant: (input) => {
      const id = input.assistantId ?? null
      const update = id !== null
      const path = id === null ? "/v2/ai/assistants" : `/v2/ai/assistants/${segment(id)}`
      return call("POST", path, update ? IDEMPOTENT_RETRY_ON : WRITE_RETRY_ON, decodeAssistant, assistantBody(input))
        .pipe(
          Effect.map((a) => ({ assistantId: "data" in a ? a.data.id : a.id })),
          Effect.withSpan("TelnyxVoice.upsertAssistant", {
            attributes: { "carrier.name": "telnyx", "assistant.update": update }
          })
        )
    },
    summaryInsightGroup: (assistantId) =>
      Effect.gen(function*() {
        if (assistantId !== null) {
          const assistant = yield* call(
            "GET",
            `/v2/ai/assistants/${segment(assistantId)}`,
            IDEMPOTENT_RETRY_ON,
            decodeInsightSettings
          )
          const known = assistant.insight_settings?.insight_group_id
          if (known !== undefined && known !== null && known !== "") return known
        }
        const insight = yield* call(
          "POST",
          "/v2/ai/conversations/insights",
          WRITE_RETRY_ON,
          decodeData,
          SUMMARY_INSIGHT
        )
        const group = yield* call("POST", "/v2/ai/conversations/insight-groups", WRITE_RETRY_ON, decodeData, {
          name: "Switchboard call summaries"
        })
        // Assigning again is harmless: retried like an idempotent request.
        yield* call(
          "POST",
          `/v2/ai/conversations/insight-groups/${segment(group.data.id)}/insights/${segment(insight.data.id)}/assign`,
          IDEMPOTENT_RETRY_ON,
          Either.right
        )
        return group.data.id
      }).pipe(Effect.withSpan("TelnyxVoice.summaryInsightGroup", { attributes: { "carrier.name": "telnyx" } })),
    conversationMessages: (conversationId, startedAt) =>
      call("GET", `/v2/ai/conversations/${segment(conversationId)}/messages`, IDEMPOTENT_RETRY_ON, decodeMessages).pipe(
        Effect.map(({ data }) => transcript(data, startedAt)),
        Effect.withSpan("TelnyxVoice.conversationMessages", { attributes: { "carrier.name": "telnyx" } })
      ),
    conversationInsights: (conversationId) =>
      call(
        "GET",
        `/v2/ai/conversations/${segment(conversationId)}/conversations-insights`,
        IDEMPOTENT_RETRY_ON,
        decodeInsights
      ).pipe(
        Effect.map(({ data }) => insightsSummary(data)),
        Effect.withSpan("TelnyxVoice.conversationInsights", { attributes: { "carrier.name": "telnyx" } })
      )
  }
}
