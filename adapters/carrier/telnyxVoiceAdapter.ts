/**
 * The core Voice port on Telnyx (CARRIER=telnyx), over the Call Control and AI assistant client of
 * telnyxVoice.ts.
 *
 * - `publishAgent`: the published configuration becomes a Telnyx AI assistant, created on the first
 *   publish and updated (same id) on later ones, with all of it: `name`, `greeting`, `instructions`
 *   (Telnyx requires them non-empty, so they are composed from the agent's instructions, tone,
 *   language and jobs, `assistantInstructions`, with a plain default when all are empty),
 *   `voice_settings.voice` (the agent's `voice` as Telnyx's voice id, e.g.
 *   `Telnyx.KokoroTTS.af_heart`, also the voice when null), `transcription.language` (the
 *   agent's `language` as ISO 639-1 when it is a language code such as `en` or `es-MX`, else `auto`;
 *   the instructions carry it in any case); a cleared greeting is sent as `""`), and `insight_settings` naming the insight group that makes
 *   the call summary (`summaryInsightGroup`: the assistant's own group, else one made for it).
 * - `handle`: an inbound call's route as Call Control commands: `agent` answers with the assistant,
 *   recording from the answer; `voicemail` answers; `forward` transfers. Each carries a
 *   `command_id` of the call and action, so a repeated webhook does nothing twice (Telnyx ignores
 *   a command id it saw in the last 60 s).
 * - `ring`, `connect`, `hangup`: an `app` call rings the team. Each teammate's phone is dialled from
 *   the workspace number with `link_to` the inbound leg (so the leg's webhooks carry the call's
 *   `call_session_id`) and `timeout_secs` the ring time (Telnyx then ends it with `call.hangup`,
 *   `hangup_cause: timeout`); no `bridge_on_answer`, so only the first teammate to pick up is joined
 *   (the core decides, under the call's lock): `connect` answers the parked inbound leg, recording
 *   from the answer, and bridges it with the teammate's leg. Every command carries a `command_id`.
 * - `voicemailStep`: once answered, the greeting with `speak` (Telnyx's basic voice; a `xx-XX`
 *   language is passed on); once `call.speak.ended` says it was played, `record_start` of the
 *   caller's channel with a beep and `transcription: true`, so Telnyx sends
 *   `call.recording.transcription.saved` after `call.recording.saved`. Telnyx's recording docs
 *   start the recording after the greeting rather than from the answer, so the greeting is not in it.
 * - `conversationTranscript`: the assistant's conversation messages as the call's transcript, Telnyx's
 *   `user` as the `callee` of a call we dialed (the `caller` of an inbound one).
 * - `conversationSummary`: the conversation's completed insights as the call's summary.
 * - `dial`: a Call Control dial on the connection (TELNYX_CONNECTION_ID) with the published agent's
 *   assistant, recording from the answer, `client_state` naming the workspace and our call id, and
 *   `command_id` from the call id, and the call's instructions (the agent's, the job's, then the
 *   call's own, as `Calls.place` composes them) as the assistant's `instructions` override for this
 *   call. It answers at once; the call is recorded from its webhooks.
 */
import { Effect, Layer } from "effect"
import type { AgentConfig } from "../../core/agent/model.ts"
import { Voice, VoiceError } from "../../core/calls/voice.ts"
import type { TelnyxConfig } from "./telnyxClient.ts"
import * as TelnyxVoice from "./telnyxVoice.ts"

/** What the assistant is told: the agent's own instructions first, then how to speak, then its jobs. */
export const assistantInstructions = (config: AgentConfig): string => {
  const parts = [
    config.instructions,
    config.tone === null ? null : `Tone: ${config.tone}.`,
    config.language === null ? null : `Speak ${config.language}.`,
    config.jobs.length === 0
      ? null
      : ["Jobs you may be calling about:", ...config.jobs.map((j) => `- ${j.name}: ${j.instructions}`)].join("\n")
  ].filter((s): s is string => s !== null && s.trim().length > 0)
  return parts.length > 0
    ? parts.join("\n\n")
    : `You are ${config.name}, answering calls for this business. Be helpful, brief and polite.`
}

/**
 * The agent's language as Telnyx's speech recognition takes it: ISO 639-1 when it is a language code,
 * else `auto` (Telnyx's update-an-assistant reference: "If not set, or if set to `auto`, supported
 * models will automatically detect the language"), which also clears a language set before.
 */
export const transcriptionLanguage = (language: string | null): string => {
  const code = /^([a-z]{2})(?:[-_][a-z]{2})?$/i.exec(language?.trim() ?? "")
  return code === null ? "auto" : code[1]!.toLowerCase()
}

/**
 * The voice of an agent that names none. `voice_settings.voice` is required once `voice_settings`
 * is sent and Telnyx documents no default, so this is the Telnyx voice its assistant reference
 * gives as the example; sending it is how a voice set before is cleared.
 */
export const DEFAULT_ASSISTANT_VOICE = "Telnyx.KokoroTTS.af_heart"

const toVoiceError = (e: TelnyxVoice.TelnyxVoiceError) => new VoiceError({ reason: e.reason, message: e.message })

