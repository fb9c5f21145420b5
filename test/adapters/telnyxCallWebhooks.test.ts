/**
 * Telnyx call webhooks (adapters/carrier/telnyxCallWebhooks.ts): the events of calls placed and
 * answered through the voice client against the fake Telnyx, signed with its key, read back as
 * CarrierCallEvent; each event type from a payload shaped as Telnyx documents it; events that are
 * not call events; malformed payloads; and signature, tampering and freshness failures.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Option, Redacted } from "effect"
import {
  type CarrierCallEvent,
  decodeClientState,
  parseCallEvent,
  verifyCallEvent
} from "../../adapters/carrier/telnyxCallWebhooks.ts"
import * as TelnyxVoice from "../../adapters/carrier/telnyxVoice.ts"
import type { TelnyxWebhookInput } from "../../adapters/carrier/telnyxWebhooks.ts"
import { createEd25519Signer, type SignedWebhook, useFakeTelnyx } from "../support/fakeTelnyx.ts"

const OURS = "+13122010001"
const CALLER = "+15550002222"

const fake = useFakeTelnyx()

const nowSeconds = () => Math.floor(Date.now() / 1000)
const input = (hook: SignedWebhook) => ({
  rawBody: hook.rawBody,
  signature: hook.headers["telnyx-signature-ed25519"],
  timestamp: hook.headers["telnyx-timestamp"],
  publicKey: fake().publicKey,
  nowSeconds: nowSeconds()
})
const event = (hook: SignedWebhook) => Effect.map(verifyCallEvent(input(hook)), Option.getOrThrow)
const voice = () =>
  TelnyxVoice.make({ apiKey: Redacted.make(fake().apiKey), messagingProfileId: "profile-1", baseUrl: fake().baseUrl })

/** The event a documented payload parses to. */
const parsed = (eventType: string, payload: unknown, occurredAt = "2026-11-24T03:00:30.000Z"): CarrierCallEvent => {
  const body = JSON.stringify({
    data: { record_type: "event", id: "evt-1", event_type: eventType, occurred_at: occurredAt, payload }
  })
  return Option.getOrThrow(Either.getOrThrow(parseCallEvent(body)))
}

describe("the events of a call through the fake", () => {
  it.live("an inbound call answered by the assistant and recorded: initiated, answered, hangup, recording.saved", () =>
    Effect.gen(function*() {
      const ringing = fake().voice.inboundCall({ from: CALLER, to: OURS, callerName: "JANE DOE" })
      const { assistantId } = yield* voice().upsertAssistant({ name: "Front desk", instructions: "Answer politely." })
      yield* voice().answer(ringing.callControlId, {
        assistantId,
        clientState: "{\"callId\":\"call_7\"}",
        record: true
      })
      const hooks = fake().callWebhooks(ringing.callControlId, { cause: "normal_clearing", source: "caller" })
      const events = yield* Effect.forEach(hooks, event)
      assert.deepStrictEqual(events.map((e) => e._tag), ["Initiated", "Answered", "Hangup", "RecordingSaved"])
      const ids = {
        callControlId: ringing.callControlId,
        callLegId: ringing.callLegId,
        callSessionId: ringing.callSessionId
      }
      const [initiated, answered, hangup, recording] = events
      assert.deepInclude(initiated, {
        ...ids,
        direction: "inbound",
        from: CALLER,
        to: OURS,
        callerName: "JANE DOE",
        clientState: null
      })
      assert.deepInclude(answered, { ...ids, from: CALLER, to: OURS, clientState: "{\"callId\":\"call_7\"}" })
      assert.deepInclude(hangup, {
        ...ids,
        cause: "normal_clearing",
        source: "caller",
        clientState: "{\"callId\":\"call_7\"}"
      })
      assert.isTrue(hangup?._tag === "Hangup" && hangup.durationSeconds !== null && hangup.durationSeconds >= 0)
      assert.isTrue(recording?._tag === "RecordingSaved")
      if (recording?._tag === "RecordingSaved") {
        assert.strictEqual(recording.callSessionId, ringing.callSessionId)
        assert.strictEqual(recording.callLegId, ringing.callLegId)
        assert.strictEqual(recording.callControlId, null)
        assert.match(recording.urls.mp3 ?? "", /^https:\/\/.+\.mp3\?/)
        assert.match(recording.urls.wav ?? "", /^https:\/\/.+\.wav\?/)
      }
      assert.strictEqual(new Set(events.map((e) => e.eventId)).size, 4)
    }))

  it.live("a dialled call carries our client_state from its first event; unanswered, it has no answer or recording", () =>
    Effect.gen(function*() {
      const call = yield* voice().dial({
        from: OURS,
        to: CALLER,
        connectionId: "conn-1",
        clientState: "call_8",
        record: true
      })
      const events = yield* Effect.forEach(
        fake().callWebhooks(call.callControlId, { cause: "timeout", source: "unknown" }),
        event
      )
      assert.deepStrictEqual(events.map((e) => e._tag), ["Initiated", "Hangup"])
      assert.deepInclude(events[0], {
        direction: "outbound",
        from: OURS,
        to: CALLER,
        clientState: "call_8",
        callerName: null
      })
      assert.deepInclude(events[1], { cause: "timeout", source: "unknown", callSessionId: call.callSessionId })
      const answeredCall = yield* voice().dial({
        from: OURS,
        to: CALLER,
        connectionId: "conn-1",
        clientState: "call_9",
        record: true
      })
      fake().voice.pickUp(answeredCall.callControlId)
      const tags = (yield* Effect.forEach(fake().callWebhooks(answeredCall.callControlId), event)).map((e) => e._tag)
      assert.deepStrictEqual(tags, ["Initiated", "Answered", "Hangup", "RecordingSaved"])
    }))
})

