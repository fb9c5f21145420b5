/**
 * The Telnyx voice client (adapters/carrier/telnyxVoice.ts) against the fake Telnyx over real
 * HTTP: what each call and command sends (base64 client_state, command_id, record, assistant),
 * what it reads back, the assistant created then updated, transcripts, conversation insights as a
 * summary, and failures: Telnyx's
 * 4xx words as `rejected`, 401/429/5xx/timeouts/malformed answers as `unavailable`, retries only
 * where a request is safe to repeat, and the API key in no error.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import type { TelnyxConfig } from "../../adapters/carrier/telnyxClient.ts"
import * as TelnyxVoice from "../../adapters/carrier/telnyxVoice.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"

const CONNECTION = "1684641123236054244"
const OURS = "+13122010001"
const CALLER = "+15550002222"

const fake = useFakeTelnyx()

const voice = (config: Partial<TelnyxConfig> = {}) =>
  TelnyxVoice.make({
    apiKey: Redacted.make(fake().apiKey),
    messagingProfileId: "profile-1",
    baseUrl: fake().baseUrl,
    ...config
  })

/** The error an effect fails with; the test fails if it succeeds. */
const failure = <A>(effect: Effect.Effect<A, TelnyxVoice.TelnyxVoiceError>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) assert.fail(`expected a failure, got ${JSON.stringify(exit.value)}`)
    const error = Exit.isFailure(exit) && exit.cause._tag === "Fail"
      ? exit.cause.error
      : assert.fail(`expected a TelnyxVoiceError, got ${String(exit.cause)}`)
    assert.notInclude(error.message, fake().apiKey)
    return error
  })

const sent = (path: string) => fake().requests.filter((r) => r.path === path)
const body = (path: string, index = 0) => sent(path)[index]?.json as Record<string, unknown>
const fromBase64 = (text: unknown) => Buffer.from(String(text), "base64").toString("utf8")

