/**
 * The simulated voice carrier: every call is answered by the callee and plays the scripted
 * conversation of core/calls/script.ts at once (a 45-second call with a recording), so `POST /calls`
 * answers the finished call. The embedded default: a fresh install never places a real call.
 */
import { Effect, Layer } from "effect"
import { placedCall, recordingWav } from "../../core/calls/script.ts"
import { Voice, VoiceError } from "../../core/calls/voice.ts"
import { Ids } from "../../core/ids.ts"

const DURATION_SECONDS = 45

export const layer = Layer.succeed(
  Voice,
  Voice.of({
    dial: (request) =>
      Effect.map(Ids, ({ uuid }) => {
        const played = placedCall(DURATION_SECONDS, request.greeting, request.purpose)
        return {
          carrierCallId: `sim_call_${uuid()}`,
          ended: { answered: true, durationSeconds: DURATION_SECONDS, ...played, recording: { bytes: recordingWav(DURATION_SECONDS), contentType: "audio/wav" } }
        }
      })
  })
)

/**
 * For CARRIER=telnyx until its voice adapter exists: live keys' calls are refused (409) rather than
 * simulated, so a live workspace never sees a made-up call. Test keys never reach the port.
 */
export const layerRefused = Layer.succeed(
  Voice,
  Voice.of({ dial: () => Effect.fail(new VoiceError({ reason: "rejected", message: "outbound AI calls are not available on this carrier yet" })) })
)