describe("documented payloads", () => {
  const leg = {
    call_control_id: "v3:MdI91X4lWFEs7IgbBEOT9M4AigoY08M0WWZFISt1Yw2axZ_IiE4pqg",
    call_leg_id: "428c31b6-7af4-4bcb-b7f5-5013ef9657c1",
    call_session_id: "428c31b6-abf3-4bcb-b7f5-5013ef9657c1",
    connection_id: "7267xxxxxxxxxxxxxx",
    client_state: "aGF2ZSBhIG5pY2UgZGF5ID1d"
  }
  const ids = { callControlId: leg.call_control_id, callLegId: leg.call_leg_id, callSessionId: leg.call_session_id }
  const state = "have a nice day =]"

  it("call.initiated: incoming is inbound, caller_id_name is the caller's name", () => {
    const e = parsed("call.initiated", {
      ...leg,
      direction: "incoming",
      from: "+35319605860",
      to: "+13129457420",
      caller_id_name: "+35319605860",
      state: "parked",
      start_time: "2026-11-24T03:00:00.000Z",
      custom_headers: [],
      shaken_stir_attestation: "A",
      shaken_stir_validated: true
    })
    assert.deepStrictEqual(e, {
      _tag: "Initiated",
      eventId: "evt-1",
      occurredAt: "2026-11-24T03:00:30.000Z",
      ...ids,
      clientState: state,
      direction: "inbound",
      from: "+35319605860",
      to: "+13129457420",
      callerName: "+35319605860"
    })
    const outgoing = parsed("call.initiated", {
      ...leg,
      direction: "outgoing",
      from: "+13129457420",
      to: "+35319605860",
      state: "bridging"
    })
    assert.deepInclude(outgoing, { direction: "outbound", callerName: null })
  })

  it("call.initiated from a withheld caller: `anonymous`, `restricted`, empty, null or absent `from` is taken as sent (empty when there is none)", () => {
    for (const from of ["anonymous", "Restricted", "sip:anon@sip.telnyx.com", ""]) {
      assert.deepInclude(parsed("call.initiated", { ...leg, direction: "incoming", from, to: "+13129457420" }), {
        _tag: "Initiated",
        from
      })
    }
    assert.deepInclude(parsed("call.initiated", { ...leg, direction: "incoming", from: null, to: "+13129457420" }), {
      _tag: "Initiated",
      from: ""
    })
    assert.deepInclude(parsed("call.initiated", { ...leg, direction: "incoming", to: "+13129457420" }), {
      _tag: "Initiated",
      from: ""
    })
    assert.deepInclude(parsed("call.answered", { ...leg, to: "+13129457420" }), { _tag: "Answered", from: "" })
  })

  it("call.answered", () => {
    const e = parsed("call.answered", {
      ...leg,
      from: "+35319605860",
      to: "+13129457420",
      state: "answered",
      start_time: "2026-11-24T03:00:00.000Z"
    })
    assert.deepStrictEqual(e, {
      _tag: "Answered",
      eventId: "evt-1",
      occurredAt: "2026-11-24T03:00:30.000Z",
      ...ids,
      clientState: state,
      from: "+35319605860",
      to: "+13129457420"
    })
  })

  it("call.hangup: duration from start_time to end_time, else to the event's occurred_at", () => {
    const payload = {
      ...leg,
      from: "+35319605860",
      to: "+13129457420",
      state: "hangup",
      hangup_cause: "user_busy",
      hangup_source: "callee",
      sip_hangup_cause: "486",
      start_time: "2026-11-24T03:00:00.000Z",
      end_time: "2026-11-24T03:01:05.900Z"
    }
    assert.deepStrictEqual(parsed("call.hangup", payload), {
      _tag: "Hangup",
      eventId: "evt-1",
      occurredAt: "2026-11-24T03:00:30.000Z",
      ...ids,
      clientState: state,
      cause: "user_busy",
      source: "callee",
      startTime: "2026-11-24T03:00:00.000Z",
      endTime: "2026-11-24T03:01:05.900Z",
      durationSeconds: 65
    })
    const { end_time: _end, hangup_cause: _cause, hangup_source: _source, ...sdkShaped } = payload
    assert.deepInclude(parsed("call.hangup", sdkShaped, "2026-11-24T03:00:42.000Z"), {
      cause: "unspecified",
      source: "unknown",
      endTime: "2026-11-24T03:00:42.000Z",
      durationSeconds: 42
    })
  })

  it("call.recording.saved: correlated on the session and leg; public URLs when the private ones are absent", () => {
    const payload = {
      call_leg_id: leg.call_leg_id,
      call_session_id: leg.call_session_id,
      connection_id: leg.connection_id,
      client_state: leg.client_state,
      channels: "single",
      recording_started_at: "2026-11-24T03:00:05.000Z",
      recording_ended_at: "2026-11-24T03:01:05.000Z",
      recording_urls: { mp3: "http://example.com/recording.mp3", wav: "http://example.com/recording.wav" },
      public_recording_urls: { mp3: "http://example.com/public.mp3", wav: null }
    }
    assert.deepStrictEqual(parsed("call.recording.saved", payload), {
      _tag: "RecordingSaved",
      eventId: "evt-1",
      occurredAt: "2026-11-24T03:00:30.000Z",
      callSessionId: leg.call_session_id,
      callLegId: leg.call_leg_id,
      callControlId: null,
      clientState: state,
      urls: { wav: "http://example.com/recording.wav", mp3: "http://example.com/recording.mp3" }
    })
    const { recording_urls: _urls, ...publicOnly } = payload
    assert.deepInclude(parsed("call.recording.saved", publicOnly), { urls: { mp3: "http://example.com/public.mp3" } })
  })

  it("call.recording.transcription.saved", () => {
    const e = parsed("call.recording.transcription.saved", {
      ...leg,
      recording_id: "rec-1",
      recording_transcription_id: "tr-1",
      status: "completed",
      transcription_text: "Hi, my sink is leaking."
    })
    assert.deepStrictEqual(e, {
      _tag: "TranscriptionSaved",
      eventId: "evt-1",
      occurredAt: "2026-11-24T03:00:30.000Z",
      callSessionId: leg.call_session_id,
      callLegId: leg.call_leg_id,
      callControlId: leg.call_control_id,
      text: "Hi, my sink is leaking."
    })
  })

  it("call.conversation.ended", () => {
    const e = parsed("call.conversation.ended", {
      ...leg,
      assistant_id: "assistant-123",
      conversation_id: "conv-456",
      calling_party_type: "pstn",
      duration_sec: 83,
      from: "+35319605860",
      to: "+13129457420",
      llm_model: "gpt-4o",
      stt_model: "deepgram/nova-3",
      tts_provider: "telnyx"
    })
    assert.deepStrictEqual(e, {
      _tag: "ConversationEnded",
      eventId: "evt-1",
      occurredAt: "2026-11-24T03:00:30.000Z",
      conversationId: "conv-456",
      assistantId: "assistant-123",
      durationSeconds: 83,
      callControlId: leg.call_control_id,
      callSessionId: leg.call_session_id,
      clientState: state
    })
  })

  it("call.conversation_insights.generated: only conversation_id is required (the payload is not documented); the call's ids when present", () => {
    assert.deepStrictEqual(
      parsed("call.conversation_insights.generated", {
        conversation_id: "conv-456",
        insight_group_id: "g-1",
        results: [{ anything: 1 }]
      }),
      {
        _tag: "InsightsGenerated",
        eventId: "evt-1",
        occurredAt: "2026-11-24T03:00:30.000Z",
        conversationId: "conv-456",
        callControlId: null,
        callSessionId: null,
        clientState: null
      }
    )
    assert.deepStrictEqual(parsed("call.conversation_insights.generated", { ...leg, conversation_id: "conv-456" }), {
      _tag: "InsightsGenerated",
      eventId: "evt-1",
      occurredAt: "2026-11-24T03:00:30.000Z",
      conversationId: "conv-456",
      callControlId: leg.call_control_id,
      callSessionId: leg.call_session_id,
      clientState: state
    })
    const none = parseCallEvent(
      JSON.stringify({
        data: { id: "evt-3", event_type: "call.conversation_insights.generated", payload: { call_session_id: "s" } }
      })
    )
    assert.isTrue(Either.isLeft(none) && none.left.reason === "malformed")
  })

  it("other events are none; a call event without its ids, or a body that is no envelope, is malformed", () => {
    const body = (eventType: string, payload: unknown) =>
      JSON.stringify({ data: { id: "evt-2", event_type: eventType, payload } })
    assert.isTrue(
      Option.isNone(Either.getOrThrow(parseCallEvent(body("call.speak.started", { ...leg }))))
    )
    // A voicemail's greeting played: the recording starts then.
    const spoken = Either.getOrThrow(parseCallEvent(body("call.speak.ended", { ...leg, status: "completed" })))
    assert.strictEqual(Option.getOrNull(spoken)?._tag, "SpeakEnded")
    assert.isTrue(
      Option.isNone(Either.getOrThrow(parseCallEvent(body("message.sent", { id: "m-1", to: [{ status: "sent" }] }))))
    )
    const noIds = parseCallEvent(body("call.hangup", { hangup_cause: "normal_clearing" }))
    assert.isTrue(
      Either.isLeft(noIds) && noIds.left.reason === "malformed" && noIds.left.message.startsWith("call.hangup payload")
    )
    const direction = parseCallEvent(body("call.initiated", { ...leg, direction: "sideways", from: "+1", to: "+2" }))
    assert.isTrue(Either.isLeft(direction) && direction.left.reason === "malformed")
    const notJson = parseCallEvent("{")
    assert.isTrue(Either.isLeft(notJson) && notJson.left.reason === "malformed")
  })

  it("client_state that is not base64 of UTF-8 text decodes to null", () => {
    assert.strictEqual(decodeClientState(Buffer.from("call_1 ✓").toString("base64")), "call_1 ✓")
    assert.strictEqual(decodeClientState("not base64!"), null)
    assert.strictEqual(decodeClientState(Buffer.from([0xff, 0xfe, 0x00]).toString("base64")), null)
    assert.strictEqual(decodeClientState(""), null)
    assert.strictEqual(decodeClientState(undefined), null)
  })
})