describe("dial", () => {
  it.live("sends the call with base64 client_state, command_id, record-from-answer, the assistant and the ring timeout", () =>
    Effect.gen(function*() {
      const v = voice()
      const { assistantId } = yield* v.upsertAssistant({ name: "Front desk", instructions: "Answer politely." })
      const state = JSON.stringify({ callId: "call_1", note: "café ☎" })
      const call = yield* v.dial({
        from: OURS,
        to: CALLER,
        connectionId: CONNECTION,
        assistantId,
        clientState: state,
        commandId: "dial-call_1",
        record: true,
        timeoutSecs: 30
      })
      const b = body("/v2/calls")
      assert.deepStrictEqual(b, {
        connection_id: CONNECTION,
        from: OURS,
        to: CALLER,
        client_state: Buffer.from(state, "utf8").toString("base64"),
        command_id: "dial-call_1",
        timeout_secs: 30,
        record: "record-from-answer",
        record_format: "mp3",
        record_channels: "dual",
        assistant: { id: assistantId }
      })
      assert.strictEqual(fromBase64(b["client_state"]), state)
      assert.strictEqual(sent("/v2/calls")[0]?.headers["authorization"], `Bearer ${fake().apiKey}`)
      const held = fake().voice.calls.get(call.callControlId)
      assert.isDefined(held)
      assert.deepStrictEqual(call, {
        callControlId: held!.callControlId,
        callLegId: held!.callLegId,
        callSessionId: held!.callSessionId
      })
      assert.isTrue(held!.recording)
      assert.strictEqual(held!.assistantId, assistantId)
    }))

  it.live("this call's instructions ride in the assistant object beside its id", () =>
    Effect.gen(function*() {
      const v = voice()
      const { assistantId } = yield* v.upsertAssistant({ name: "Front desk", instructions: "Answer politely." })
      yield* v.dial({
        from: OURS,
        to: CALLER,
        connectionId: CONNECTION,
        assistantId,
        assistantInstructions: "Answer politely.\n\nConfirm Tuesday's visit."
      })
      assert.deepStrictEqual(body("/v2/calls")["assistant"], {
        id: assistantId,
        instructions: "Answer politely.\n\nConfirm Tuesday's visit."
      })
    }))

  it.live("leaves out what was not asked for", () =>
    Effect.gen(function*() {
      yield* voice().dial({ from: OURS, to: CALLER, connectionId: CONNECTION })
      assert.deepStrictEqual(body("/v2/calls"), { connection_id: CONNECTION, from: OURS, to: CALLER })
    }))

  it.live("a repeated command_id places one call", () =>
    Effect.gen(function*() {
      const v = voice()
      const first = yield* v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION, commandId: "same" })
      const again = yield* v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION, commandId: "same" })
      assert.deepStrictEqual(again, first)
      assert.strictEqual(fake().voice.calls.size, 1)
    }))

  it.live("a 4xx is rejected in Telnyx's words", () =>
    Effect.gen(function*() {
      const v = voice()
      const e164 = yield* failure(v.dial({ from: OURS, to: "5550002222", connectionId: CONNECTION }))
      assert.strictEqual(e164.reason, "rejected")
      assert.strictEqual(e164.message, "The 'to' parameter must be in +E.164 format.")
      const connection = yield* failure(v.dial({ from: OURS, to: CALLER, connectionId: "" }))
      assert.strictEqual(connection.reason, "rejected")
      assert.strictEqual(connection.message, "The 'connection_id' parameter is required.")
      const timeout = yield* failure(v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION, timeoutSecs: 2 }))
      assert.include(timeout.message, "timeout_secs")
      const assistant = yield* failure(
        v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION, assistantId: "assistant-missing" })
      )
      assert.strictEqual(assistant.message, "Assistant assistant-missing was not found.")
      assert.strictEqual(fake().voice.calls.size, 0)
      assert.strictEqual(sent("/v2/calls").length, 4)
    }))

  it.live("a 429 is retried, and when the retries run out the call is unavailable", () =>
    Effect.gen(function*() {
      const v = voice()
      fake().script({ type: "rateLimit", retryAfterSeconds: 0 })
      yield* v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION })
      assert.strictEqual(sent("/v2/calls").length, 2)
      fake().reset()
      fake().script({ type: "rateLimit", retryAfterSeconds: 0 }, 3)
      const error = yield* failure(v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION }))
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "gave up after 2 retries")
      assert.notInclude(error.message, "may have gone through")
      assert.strictEqual(sent("/v2/calls").length, 3)
    }))

  it.live("a 5xx is retried only with a command_id: without one the call may already ring", () =>
    Effect.gen(function*() {
      const v = voice()
      fake().script({ type: "serverError", status: 502 })
      const error = yield* failure(v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION }))
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "may have gone through")
      assert.strictEqual(sent("/v2/calls").length, 1)
      fake().reset()
      fake().script({ type: "serverError", status: 500 })
      yield* v.dial({ from: OURS, to: CALLER, connectionId: CONNECTION, commandId: "dial-2" })
      assert.strictEqual(sent("/v2/calls").length, 2)
      assert.strictEqual(fake().voice.calls.size, 1)
    }))

  it.live("our credentials refused, a timeout and a malformed answer are unavailable, and never show the key", () =>
    Effect.gen(function*() {
      const wrongKey = "KEY_wrong_secret_value"
      const auth = yield* failure(
        voice({ apiKey: Redacted.make(wrongKey) }).dial({ from: OURS, to: CALLER, connectionId: CONNECTION })
      )
      assert.strictEqual(auth.reason, "unavailable")
      assert.include(auth.message, "refused our account")
      assert.notInclude(auth.message, wrongKey)
      fake().script({ type: "hang" })
      const hung = yield* failure(voice({ timeoutMs: 200 }).dial({ from: OURS, to: CALLER, connectionId: CONNECTION }))
      assert.strictEqual(hung.reason, "unavailable")
      assert.include(hung.message, "did not answer within 200 ms")
      assert.include(hung.message, "may have gone through")
      fake().script({ type: "malformed", body: "{\"data\": {\"call_control_id\": \"v3:x\"}}" })
      const malformed = yield* failure(voice().dial({ from: OURS, to: CALLER, connectionId: CONNECTION }))
      assert.strictEqual(malformed.reason, "unavailable")
      assert.include(malformed.message, "malformed answer to POST /v2/calls")
    }))
})

