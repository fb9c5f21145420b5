/** SPEC "Endpoints": call history and the AI agent's outbound calls. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListCallsInput, PlaceCallInput } from "../../../core/calls/model.ts"
import { listCalls, placeCall } from "../../../core/tools/calls.ts"
import { call } from "./examples.ts"
import { capability, IdempotencyHeaders, limitParam, publicGroup } from "./shared.ts"

const outbound = {
  ...call,
  direction: "outbound",
  from: call.to,
  to: call.from,
  transcript: [{
    speaker: "agent",
    text: "Hello, I am calling to confirm your appointment tomorrow.",
    offsetSeconds: 0
  }]
} as const

export class CallsGroup extends publicGroup(
  HttpApiGroup.make("calls")
    .add(
      HttpApiEndpoint.get("list", "/calls")
        .setUrlParams(Schema.Struct({ ...ListCallsInput.fields, limit: Schema.optional(limitParam(200)) }))
        .addSuccess(listCalls.output.annotations({ examples: [{ calls: [call] }] }))
        .annotate(
          OpenApi.Description,
          "Call and voicemail history, newest first (`limit` 1 to 200, default 50). `recordingUrl` is a signed URL valid 1 h (the voicemail audio for a voicemail); `transcript` is the speaker-labelled transcript, `summary` the AI summary."
        )
        .pipe(capability(listCalls))
    )
    .add(
      HttpApiEndpoint.post("place", "/calls")
        .setPayload(PlaceCallInput.annotations({ examples: [{ to: call.from, job: "Confirm appointments" }] }))
        .addSuccess(
          placeCall.output.annotations({
            examples: [{ call: outbound, conversationId: call.conversationId, simulated: true }]
          }),
          { status: 201 }
        )
        .annotate(
          OpenApi.Description,
          "The published AI agent calls `to` (`Idempotency-Key` supported), from `from` (one of the workspace's active numbers; 404 otherwise) or the default number, optionally for one of its `job`s (by name; 400 when the agent has none of that name) and with extra `instructions`. Answers the call as it ended; on a real carrier (live keys) the call is under way: `status` `in_progress`, and it is recorded under the same `id` when it ends. Its events start with `call.completed` or `call.missed` (no `call.answered`), then `call.recording.completed` and `call.transcript.completed`. 409 `failed_precondition`: no published, enabled agent (`Publish an agent first`), no active number, or (live keys) a number added with a test key (`+1... was added with a test key and is not ordered at the carrier; buy it with a live key`; without `from`, live keys call from an ordered number first). Test keys dial nothing: the call is simulated (answered by the callee, with a recording, transcript and summary) and `simulated` is true."
        )
        .setHeaders(IdempotencyHeaders)
        .pipe(capability(placeCall))
    )
).annotate(OpenApi.Title, "Calls").annotate(
  OpenApi.Description,
  "Call and voicemail history, and outbound calls placed by the published agent."
) {}
