/**
 * The core Voice port on Telnyx (CARRIER=telnyx), over the Call Control and AI assistant client of
 * telnyxVoice.ts.
 *
 * - `publishAgent`: the published configuration becomes a Telnyx AI assistant, created on the first
 *   publish and updated (same id) on later ones. Telnyx requires non-empty `instructions`, so they are
 *   composed from the agent's instructions, tone, language and jobs (`assistantInstructions`), with a
 *   plain default when all are empty. The agent's `voice` is not sent: Telnyx's voice names are its
 *   own, and the assistant keeps its default voice.
 * - `handle`: an inbound call's route as Call Control commands: `agent` answers with the assistant,
 *   recording from the answer; `voicemail` answers and records (no greeting is played: Telnyx's
 *   `speak` is not used yet); `forward` transfers. Each carries a `command_id` of the call and
 *   action, so a repeated webhook does nothing twice.
 * - `conversationTranscript`: the assistant's conversation messages as the call's transcript.
 * - `dial`: refused (409) until outbound calls are recorded from their webhooks: a dialed call would
 *   never reach the activity log.
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
    config.jobs.length === 0 ? null : ["Jobs you may be calling about:", ...config.jobs.map((j) => `- ${j.name}: ${j.instructions}`)].join("\n")
  ].filter((s): s is string => s !== null && s.trim().length > 0)
  return parts.length > 0 ? parts.join("\n\n") : `You are ${config.name}, answering calls for this business. Be helpful, brief and polite.`
}

const toVoiceError = (e: TelnyxVoice.TelnyxVoiceError) => new VoiceError({ reason: e.reason, message: e.message })

export const make = (client: TelnyxVoice.TelnyxVoice): Voice =>
  Voice.of({
    dial: () => Effect.fail(new VoiceError({ reason: "rejected", message: "outbound AI calls are not available on this carrier yet" })),
    publishAgent: ({ assistantId, config }) =>
      client
        .upsertAssistant({
          assistantId,
          name: config.name,
          instructions: assistantInstructions(config),
          ...(config.greeting === null ? {} : { greeting: config.greeting })
        })
        .pipe(Effect.mapError(toVoiceError)),
    // command_id per call and action: a repeated webhook's second command is ignored by Telnyx.
    handle: (callControlId, action, clientState) => {
      const commandId = `${action.kind}-${callControlId}`
      switch (action.kind) {
        case "agent":
          return client
            .answer(callControlId, { ...(action.assistantId === null ? {} : { assistantId: action.assistantId }), clientState, record: true, commandId })
            .pipe(Effect.mapError(toVoiceError))
        case "voicemail":
          return client.answer(callControlId, { clientState, record: true, commandId }).pipe(Effect.mapError(toVoiceError))
        case "forward":
          return client.transfer(callControlId, action.to, { commandId }).pipe(Effect.mapError(toVoiceError))
      }
    },
    conversationTranscript: (conversationId, startedAt) => client.conversationMessages(conversationId, startedAt).pipe(Effect.mapError(toVoiceError))
  })

export const layer = (config: TelnyxConfig): Layer.Layer<Voice> => Layer.succeed(Voice, make(TelnyxVoice.make(config)))