export const make = (client: TelnyxVoice.TelnyxVoice, connectionId: string | undefined): Voice =>
  Voice.of({
    dial: (request) =>
      connectionId === undefined
        ? Effect.fail(
          new VoiceError({
            reason: "rejected",
            message: "no Call Control connection is configured (TELNYX_CONNECTION_ID)"
          })
        )
        : client
          .dial({
            from: request.from,
            to: request.to,
            connectionId,
            ...(request.assistantId === null ? {} : { assistantId: request.assistantId }),
            // This call's job and extra instructions ride on the dial: Telnyx overrides the assistant's instructions for this call only.
            ...(request.assistantId === null || request.instructions === null
              ? {}
              : { assistantInstructions: request.instructions }),
            clientState: request.clientState,
            // Telnyx ignores a second dial with this id, so a retried request rings the callee once.
            commandId: `dial-${request.callId}`,
            record: true
          })
          .pipe(
            Effect.map((d) => ({ carrierCallId: d.callSessionId, callControlId: d.callControlId })),
            Effect.mapError(toVoiceError)
          ),
    publishAgent: ({ assistantId, config }) => {
      const language = transcriptionLanguage(config.language)
      return client.summaryInsightGroup(assistantId).pipe(
        Effect.flatMap((insightGroupId) =>
          client.upsertAssistant({
            assistantId,
            name: config.name,
            instructions: assistantInstructions(config),
            insightGroupId,
            // Each field is sent even when cleared, so an update never keeps a value the agent dropped.
            // An empty greeting makes the assistant wait for the caller to speak first (Telnyx's reference).
            greeting: config.greeting ?? "",
            voice: config.voice === null || config.voice.trim() === "" ? DEFAULT_ASSISTANT_VOICE : config.voice.trim(),
            language
          })
        ),
        Effect.mapError(toVoiceError)
      )
    },
    // command_id per call and action: a repeated webhook's second command is ignored by Telnyx.
    handle: (callControlId, action, clientState) => {
      const commandId = `${action.kind}-${callControlId}`
      switch (action.kind) {
        case "agent":
          return client
            .answer(callControlId, {
              ...(action.assistantId === null ? {} : { assistantId: action.assistantId }),
              clientState,
              record: true,
              commandId
            })
            .pipe(Effect.mapError(toVoiceError))
        case "voicemail":
          return client.answer(callControlId, { clientState, commandId }).pipe(Effect.mapError(toVoiceError))
        case "forward":
          return client.transfer(callControlId, action.to, { commandId }).pipe(Effect.mapError(toVoiceError))
      }
    },
    ring: (request) =>
      connectionId === undefined
        ? Effect.fail(
          new VoiceError({
            reason: "rejected",
            message: "no Call Control connection is configured (TELNYX_CONNECTION_ID)"
          })
        )
        : client.dial({
          from: request.from,
          to: request.to,
          connectionId,
          linkTo: request.callControlId,
          timeoutSecs: request.ringSeconds,
          clientState: request.clientState,
          // A repeated call.initiated rings each phone once.
          commandId: `ring-${request.callControlId}-${request.memberUid}`
        }).pipe(
          Effect.map((d) => ({ callControlId: d.callControlId })),
          Effect.mapError(toVoiceError)
        ),
    connect: (callControlId, memberLeg, clientState) =>
      client.answer(callControlId, { clientState, record: true, commandId: `team-${callControlId}` }).pipe(
        Effect.zipRight(client.bridge(callControlId, memberLeg, { commandId: `bridge-${callControlId}`, clientState })),
        Effect.mapError(toVoiceError)
      ),
    hangup: (callControlId) =>
      client.hangup(callControlId, { commandId: `hangup-${callControlId}` }).pipe(Effect.mapError(toVoiceError)),
    voicemailStep: (callControlId, step, clientState) =>
      (step.kind === "greet"
        ? client.speak(
          callControlId,
          {
            payload: step.text,
            voice: TelnyxVoice.GREETING_VOICE,
            ...(step.language !== null && /^[a-z]{2}-[A-Z]{2}$/.test(step.language) ? { language: step.language } : {})
          },
          { commandId: `greet-${callControlId}`, clientState }
        )
        : client.startRecording(callControlId, {
          channels: "single",
          playBeep: true,
          transcription: true,
          commandId: `record-${callControlId}`,
          clientState
        })).pipe(Effect.mapError(toVoiceError)),
    conversationTranscript: (conversationId, startedAt, direction) =>
      client.conversationMessages(conversationId, startedAt).pipe(
        Effect.map((lines) =>
          direction === "inbound"
            ? lines
            : lines.map((line) => (line.speaker === "caller" ? { ...line, speaker: "callee" as const } : line))
        ),
        Effect.mapError(toVoiceError)
      ),
    conversationSummary: (conversationId) =>
      client.conversationInsights(conversationId).pipe(Effect.mapError(toVoiceError))
  })

export const layer = (config: TelnyxConfig): Layer.Layer<Voice> =>
  Layer.succeed(Voice, make(TelnyxVoice.make(config), config.connectionId))