describe("verification", () => {
  const failure = (hook: SignedWebhook, change: Partial<TelnyxWebhookInput> = {}) =>
    Effect.map(Effect.exit(verifyCallEvent({ ...input(hook), ...change })), (exit) => {
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return assert.fail("expected a TelnyxWebhookError")
      return exit.cause.error
    })

  it.effect("another key's signature, a tampered body and a stale timestamp are refused before parsing", () =>
    Effect.gen(function*() {
      const ringing = fake().voice.inboundCall({ from: CALLER, to: OURS })
      const payload = fake().voice.callPayload(ringing.callControlId, "call.initiated")
      const forged = fake().signedWebhook("call.initiated", payload, { signer: createEd25519Signer() })
      assert.strictEqual((yield* failure(forged)).reason, "signature")
      const genuine = fake().signedWebhook("call.initiated", payload)
      const tampered = yield* failure(genuine, { rawBody: genuine.rawBody.replace(CALLER, "+15550009999") })
      assert.strictEqual(tampered.reason, "signature")
      const stale = fake().signedWebhook("call.initiated", payload, { timestamp: nowSeconds() - 301 })
      assert.strictEqual((yield* failure(stale)).reason, "timestamp")
      const unsigned = yield* failure(genuine, { signature: null })
      assert.strictEqual(unsigned.reason, "signature")
      // The genuine one passes.
      const e = yield* verifyCallEvent(input(genuine))
      assert.isTrue(Option.isSome(e) && e.value._tag === "Initiated")
    }))
})