describe("call commands", () => {
  const actionPath = (id: string, action: string) => `/v2/calls/${encodeURIComponent(id)}/actions/${action}`

  it.live("answer hands an inbound call to the assistant, recorded, with our client_state", () =>
    Effect.gen(function*() {
      const v = voice()
      const { assistantId } = yield* v.upsertAssistant({ name: "Front desk", instructions: "Answer politely." })
      const ringing = fake().voice.inboundCall({ from: CALLER, to: OURS, callerName: "JANE DOE" })
      yield* v.answer(ringing.callControlId, { assistantId, clientState: "call_9", record: true })
      assert.deepStrictEqual(body(actionPath(ringing.callControlId, "answer")), {
        client_state: Buffer.from("call_9").toString("base64"),
        record: "record-from-answer",
        record_format: "mp3",
        record_channels: "dual",
        assistant: { id: assistantId }
      })
      const call = fake().voice.calls.get(ringing.callControlId)!
      assert.strictEqual(call.state, "answered")
      assert.isTrue(call.recording)
      assert.strictEqual(call.assistantId, assistantId)
      const twice = yield* failure(v.answer(ringing.callControlId))
      assert.strictEqual(twice.reason, "rejected")
      assert.strictEqual(twice.message, "This call can no longer be answered.")
    }))

  it.live("answer with nothing asked sends an empty body", () =>
    Effect.gen(function*() {
      const ringing = fake().voice.inboundCall({ from: CALLER, to: OURS })
      yield* voice().answer(ringing.callControlId)
      assert.deepStrictEqual(body(actionPath(ringing.callControlId, "answer")), {})
    }))

  it.live("transfer, record_start and hangup send their bodies; a command on an ended or unknown call is rejected", () =>
    Effect.gen(function*() {
      const v = voice()
      const ringing = fake().voice.inboundCall({ from: CALLER, to: OURS })
      const id = ringing.callControlId
      yield* v.answer(id)
      yield* v.startRecording(id)
      assert.deepStrictEqual(body(actionPath(id, "record_start")), { format: "mp3", channels: "dual" })
      assert.isTrue(fake().voice.calls.get(id)!.recording)
      yield* v.transfer(id, "+13125550199", { commandId: "transfer-1" })
      assert.deepStrictEqual(body(actionPath(id, "transfer")), { to: "+13125550199", command_id: "transfer-1" })
      assert.strictEqual(fake().voice.calls.get(id)!.transferredTo, "+13125550199")
      const badTo = yield* failure(v.transfer(id, "3125550199"))
      assert.strictEqual(badTo.reason, "rejected")
      assert.strictEqual(badTo.message, "The 'to' parameter must be in +E.164 format.")
      yield* v.hangup(id)
      assert.deepStrictEqual(body(actionPath(id, "hangup")), {})
      assert.strictEqual(fake().voice.calls.get(id)!.state, "ended")
      const ended = yield* failure(v.hangup(id))
      assert.strictEqual(ended.reason, "rejected")
      assert.strictEqual(ended.message, "This call is no longer active and can't receive commands.")
      const unknown = yield* failure(v.hangup("v3:nobody"))
      assert.strictEqual(unknown.reason, "rejected")
      assert.strictEqual(unknown.message, "Call not found.")
    }))

  it.live("a dial linked to a call shares its session; bridge joins two live legs, and the other leg ends with either; a link or bridge to an unknown or ended leg is rejected", () =>
    Effect.gen(function*() {
      const v = voice()
      const caller = fake().voice.inboundCall({ from: CALLER, to: OURS })
      const teammate = yield* v.dial({
        from: OURS,
        to: "+13125550177",
        connectionId: CONNECTION,
        linkTo: caller.callControlId,
        timeoutSecs: 25,
        commandId: "ring-1"
      })
      assert.deepStrictEqual(body("/v2/calls"), {
        connection_id: CONNECTION,
        from: OURS,
        to: "+13125550177",
        command_id: "ring-1",
        timeout_secs: 25,
        link_to: caller.callControlId
      })
      assert.strictEqual(teammate.callSessionId, caller.callSessionId)
      const unlinked = yield* failure(
        v.dial({ from: OURS, to: "+13125550177", connectionId: CONNECTION, linkTo: "v3:nobody" })
      )
      assert.strictEqual(unlinked.reason, "rejected")

      fake().voice.pickUp(teammate.callControlId)
      yield* v.answer(caller.callControlId)
      const nobody = yield* failure(v.bridge(caller.callControlId, "v3:nobody"))
      assert.strictEqual(nobody.message, "The call_control_id provided was not valid.")
      yield* v.bridge(caller.callControlId, teammate.callControlId, { commandId: "bridge-1" })
      assert.deepStrictEqual(body(actionPath(caller.callControlId, "bridge"), 1), {
        call_control_id: teammate.callControlId,
        command_id: "bridge-1"
      })
      fake().pendingCallWebhooks()
      fake().voice.callerHangsUp(caller.callControlId)
      assert.strictEqual(fake().voice.calls.get(teammate.callControlId)!.state, "ended")
      assert.deepStrictEqual(
        fake().pendingCallWebhooks().map((w) => [w.eventType, JSON.parse(w.rawBody).data.payload.call_control_id]),
        [["call.hangup", caller.callControlId], ["call.hangup", teammate.callControlId]]
      )
      const ended = yield* failure(v.bridge(teammate.callControlId, caller.callControlId))
      assert.strictEqual(ended.message, "This call is no longer active and can't receive commands.")
    }))

  it.live("a command is retried on a 5xx only with a command_id", () =>
    Effect.gen(function*() {
      const v = voice()
      const id = fake().voice.inboundCall({ from: CALLER, to: OURS }).callControlId
      fake().script({ type: "serverError", status: 503 })
      const error = yield* failure(v.answer(id))
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "may have gone through")
      assert.strictEqual(sent(actionPath(id, "answer")).length, 1)
      fake().script({ type: "serverError", status: 503 })
      yield* v.answer(id, { commandId: "answer-1" })
      assert.strictEqual(sent(actionPath(id, "answer")).length, 3)
      assert.strictEqual(fake().voice.calls.get(id)!.state, "answered")
    }))
})

