/**
 * The simulated voice carrier: every call is answered by the callee and plays the scripted
 * conversation of core/calls/script.ts at once (a 45-second call with a recording), so `POST /calls`
 * answers the finished call. The embedded default: a fresh install never places a real call.
 */
import { Effect, Layer } from "effect"
import { simulatedPlacedCall } from "../../core/calls/script.ts"
import { Voice, VoiceError } from "../../core/calls/voice.ts"
import { Ids } from "../../core/kernel/ids.ts"

/** The simulator plays the agent itself: there is no carrier assistant to keep in step. */
const noAssistant = Effect.succeed({ assistantId: null })

/**
 * The simulator plays each call at once (an `app` call's teammate included: core/calls/inbound.ts):
 * no carrier events arrive, so these are never asked for.
 */
const noEvents = Effect.fail(
  new VoiceError({ reason: "rejected", message: "the simulated carrier sends no call events" })
)
const noCarrierCalls = {
  handle: () => noEvents,
  ring: () => noEvents,
  connect: () => noEvents,
  hangup: () => noEvents,
  voicemailStep: () => noEvents,
  conversationTranscript: () => noEvents,
  conversationSummary: () => noEvents
}

export const layer = Layer.succeed(
  Voice,
  Voice.of({
    dial: (request) =>
      Effect.map(
        Ids,
        ({ uuid }) => ({
          carrierCallId: `sim_call_${uuid()}`,
          callControlId: `sim_call_${request.callId}`,
          ended: simulatedPlacedCall(request.greeting, request.purpose)
        })
      ),
    publishAgent: () => noAssistant,
    ...noCarrierCalls
  })
)