describe("assistants", () => {
  it.live("creates an assistant, then updates the same one with POST /v2/ai/assistants/{id}", () =>
    Effect.gen(function*() {
      const v = voice()
      const created = yield* v.upsertAssistant({
        assistantId: null,
        name: "Front desk",
        instructions: "Answer politely.",
        greeting: "Hi, Acme Plumbing."
      })
      assert.deepStrictEqual(body("/v2/ai/assistants"), {
        name: "Front desk",
        instructions: "Answer politely.",
        greeting: "Hi, Acme Plumbing."
      })
      const updated = yield* v.upsertAssistant({
        assistantId: created.assistantId,
        name: "Front desk",
        instructions: "Book jobs."
      })
      assert.strictEqual(updated.assistantId, created.assistantId)
      const update = fake().requests.find((r) => r.path === `/v2/ai/assistants/${created.assistantId}`)
      assert.strictEqual(update?.method, "POST")
      assert.deepStrictEqual(update?.json, { name: "Front desk", instructions: "Book jobs." })
      assert.strictEqual(fake().voice.assistants.size, 1)
      const held = fake().voice.assistants.get(created.assistantId)!
      assert.strictEqual(held["instructions"], "Book jobs.")
      assert.strictEqual(held["greeting"], "Hi, Acme Plumbing.")
    }))

  it.live("a refused assistant is rejected in the words of either error shape", () =>
    Effect.gen(function*() {
      const v = voice()
      const empty = yield* failure(v.upsertAssistant({ name: "Front desk", instructions: "" }))
      assert.strictEqual(empty.reason, "rejected")
      assert.strictEqual(empty.message, "body.instructions: ensure this value has at least 1 characters")
      const unknown = yield* failure(
        v.upsertAssistant({ assistantId: "assistant-gone", name: "Front desk", instructions: "Hi" })
      )
      assert.strictEqual(unknown.reason, "rejected")
      assert.strictEqual(unknown.message, "Assistant assistant-gone was not found.")
      assert.strictEqual(fake().voice.assistants.size, 0)
    }))

  it.live("an update is retried on a 5xx, a create is not", () =>
    Effect.gen(function*() {
      const v = voice()
      fake().script({ type: "serverError", status: 500 })
      const error = yield* failure(v.upsertAssistant({ name: "Front desk", instructions: "Hi" }))
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "may have gone through")
      assert.strictEqual(sent("/v2/ai/assistants").length, 1)
      const { assistantId } = yield* v.upsertAssistant({ name: "Front desk", instructions: "Hi" })
      fake().script({ type: "serverError", status: 500 })
      yield* v.upsertAssistant({ assistantId, name: "Front desk", instructions: "Hello" })
      assert.strictEqual(sent(`/v2/ai/assistants/${assistantId}`).length, 2)
      assert.strictEqual(fake().voice.assistants.get(assistantId)!["instructions"], "Hello")
    }))
})

describe("conversationMessages", () => {
  const at = (seconds: number) => new Date(Date.UTC(2026, 10, 24, 3, 0, seconds)).toISOString()

  it.live("reads the transcript oldest first, speakers named, tool calls and empty lines left out, offsets in seconds", () =>
    Effect.gen(function*() {
      // Newest first, as a list endpoint may return them; the order is not documented.
      fake().voice.setConversation("conv-1", [
        { role: "user", text: "Tomorrow at 9 works.", sent_at: at(21) },
        { role: "tool", text: null, sent_at: at(15) },
        { role: "user", text: "Thanks, bye." },
        { role: "assistant", text: "When would you like us to come?", sent_at: at(12) },
        { role: "user", text: "  My sink is leaking.  ", created_at: at(6) },
        { role: "assistant", text: "", sent_at: at(5) },
        { role: "assistant", text: "Hi, Acme Plumbing. How can I help?", sent_at: at(2) }
      ])
      const lines = yield* voice().conversationMessages("conv-1")
      assert.deepStrictEqual(lines, [
        { speaker: "agent", text: "Hi, Acme Plumbing. How can I help?", offsetSeconds: 0 },
        { speaker: "caller", text: "My sink is leaking.", offsetSeconds: 4 },
        { speaker: "agent", text: "When would you like us to come?", offsetSeconds: 10 },
        { speaker: "caller", text: "Tomorrow at 9 works.", offsetSeconds: 19 },
        // Untimed: last, at the time of the line before it.
        { speaker: "caller", text: "Thanks, bye.", offsetSeconds: 19 }
      ])
      const fromAnswer = yield* voice().conversationMessages("conv-1", at(0))
      assert.deepStrictEqual(fromAnswer.map((l) => l.offsetSeconds), [2, 6, 12, 21, 21])
    }))

  it.live("an unknown conversation is rejected; a 5xx is retried", () =>
    Effect.gen(function*() {
      const missing = yield* failure(voice().conversationMessages("conv-missing"))
      assert.strictEqual(missing.reason, "rejected")
      assert.strictEqual(missing.message, "Conversation not found.")
      fake().voice.setConversation("conv-2", [{ role: "user", text: "Hello?", sent_at: at(1) }])
      fake().script({ type: "serverError", status: 500 }, 2)
      const lines = yield* voice().conversationMessages("conv-2")
      assert.deepStrictEqual(lines, [{ speaker: "caller", text: "Hello?", offsetSeconds: 0 }])
      assert.strictEqual(sent("/v2/ai/conversations/conv-2/messages").length, 3)
    }))
})

describe("conversationInsights", () => {
  const path = (id: string) => `/v2/ai/conversations/${id}/conversations-insights`

  it.live("pending while any run is pending or in progress, or none is listed; else the completed results joined, failed runs left out", () =>
    Effect.gen(function*() {
      const v = voice()
      fake().voice.setInsights("conv-1", [])
      assert.deepStrictEqual(yield* v.conversationInsights("conv-1"), { _tag: "Pending" })
      fake().voice.setInsights("conv-1", [{ status: "completed", results: ["Done."] }, { status: "in_progress" }])
      assert.deepStrictEqual(yield* v.conversationInsights("conv-1"), { _tag: "Pending" })
      fake().voice.setInsights("conv-1", [{ status: "pending" }])
      assert.deepStrictEqual(yield* v.conversationInsights("conv-1"), { _tag: "Pending" })
      fake().voice.setInsights("conv-1", [
        { status: "completed", results: ["  Caller's sink leaks; visit booked for 9am.  ", ""] },
        { status: "failed", results: ["not this"] },
        { status: "completed", results: ["Sentiment: relieved."] }
      ])
      assert.deepStrictEqual(yield* v.conversationInsights("conv-1"), {
        _tag: "Ready",
        text: "Caller's sink leaks; visit booked for 9am.\n\nSentiment: relieved."
      })
      fake().voice.setInsights("conv-1", [{ status: "failed" }])
      assert.deepStrictEqual(yield* v.conversationInsights("conv-1"), { _tag: "Ready", text: null })
      assert.strictEqual(sent(path("conv-1")).length, 5)
    }))

  it.live("an unknown conversation is rejected; a 5xx is retried", () =>
    Effect.gen(function*() {
      const missing = yield* failure(voice().conversationInsights("conv-missing"))
      assert.strictEqual(missing.reason, "rejected")
      fake().voice.setInsights("conv-2", [{ status: "completed", results: ["Short call."] }])
      fake().script({ type: "serverError", status: 503 }, 2)
      assert.deepStrictEqual(yield* voice().conversationInsights("conv-2"), { _tag: "Ready", text: "Short call." })
      assert.strictEqual(sent(path("conv-2")).length, 3)
    }))
})
