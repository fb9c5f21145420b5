/**
 * The Telnyx voice adapter (adapters/carrier/telnyxVoiceAdapter.ts) behind the HTTP API, against the
 * fake Telnyx over real HTTP: `POST /agent/publish` creates the workspace's AI assistant on the first
 * publish and updates that same assistant on the next (`carrierAssistantId` kept on the agent), and a
 * carrier refusal (409) or outage (500) publishes nothing and keeps the assistant id as it was.
 * Inbound calls through signed Call Control webhooks to `/v1/carrier/telnyx`: the route decides the
 * command sent to Telnyx (answer with the assistant and recording, transfer, answer and record, or
 * for `app` each teammate's phone dialled, the first to pick up joined to the caller, voicemail when
 * they all ring out), the events come in SPEC's order under one carrierCallId, the activity is
 * written on hangup, the recording (downloaded, up to MAX_RECORDING_BYTES) and the assistant's
 * transcript follow in that order, then the AI summary from the conversation's insights, and
 * repeated webhooks record nothing twice. `POST /calls` sends the call's job and extra instructions
 * to the assistant in the dial. A withheld caller (`anonymous`) is taken like any other.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TelnyxVoiceAdapter from "../../adapters/carrier/telnyxVoiceAdapter.ts"
import { AgentStore } from "../../core/agent/store.ts"
import { CallSessionStore, dialingId } from "../../core/calls/sessions.ts"
import { Voice } from "../../core/calls/voice.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { MAX_MEDIA_BYTES, MAX_RECORDING_BYTES } from "../../core/media/model.ts"
import { makeTestApp } from "../support/app.ts"
import { ANSWERED_CALL_EVENTS } from "../support/callEvents.ts"
import { type FakeTelnyx, type SignedWebhook, startFakeTelnyx } from "../support/fakeTelnyx.ts"
import { addMember } from "../support/members.ts"
import { bearer, expectError, expectOk } from "./helpers.ts"

const CONNECTION = "1684641123236054244"
let fake: FakeTelnyx
let app: Awaited<ReturnType<typeof makeTestApp>>
/** Serves the recordings Telnyx would host (its URLs are S3's, valid 10 minutes). */
let audioServer: Server
let audioBase: string
/** Webhooks delivered while a dial's answer is on its way to the service (its first webhooks can beat it). */
let beforeDialAnswer: ((callControlId: string) => Promise<void>) | null = null
/** Requests for the recording over the cap. */
let hugeRequests = 0
const AUDIO = new Uint8Array([0x49, 0x44, 0x33, 1, 2, 3, 4, 5])
/** A recording over the 5 MB message media cap (about six minutes of mp3), bytes varied so a mix-up shows. */
const BIG = Uint8Array.from({ length: MAX_MEDIA_BYTES + 1024 * 1024 }, (_, i) => (i * 31 + (i >> 12)) & 0xff)
beforeAll(async () => {
  audioServer = createServer((req, res) => {
    if (req.url?.startsWith("/big/")) {
      res.writeHead(200, { "content-type": "audio/mpeg", "content-length": BIG.length })
      return void res.end(BIG)
    }
    if (req.url?.startsWith("/huge/")) {
      hugeRequests++
      // Declares more than the recording cap and sends nothing: the download must stop at the header.
      res.writeHead(200, { "content-type": "audio/wav", "content-length": MAX_RECORDING_BYTES + 1 })
      return void res.flushHeaders()
    }
    res.writeHead(200, { "content-type": "audio/mpeg", "content-length": AUDIO.length })
    res.end(AUDIO)
  })
  await new Promise<void>((resolve) => audioServer.listen(0, "127.0.0.1", resolve))
  audioBase = `http://127.0.0.1:${(audioServer.address() as AddressInfo).port}`
  fake = await startFakeTelnyx()
  const telnyx = TelnyxVoiceAdapter.layer({
    apiKey: Redacted.make(fake.apiKey),
    messagingProfileId: "profile-1",
    baseUrl: fake.baseUrl,
    connectionId: CONNECTION
  })
  app = await makeTestApp({
    // Telnyx's Voice, with `beforeDialAnswer` run between Telnyx's answer to a dial and the service seeing it.
    voice: Layer.effect(
      Voice,
      Effect.map(Voice, (v) =>
        Voice.of({
          ...v,
          dial: (request) =>
            Effect.tap(v.dial(request), (dialed) => {
              const hook = beforeDialAnswer
              return hook === null ? Effect.void : Effect.promise(() => hook(dialed.callControlId))
            })
        }))
    ).pipe(Layer.provide(telnyx)),
    telnyxPublicKey: fake.publicKey
  })
})
afterAll(async () => {
  await app?.close()
  await fake?.stop()
  audioServer?.closeAllConnections()
  await new Promise((resolve) => audioServer?.close(resolve))
})

const call = (key: string, method: string, path: string, json?: unknown) =>
  app.fetch(`/v1/api${path}`, { method, headers: bearer(key), ...(json === undefined ? {} : { json }) })
const ok = expectOk
const stored = (workspaceId: string) =>
  app.runtime.runPromise(Effect.flatMap(AgentStore, (s) => s.get(workspaceId))).then(Option.getOrThrow)

describe("POST /agent/publish on Telnyx", () => {
  it("creates the assistant on the first publish and updates the same one on the next", async () => {
    const { workspaceId, key } = await app.createWorkspace("Publish")
    await ok(
      await call(key, "PATCH", "/agent", {
        name: "Front desk",
        greeting: "Acme, how can I help?",
        instructions: "Book repairs.",
        tone: "warm"
      })
    )
    expect((await stored(workspaceId)).carrierAssistantId).toBeNull()

    expect((await ok(await call(key, "POST", "/agent/publish"))).agent.status).toBe("published")
    const first = await stored(workspaceId)
    const id = first.carrierAssistantId
    expect(id).not.toBeNull()
    const created = fake.voice.assistants.get(id!)!
    expect(created).toMatchObject({
      name: "Front desk",
      greeting: "Acme, how can I help?",
      instructions: "Book repairs.\n\nTone: warm."
    })

    const before = fake.voice.assistants.size
    await ok(
      await call(key, "PATCH", "/agent", {
        name: "Night desk",
        instructions: "Take messages.",
        tone: null,
        jobs: [{ name: "Reminder", instructions: "Confirm the visit." }]
      })
    )
    await ok(await call(key, "POST", "/agent/publish"))
    expect((await stored(workspaceId)).carrierAssistantId).toBe(id)
    expect(fake.voice.assistants.size).toBe(before)
    expect(fake.voice.assistants.get(id!)).toMatchObject({
      name: "Night desk",
      instructions: "Take messages.\n\nJobs you may be calling about:\n- Reminder: Confirm the visit."
    })
    expect(fake.requests.filter((r) => r.path === `/v2/ai/assistants/${id}` && r.method === "POST")).toHaveLength(1)
  })

  it("sends the whole configuration: voice, language, jobs, tone, instructions, greeting, and the insight group that makes the call summary, kept on the next publish", async () => {
    const { workspaceId, key } = await app.createWorkspace("Whole")
    await ok(
      await call(key, "PATCH", "/agent", {
        name: "Front desk",
        greeting: "Hola, Acme.",
        instructions: "Book repairs.",
        tone: "warm",
        voice: "Telnyx.KokoroTTS.af_heart",
        language: "es-MX",
        jobs: [{ name: "Reminder", instructions: "Confirm the visit." }]
      })
    )
    await ok(await call(key, "POST", "/agent/publish"))
    const id = (await stored(workspaceId)).carrierAssistantId!
    const assistant = fake.voice.assistants.get(id)!
    expect(assistant).toMatchObject({
      name: "Front desk",
      greeting: "Hola, Acme.",
      instructions:
        "Book repairs.\n\nTone: warm.\n\nSpeak es-MX.\n\nJobs you may be calling about:\n- Reminder: Confirm the visit.",
      voice_settings: { voice: "Telnyx.KokoroTTS.af_heart" },
      transcription: { language: "es" }
    })
    const groupId = (assistant["insight_settings"] as { insight_group_id: string }).insight_group_id
    const group = fake.voice.insightGroups.get(groupId)!
    expect(group.insights).toHaveLength(1)
    expect(fake.voice.insightTemplates.get(group.insights[0]!)).toMatchObject({ name: "Call summary" })

    const groups = fake.voice.insightGroups.size
    await ok(await call(key, "PATCH", "/agent", { voice: "Telnyx.KokoroTTS.am_adam", language: "English" }))
    await ok(await call(key, "POST", "/agent/publish"))
    expect(fake.voice.assistants.get(id)).toMatchObject({
      voice_settings: { voice: "Telnyx.KokoroTTS.am_adam" },
      insight_settings: { insight_group_id: groupId }
    })
    expect(fake.voice.insightGroups.size).toBe(groups) // the assistant's group is reused
  })

  it("clearing the greeting, voice and language reaches the assistant: an empty greeting, the default voice, language detected", async () => {
    const { workspaceId, key } = await app.createWorkspace("Cleared")
    await ok(
      await call(key, "PATCH", "/agent", {
        greeting: "Hola, Acme.",
        voice: "Telnyx.KokoroTTS.am_adam",
        language: "es-MX"
      })
    )
    await ok(await call(key, "POST", "/agent/publish"))
    const id = (await stored(workspaceId)).carrierAssistantId!
    expect(fake.voice.assistants.get(id)).toMatchObject({
      greeting: "Hola, Acme.",
      voice_settings: { voice: "Telnyx.KokoroTTS.am_adam" },
      transcription: { language: "es" }
    })

    await ok(await call(key, "PATCH", "/agent", { greeting: null, voice: null, language: null }))
    await ok(await call(key, "POST", "/agent/publish"))
    expect(fake.voice.assistants.get(id)).toMatchObject({
      greeting: "",
      voice_settings: { voice: TelnyxVoiceAdapter.DEFAULT_ASSISTANT_VOICE },
      transcription: { language: "auto" }
    })
  })

  it("an agent with no instructions still gets an assistant (Telnyx requires instructions)", async () => {
    const { workspaceId, key } = await app.createWorkspace("Defaults")
    await ok(await call(key, "PATCH", "/agent", {}))
    await ok(await call(key, "POST", "/agent/publish"))
    const assistant = fake.voice.assistants.get((await stored(workspaceId)).carrierAssistantId!)!
    expect(assistant["instructions"]).toMatch(/^You are Agent, answering calls/)
  })

  it("a refusal is 409 and an outage 500: nothing is published and the assistant id stays", async () => {
    const { workspaceId, key } = await app.createWorkspace("Refused")
    await ok(await call(key, "PATCH", "/agent", { name: "Desk" }))

    fake.script({
      type: "error",
      status: 422,
      code: "10015",
      title: "Bad request",
      detail: "instructions are too long"
    })
    const refused = await expectError(await call(key, "POST", "/agent/publish"), 409, "failed_precondition")
    expect(refused.message).toContain("instructions are too long")
    let agent = await stored(workspaceId)
    expect(agent.published).toBeNull()
    expect(agent.carrierAssistantId).toBeNull()

    await ok(await call(key, "POST", "/agent/publish"))
    const id = (await stored(workspaceId)).carrierAssistantId
    await ok(await call(key, "PATCH", "/agent", { name: "Desk two" }))
    fake.script({ type: "serverError", status: 503 }, 3)
    await expectError(await call(key, "POST", "/agent/publish"), 500, "internal")
    agent = await stored(workspaceId)
    expect(agent.published?.name).toBe("Desk")
    expect(agent.carrierAssistantId).toBe(id)
    expect(fake.voice.assistants.get(id!)?.["name"]).toBe("Desk")
  })
})

// ------------------------------------------------------------------------------------ inbound calls

const CALLER = "+15550002222"
const OUTSIDE = "+15550009999"
let seq = 0

/** A workspace with a number and a published agent (so an assistant on the fake). */
const callWorkspace = async () => {
  const { workspaceId, key } = await app.createWorkspace("Calls")
  const e164 = `+1628556${String(1000 + ++seq).padStart(4, "0")}`
  await ok(await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164 } }), 201)
  await ok(await call(key, "PATCH", "/agent", { name: "Desk", greeting: "Hello!" }))
  await ok(await call(key, "POST", "/agent/publish"))
  const agent = await stored(workspaceId)
  return { workspaceId, key, e164, agentId: agent.id, assistantId: agent.carrierAssistantId! }
}

const post = (w: SignedWebhook) =>
  app.fetch("/v1/carrier/telnyx", { method: "POST", headers: w.headers, body: w.rawBody })
const deliver = async (w: SignedWebhook, status = 200) => {
  const res = await post(w)
  expect(res.status, await res.clone().text()).toBe(status)
  return w
}
const webhook = (callControlId: string, type: "call.initiated" | "call.answered" | "call.hangup") =>
  fake.signedWebhook(type, fake.voice.callPayload(callControlId, type))
/** `call.recording.saved` with its audio on the local server (standing in for Telnyx's S3); `size` picks which. */
const recordingSaved = (callControlId: string, size: "small" | "big" | "huge" = "small") =>
  fake.signedWebhook("call.recording.saved", {
    ...fake.voice.callPayload(callControlId, "call.recording.saved"),
    recording_urls: { mp3: `${audioBase}/${size === "small" ? "" : `${size}/`}${callControlId}.mp3` }
  })
/** The bytes a signed recordingUrl serves. */
const recordingBytes = async (url: string) => {
  const res = await app.fetch(new URL(url).pathname + new URL(url).search)
  expect(res.status).toBe(200)
  return new Uint8Array(await res.arrayBuffer())
}
/** Telnyx's insights webhook; its payload is not documented, so the tests send only what the adapter reads. */
const insightsGenerated = (payload: Record<string, unknown>) =>
  fake.signedWebhook("call.conversation_insights.generated", payload)
/** A call through its hangup, answered by the agent. */
const agentCallEnded = async (e164: string) => {
  const leg = fake.voice.inboundCall({ from: CALLER, to: e164 })
  await deliver(webhook(leg.callControlId, "call.initiated"))
  await deliver(webhook(leg.callControlId, "call.answered"))
  await deliver(webhook(leg.callControlId, "call.hangup"))
  return leg
}
const events = (workspaceId: string) =>
  app.runtime.runPromise(Effect.flatMap(EventOutbox, (o) => o.list(workspaceId))).then((all) =>
    all.filter((e) => e.type.startsWith("call.")).map((e) => ({
      type: e.type,
      data: e.data as Record<string, unknown>
    }))
  )
/** Each event type twice in a row, as `pendingCallWebhooks({twice: true})` hands them over. */
const twice = (types: ReadonlyArray<string>) => types.flatMap((t) => [t, t])
const calls = async (key: string) => (await ok(await call(key, "GET", "/calls"))).calls as Array<Record<string, any>>

describe("inbound Telnyx calls through webhooks", () => {
  it("agent: answered with the assistant and recording; ringing, answered, completed, then the transcript; repeats record nothing twice", async () => {
    const { workspaceId, key, e164, agentId, assistantId } = await callWorkspace()
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/connect`))
    const leg = fake.voice.inboundCall({ from: CALLER, to: e164, callerName: "ADA L" })

    const initiated = await deliver(webhook(leg.callControlId, "call.initiated"))
    const answer = fake.voice.calls.get(leg.callControlId)!.commands.filter((c) => c.action === "answer")
    expect(answer).toHaveLength(1)
    expect(answer[0]!.body).toMatchObject({ assistant: { id: assistantId }, record: "record-from-answer" })
    const state = JSON.parse(Buffer.from(String(answer[0]!.body["client_state"]), "base64").toString("utf8"))
    expect(state).toEqual({ workspaceId, carrierCallId: leg.callSessionId })
    await deliver(initiated) // the same event again: Telnyx dedupes the command, we store nothing new
    expect(fake.voice.calls.get(leg.callControlId)!.commands.filter((c) => c.action === "answer")).toHaveLength(1)

    const answered = await deliver(webhook(leg.callControlId, "call.answered"))
    await deliver(answered)
    const hangup = await deliver(webhook(leg.callControlId, "call.hangup"))
    await deliver(hangup)
    await deliver(webhook(leg.callControlId, "call.hangup")) // a new event id for the same end

    let history = await calls(key)
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({
      direction: "inbound",
      status: "completed",
      answeredBy: "agent",
      agentId,
      from: CALLER,
      to: e164,
      carrierCallId: leg.callSessionId,
      transcript: null
    })

    fake.voice.setConversation("conv-1", [
      { role: "assistant", text: "Hello!", sent_at: new Date(Date.now() + 1000).toISOString() },
      { role: "user", text: "I need a plumber.", sent_at: new Date(Date.now() + 4000).toISOString() }
    ])
    const ended = fake.signedWebhook("call.conversation.ended", {
      conversation_id: "conv-1",
      assistant_id: assistantId,
      call_control_id: leg.callControlId,
      call_session_id: leg.callSessionId,
      duration_sec: 12
    })
    await deliver(ended) // before the recording: kept, the transcript follows it (SPEC's order)
    expect((await calls(key))[0]!["transcript"]).toBeNull()
    const recording = await deliver(recordingSaved(leg.callControlId))
    await deliver(recording)
    await deliver(ended)
    history = await calls(key)
    const audio = await app.fetch(
      new URL(history[0]!["recordingUrl"]).pathname + new URL(history[0]!["recordingUrl"]).search
    )
    expect(audio.status).toBe(200)
    expect(new Uint8Array(await audio.arrayBuffer())).toEqual(AUDIO)
    expect(history[0]!["transcript"].map((t: any) => [t.speaker, t.text])).toEqual([["agent", "Hello!"], [
      "caller",
      "I need a plumber."
    ]])

    const sent = await events(workspaceId)
    expect(sent.map((e) => e.type)).toEqual([
      "call.ringing",
      "call.answered",
      "call.completed",
      "call.recording.completed",
      "call.transcript.completed"
    ])
    for (const e of sent) expect(e.data["carrierCallId"], e.type).toBe(leg.callSessionId)
    expect(sent[0]!.data).toMatchObject({ numberE164: e164, from: CALLER, callerName: "ADA L", direction: "inbound" })
    expect(sent[1]!.data).toMatchObject({ answeredBy: "agent", agentId })
    expect(sent[2]!.data).toMatchObject({
      answeredBy: "agent",
      activityId: history[0]!["id"],
      conversationId: history[0]!["conversationId"]
    })
    expect(sent[3]!.data).toMatchObject({ activityId: history[0]!["id"] })
    expect(sent[4]!.data).toMatchObject({ activityId: history[0]!["id"] })
  })

  it("a withheld caller (`anonymous`) is answered by the agent, not dropped: events and the call say from null, in the number's withheld thread", async () => {
    const { workspaceId, key, e164, agentId, assistantId } = await callWorkspace()
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/connect`))
    const leg = fake.voice.inboundCall({ from: "anonymous", to: e164 })
    await deliver(webhook(leg.callControlId, "call.initiated"))
    const answer = fake.voice.calls.get(leg.callControlId)!.commands.filter((c) => c.action === "answer")
    expect(answer).toHaveLength(1)
    expect(answer[0]!.body).toMatchObject({ assistant: { id: assistantId }, record: "record-from-answer" })
    await deliver(webhook(leg.callControlId, "call.answered"))
    await deliver(webhook(leg.callControlId, "call.hangup"))

    const sent = await events(workspaceId)
    expect(sent.map((e) => e.type)).toEqual(["call.ringing", "call.answered", "call.completed"])
    expect(sent[0]!.data).toMatchObject({
      numberE164: e164,
      from: null,
      carrierCallId: leg.callSessionId,
      direction: "inbound"
    })
    expect(sent[1]!.data).toMatchObject({ answeredBy: "agent", agentId, from: null })
    const [c] = await calls(key)
    expect(c).toMatchObject({
      direction: "inbound",
      status: "completed",
      answeredBy: "agent",
      agentId,
      from: null,
      to: e164,
      carrierCallId: leg.callSessionId
    })
    expect(sent[2]!.data).toMatchObject({ conversationId: c!["conversationId"], activityId: c!["id"] })
    const thread = await ok(await call(key, "GET", `/conversations/${c!["conversationId"]}`))
    expect(thread.conversation).toMatchObject({ numberE164: e164, participants: [], contactName: "Withheld caller" })

    // Another withheld caller (`restricted`, routed to the team: it rings out) shares that thread.
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/disconnect`))
    const other = fake.voice.inboundCall({ from: "restricted", to: e164 })
    await deliver(webhook(other.callControlId, "call.initiated"))
    await deliver(webhook(other.callControlId, "call.hangup"))
    const [missed] = await calls(key)
    expect(missed).toMatchObject({
      status: "missed",
      from: null,
      carrierCallId: other.callSessionId,
      conversationId: c!["conversationId"]
    })
  })

  it("forward: transferred, ringing then forwarded, completed when the outside line picked up", async () => {
    const { workspaceId, key, e164 } = await callWorkspace()
    await ok(
      await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/disconnect`, {
        mode: "forward",
        forwardTo: OUTSIDE
      })
    )
    const leg = fake.voice.inboundCall({ from: CALLER, to: e164 })
    await deliver(webhook(leg.callControlId, "call.initiated"))
    expect(fake.voice.calls.get(leg.callControlId)!.transferredTo).toBe(OUTSIDE)
    await deliver(webhook(leg.callControlId, "call.answered"))
    await deliver(webhook(leg.callControlId, "call.hangup"))
    const sent = await events(workspaceId)
    expect(sent.map((e) => e.type)).toEqual(["call.ringing", "call.forwarded", "call.completed"])
    expect(sent[1]!.data).toMatchObject({ forwardedTo: OUTSIDE, carrierCallId: leg.callSessionId })
    expect((await calls(key))[0]).toMatchObject({ status: "completed", answeredBy: null })
  })

  it("app with no teammate's phone to ring: taken to voicemail; voicemail: answered, then greeted and recorded", async () => {
    const app1 = await callWorkspace()
    await addMember(app.runtime, app1.workspaceId, null)
    const leg = fake.voice.inboundCall({ from: CALLER, to: app1.e164 })
    await deliver(webhook(leg.callControlId, "call.initiated"))
    expect(fake.voice.calls.get(leg.callControlId)!.commands.map((c) => c.action)).toEqual(["answer"])
    for (const w of fake.pendingCallWebhooks()) await deliver(w) // answered: the greeting
    expect(fake.voice.calls.get(leg.callControlId)!.commands.map((c) => c.action)).toEqual(["answer", "speak"])
    fake.pendingCallWebhooks()
    await deliver(webhook(leg.callControlId, "call.hangup"))
    expect((await calls(app1.key))[0]).toMatchObject({ status: "missed", type: "voicemail" })

    const vm = await callWorkspace()
    await ok(await call(vm.key, "POST", `/numbers/${encodeURIComponent(vm.e164)}/disconnect`, { mode: "voicemail" }))
    const vmLeg = fake.voice.inboundCall({ from: CALLER, to: vm.e164 })
    await deliver(webhook(vmLeg.callControlId, "call.initiated"))
    const answer = fake.voice.calls.get(vmLeg.callControlId)!.commands.find((c) => c.action === "answer")!
    expect(answer.body).not.toHaveProperty("assistant")
    expect(answer.body).not.toHaveProperty("record") // the recording starts after the greeting
    for (const w of fake.pendingCallWebhooks()) await deliver(w) // answered: the greeting
    for (const w of fake.pendingCallWebhooks()) await deliver(w) // speak ended: the recording
    fake.voice.callerHangsUp(vmLeg.callControlId, { recordingUrl: `${audioBase}/${vmLeg.callControlId}.mp3` })
    for (const w of fake.pendingCallWebhooks()) await deliver(w)
    expect((await events(vm.workspaceId)).map((e) => e.type)).toEqual([
      "call.ringing",
      "call.missed",
      "call.voicemail.completed",
      "call.transcript.completed"
    ])
    const voicemail = (await calls(vm.key))[0]!
    expect(voicemail).toMatchObject({ status: "missed", type: "voicemail" })
    expect(voicemail["recordingUrl"]).toEqual(expect.any(String))
  })

  it("a transcript before the hangup is kept until the hangup and the recording; a carrier outage on answer or a failed download is refused (500) so Telnyx delivers it again; unknown numbers are acknowledged", async () => {
    const { workspaceId, key, e164, assistantId } = await callWorkspace()
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/connect`))
    const leg = fake.voice.inboundCall({ from: CALLER, to: e164 })
    fake.script({ type: "serverError", status: 503 }, 3) // the first try and both retries (the command has a command_id)
    const initiated = await deliver(webhook(leg.callControlId, "call.initiated"), 500)
    expect(fake.voice.calls.get(leg.callControlId)!.state).toBe("parked")
    await deliver(initiated)
    expect(fake.voice.calls.get(leg.callControlId)!.state).toBe("answered")

    fake.voice.setConversation("conv-2", [{ role: "assistant", text: "Hi" }])
    const ended = fake.signedWebhook("call.conversation.ended", {
      conversation_id: "conv-2",
      assistant_id: assistantId,
      call_control_id: leg.callControlId,
      call_session_id: leg.callSessionId
    })
    await deliver(ended)
    await deliver(webhook(leg.callControlId, "call.answered"))
    await deliver(webhook(leg.callControlId, "call.hangup"))
    const missing = fake.signedWebhook("call.recording.saved", {
      ...fake.voice.callPayload(leg.callControlId, "call.recording.saved"),
      recording_urls: { mp3: `${audioBase.replace(/:\d+$/, ":9")}/gone.mp3` }
    })
    await deliver(missing, 500) // the download failed: Telnyx delivers it again
    await deliver(recordingSaved(leg.callControlId))
    expect((await events(workspaceId)).map((e) => e.type)).toEqual([
      "call.ringing",
      "call.answered",
      "call.completed",
      "call.recording.completed",
      "call.transcript.completed"
    ])

    const stranger = fake.voice.inboundCall({ from: CALLER, to: "+16285559999" })
    await deliver(webhook(stranger.callControlId, "call.initiated"))
    expect(fake.voice.calls.get(stranger.callControlId)!.commands).toEqual([])
  })
})

describe("app calls on Telnyx: the team is rung", () => {
  /** A workspace whose number rings the team (the default for a new number): a member with no phone, then two with one. */
  const teamCall = async () => {
    const ws = await callWorkspace()
    await addMember(app.runtime, ws.workspaceId, null)
    const ada = await addMember(app.runtime, ws.workspaceId, "+15550003001")
    const bo = await addMember(app.runtime, ws.workspaceId, "+15550003002")
    const leg = fake.voice.inboundCall({ from: CALLER, to: ws.e164 })
    await deliver(webhook(leg.callControlId, "call.initiated"))
    // Each teammate's phone is a leg of the call: dialled from the number, linked to the caller's leg.
    const legs = [...fake.voice.calls.values()].filter((c) => c.linkTo === leg.callControlId)
    const phoneOf = (to: string) => legs.find((l) => l.to === to)!
    return { ...ws, ada, bo, leg, adaLeg: phoneOf(ada.phone!), boLeg: phoneOf(bo.phone!), legs }
  }
  const actions = (callControlId: string) => fake.voice.calls.get(callControlId)!.commands.map((c) => c.action)
  const pickUp = (callControlId: string) => {
    fake.voice.pickUp(callControlId)
    return webhook(callControlId, "call.answered")
  }

  it("rings every teammate with a phone at once; the first to pick up is joined to the caller, the other hung up; ringing, answered by the member, completed, recording; webhooks reversed and twice change nothing", async () => {
    const t = await teamCall()
    expect(t.legs).toHaveLength(2)
    for (const l of t.legs) {
      expect(l.callSessionId).toBe(t.leg.callSessionId)
      expect(l.commands[0]!.body).toMatchObject({ from: t.e164, link_to: t.leg.callControlId, timeout_secs: 25 })
      expect(l.commands[0]!.body).not.toHaveProperty("bridge_on_answer")
    }
    expect(actions(t.leg.callControlId)).toEqual([]) // the caller hears it ring until someone picks up
    // Bo picks up first, Ada a moment later: Bo takes the call, Ada is hung up on.
    const boAnswered = pickUp(t.boLeg.callControlId)
    const adaAnswered = pickUp(t.adaLeg.callControlId)
    await deliver(boAnswered)
    await deliver(adaAnswered)
    await deliver(boAnswered) // repeated: nothing twice
    expect(actions(t.leg.callControlId)).toEqual(["answer", "bridge"])
    const [answer, bridge] = fake.voice.calls.get(t.leg.callControlId)!.commands
    expect(answer!.body).toMatchObject({ record: "record-from-answer" })
    expect(bridge!.body).toMatchObject({ call_control_id: t.boLeg.callControlId })
    expect(t.boLeg.bridgedWith).toBe(t.leg.callControlId)
    expect(actions(t.adaLeg.callControlId)).toEqual(["dial", "hangup"])
    expect(t.adaLeg.state).toBe("ended")

    // The caller hangs up: Telnyx ends the bridged leg too.
    fake.voice.callerHangsUp(t.leg.callControlId, { recordingUrl: `${audioBase}/${t.leg.callControlId}.mp3` })
    expect(t.boLeg.state).toBe("ended")
    for (const w of fake.pendingCallWebhooks({ order: "reversed", twice: true })) await deliver(w)
    for (const w of fake.pendingCallWebhooks()) await deliver(w)

    const sent = await events(t.workspaceId)
    expect(sent.map((e) => e.type)).toEqual([
      "call.ringing",
      "call.answered",
      "call.completed",
      "call.recording.completed"
    ])
    expect(sent[1]!.data).toEqual({
      answeredBy: "member",
      direction: "inbound",
      numberE164: t.e164, // the workspace's only number
      from: CALLER,
      carrierCallId: t.leg.callSessionId,
      memberUid: t.bo.id
    })
    expect(sent[2]!.data).toMatchObject({ answeredBy: "member", carrierCallId: t.leg.callSessionId })
    const list = await calls(t.key)
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({
      type: "call",
      status: "completed",
      answeredBy: "member",
      carrierCallId: t.leg.callSessionId,
      recordingUrl: expect.any(String)
    })
  })

  it("nobody picks up within 25 seconds: every leg rings out, then the caller is taken to voicemail (greeting, recording, transcript)", async () => {
    const t = await teamCall()
    fake.voice.elapse(24)
    expect(fake.pendingCallWebhooks()).toEqual([]) // still ringing
    fake.voice.elapse(1)
    const rangOut = fake.pendingCallWebhooks()
    expect(rangOut.map((w) => [w.eventType, JSON.parse(w.rawBody).data.payload.hangup_cause])).toEqual([
      ["call.hangup", "timeout"],
      ["call.hangup", "timeout"]
    ])
    await deliver(rangOut[0]!)
    expect(actions(t.leg.callControlId)).toEqual([]) // one phone is still ringing
    await deliver(rangOut[1]!)
    await deliver(rangOut[1]!) // repeated: answered once
    expect(actions(t.leg.callControlId)).toEqual(["answer"])
    for (const w of fake.pendingCallWebhooks({ twice: true })) await deliver(w) // answered: the greeting
    for (const w of fake.pendingCallWebhooks()) await deliver(w) // spoken: the recording
    expect(actions(t.leg.callControlId)).toEqual(["answer", "speak", "record_start"])
    fake.voice.callerHangsUp(t.leg.callControlId, {
      recordingUrl: `${audioBase}/${t.leg.callControlId}.mp3`,
      transcript: "Call me back about the boiler."
    })
    for (const w of fake.pendingCallWebhooks({ order: "reversed" })) await deliver(w)
    expect((await events(t.workspaceId)).map((e) => e.type)).toEqual([
      "call.ringing",
      "call.missed",
      "call.voicemail.completed",
      "call.transcript.completed"
    ])
    const [voicemail] = await calls(t.key)
    expect(voicemail).toMatchObject({ type: "voicemail", status: "missed", answeredBy: null })
    expect(voicemail!["transcript"]).toEqual([
      { speaker: "caller", text: "Call me back about the boiler.", offsetSeconds: 0 }
    ])
  })

  it("the caller hangs up while the phones ring: missed, and the phones stop ringing; a teammate who picks up then is hung up on", async () => {
    const t = await teamCall()
    fake.voice.pickUp(t.adaLeg.callControlId) // picks up as the caller leaves
    await deliver(webhook(t.leg.callControlId, "call.hangup"))
    expect(t.boLeg.state).toBe("ended")
    expect(actions(t.boLeg.callControlId)).toEqual(["dial", "hangup"])
    await deliver(webhook(t.adaLeg.callControlId, "call.answered"))
    expect(actions(t.adaLeg.callControlId)).toEqual(["dial", "hangup"])
    for (const w of fake.pendingCallWebhooks()) await deliver(w)
    expect(actions(t.leg.callControlId)).toEqual([])
    expect((await events(t.workspaceId)).map((e) => e.type)).toEqual(["call.ringing", "call.missed"])
    expect((await calls(t.key))[0]).toMatchObject({ type: "call", status: "missed", answeredBy: null })
  })

  it("a phone Telnyx refuses to dial counts as rung out; with none left the caller goes to voicemail at once", async () => {
    const ws = await callWorkspace()
    await addMember(app.runtime, ws.workspaceId, "+1555") // not a number Telnyx dials
    const leg = fake.voice.inboundCall({ from: CALLER, to: ws.e164 })
    await deliver(webhook(leg.callControlId, "call.initiated"))
    expect(actions(leg.callControlId)).toEqual(["answer"])
  })
})

describe("voicemail on Telnyx", () => {
  /** A workspace whose number takes voicemail, and a call to it answered and greeted (webhooks delivered twice). */
  const voicemailCall = async (workspaceName: string, greeting: string | null) => {
    const { workspaceId, key } = await app.createWorkspace(workspaceName)
    const e164 = `+1628557${String(1000 + ++seq).padStart(4, "0")}`
    await ok(await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164 } }), 201)
    await ok(await call(key, "PATCH", "/agent", { name: "Desk", greeting }))
    await ok(await call(key, "POST", "/agent/publish"))
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/disconnect`, { mode: "voicemail" }))
    const leg = fake.voice.inboundCall({ from: CALLER, to: e164 })
    await deliver(webhook(leg.callControlId, "call.initiated"))
    for (const w of fake.pendingCallWebhooks({ twice: true })) await deliver(w) // call.answered, twice
    return { workspaceId, key, leg }
  }
  const commands = (callControlId: string, action: string) =>
    fake.voice.calls.get(callControlId)!.commands.filter((c) => c.action === action)

  it("speaks the agent's greeting, then records with Telnyx's transcription; the transcript comes after the voicemail whatever order the webhooks arrive in, each once", async () => {
    const { workspaceId, key, leg } = await voicemailCall("Acme Plumbing", "Acme here, leave a message.")
    const speak = commands(leg.callControlId, "speak")
    expect(speak).toHaveLength(1)
    expect(speak[0]!.body).toMatchObject({ payload: "Acme here, leave a message.", voice: "female" })
    expect(commands(leg.callControlId, "record_start")).toEqual([])

    for (const w of fake.pendingCallWebhooks({ twice: true })) await deliver(w) // speak started and ended, twice
    const record = commands(leg.callControlId, "record_start")
    expect(record).toHaveLength(1)
    expect(record[0]!.body).toMatchObject({ transcription: true, play_beep: true, format: "mp3" })

    fake.voice.callerHangsUp(leg.callControlId, {
      recordingUrl: `${audioBase}/${leg.callControlId}.mp3`,
      transcript: "Hi, please call me back about the quote."
    })
    // Telnyx enforces no order: the transcription first, then the recording, the hangup last, each twice.
    const late = fake.pendingCallWebhooks({ order: "reversed", twice: true })
    expect(late.map((w) => w.eventType)).toEqual(
      twice(["call.recording.transcription.saved", "call.recording.saved", "call.hangup"])
    )
    for (const w of late) await deliver(w)

    expect((await events(workspaceId)).map((e) => e.type)).toEqual([
      "call.ringing",
      "call.missed",
      "call.voicemail.completed",
      "call.transcript.completed"
    ])
    const [voicemail] = await calls(key)
    expect(voicemail).toMatchObject({ type: "voicemail", status: "missed", carrierCallId: leg.callSessionId })
    expect(voicemail!["transcript"]).toEqual([
      { speaker: "caller", text: "Hi, please call me back about the quote.", offsetSeconds: 0 }
    ])
    expect(await recordingBytes(voicemail!["recordingUrl"])).toEqual(AUDIO)
    const thread = await ok(await call(key, "GET", `/conversations/${voicemail!["conversationId"]}`))
    expect(JSON.stringify(thread)).toContain("please call me back about the quote")
  })

  it("a transcription before the hangup waits for the hangup and the recording, then follows them", async () => {
    const { workspaceId, key, leg } = await voicemailCall("Early Bird", "Leave a message.")
    for (const w of fake.pendingCallWebhooks()) await deliver(w)
    fake.voice.callerHangsUp(leg.callControlId, {
      recordingUrl: `${audioBase}/${leg.callControlId}.mp3`,
      transcript: "Call me."
    })
    const [hangup, recording, transcription] = fake.pendingCallWebhooks()
    await deliver(transcription!)
    await deliver(hangup!)
    expect((await events(workspaceId)).map((e) => e.type)).toEqual(["call.ringing", "call.missed"])
    expect((await calls(key))[0]!["transcript"]).toBeNull()
    await deliver(recording!)
    expect((await events(workspaceId)).map((e) => e.type)).toEqual([
      "call.ringing",
      "call.missed",
      "call.voicemail.completed",
      "call.transcript.completed"
    ])
    expect((await calls(key))[0]!["transcript"]).toEqual([{ speaker: "caller", text: "Call me.", offsetSeconds: 0 }])
  })

  it("without an agent greeting the default names the workspace; a caller who hangs up during it: the fake refuses the recording (422 90018) and the webhook is still acknowledged", async () => {
    const { workspaceId, key, leg } = await voicemailCall("Bob's Bikes", null)
    expect(commands(leg.callControlId, "speak")[0]!.body["payload"]).toBe(
      "You have reached Bob's Bikes. Please leave a message after the tone."
    )
    const greeting = fake.pendingCallWebhooks()
    fake.voice.callerHangsUp(leg.callControlId) // during the greeting; its webhook comes late
    const hangup = fake.pendingCallWebhooks()
    for (const w of greeting) await deliver(w) // record_start on the ended call: refused, logged, acknowledged
    for (const w of hangup) await deliver(w)
    expect(commands(leg.callControlId, "record_start")).toEqual([])
    const refused = fake.requests.filter((r) =>
      decodeURIComponent(r.path) === `/v2/calls/${leg.callControlId}/actions/record_start`
    )
    expect(refused.map((r) => r.answer)).toEqual([422])

    const direct = await fetch(`${fake.baseUrl}/v2/calls/${leg.callControlId}/actions/speak`, {
      method: "POST",
      headers: { authorization: `Bearer ${fake.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ payload: "Hello?", voice: "female" })
    })
    expect(direct.status).toBe(422)
    expect((await direct.json()).errors[0]).toMatchObject({ code: "90018", title: "Call has already ended" })

    expect((await events(workspaceId)).map((e) => e.type)).toEqual(["call.ringing", "call.missed"])
    expect((await calls(key))[0]).toMatchObject({ type: "voicemail", recordingUrl: null, transcript: null })
  })
})

describe("the AI summary of a Telnyx call", () => {
  it("from the conversation's insights onto the call, with call.summary.completed last: early insights are kept, insights still being made are delivered again, repeats emit nothing twice", async () => {
    const { workspaceId, key, e164, assistantId } = await callWorkspace()
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/connect`))
    const leg = await agentCallEnded(e164)
    const ourState = fake.voice.calls.get(leg.callControlId)!.clientState
    expect(ourState).not.toBeNull()

    // Before call.conversation.ended named the conversation: ours by client_state, so kept; a stranger's is acknowledged.
    await deliver(insightsGenerated({ conversation_id: "conv-sum", client_state: ourState }))
    await deliver(insightsGenerated({ conversation_id: "conv-stranger" }))

    fake.voice.setConversation("conv-sum", [{ role: "assistant", text: "Hello!" }, {
      role: "user",
      text: "My sink leaks."
    }])
    fake.voice.setInsights("conv-sum", [{ status: "completed", results: ["Caller's sink leaks."] }, {
      status: "in_progress"
    }])
    await deliver(fake.signedWebhook("call.conversation.ended", {
      conversation_id: "conv-sum",
      assistant_id: assistantId,
      call_control_id: leg.callControlId,
      call_session_id: leg.callSessionId
    })) // kept: the recording comes first
    expect((await calls(key))[0]).toMatchObject({ transcript: null, summary: null })

    // The recording lets the transcript through, then the insights: still being made, so delivered again.
    const recording = recordingSaved(leg.callControlId)
    await deliver(recording, 500)
    expect((await calls(key))[0]).toMatchObject({ summary: null, transcript: expect.any(Array) })
    const insightRequests = () =>
      fake.requests.filter((r) => r.path === "/v2/ai/conversations/conv-sum/conversations-insights").length
    expect(insightRequests()).toBe(1)

    fake.voice.setInsights("conv-sum", [{
      status: "completed",
      results: ["Caller's sink leaks.", "A plumber visits at 9am."]
    }, { status: "failed" }])
    const insights = insightsGenerated({ conversation_id: "conv-sum" }) // only the conversation id: found by it
    await deliver(insights)
    await deliver(insights)
    await deliver(recording)
    await deliver(insightsGenerated({ conversation_id: "conv-sum" })) // a new event id for the same insights
    expect(insightRequests()).toBe(2)

    const [item] = await calls(key)
    expect(item!["summary"]).toBe("Caller's sink leaks.\n\nA plumber visits at 9am.")
    const thread = await ok(await call(key, "GET", `/conversations/${item!["conversationId"]}`))
    expect(JSON.stringify(thread)).toContain("A plumber visits at 9am.")
    const sent = await events(workspaceId)
    expect(sent.map((e) => e.type)).toEqual(ANSWERED_CALL_EVENTS)
    expect(sent[5]!.data).toEqual({
      conversationId: item!["conversationId"],
      activityId: item!["id"],
      carrierCallId: leg.callSessionId,
      summaryText: "Caller's sink leaks.\n\nA plumber visits at 9am."
    })
  })

  it("an agent call's webhooks after the answer, reversed and each twice: every one acknowledged, the call recorded once in SPEC's order", async () => {
    const { workspaceId, key, e164 } = await callWorkspace()
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/connect`))
    fake.pendingCallWebhooks() // other tests' leftovers
    const leg = fake.voice.inboundCall({ from: CALLER, to: e164 })
    await deliver(webhook(leg.callControlId, "call.initiated"))
    for (const w of fake.pendingCallWebhooks()) await deliver(w) // call.answered
    fake.voice.callerHangsUp(leg.callControlId, {
      recordingUrl: `${audioBase}/${leg.callControlId}.mp3`,
      conversation: {
        id: `conv-${leg.callSessionId}`,
        messages: [{ role: "assistant", text: "Hello!" }, { role: "user", text: "Is the shop open?" }],
        summary: "Caller asked whether the shop is open."
      }
    })
    const late = fake.pendingCallWebhooks({ order: "reversed", twice: true })
    expect(late.map((w) => w.eventType)).toEqual(
      twice(["call.conversation_insights.generated", "call.conversation.ended", "call.recording.saved", "call.hangup"])
    )
    for (const w of late) await deliver(w)

    expect((await events(workspaceId)).map((e) => e.type)).toEqual(ANSWERED_CALL_EVENTS)
    const history = await calls(key)
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({
      status: "completed",
      answeredBy: "agent",
      summary: "Caller asked whether the shop is open.",
      recordingUrl: expect.any(String)
    })
    expect(history[0]!["transcript"].map((t: any) => t.text)).toEqual(["Hello!", "Is the shop open?"])
  })

  it("a transcript Telnyx refuses does not hold the summary back: the call keeps an empty transcript and still gets its summary, without a transcript event", async () => {
    const { workspaceId, key, e164, assistantId } = await callWorkspace()
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/connect`))
    const leg = await agentCallEnded(e164)
    await deliver(recordingSaved(leg.callControlId))
    // No conversation "conv-gone" at the fake: its messages answer 404, a refusal (logged, acknowledged).
    await deliver(
      fake.signedWebhook("call.conversation.ended", {
        conversation_id: "conv-gone",
        assistant_id: assistantId,
        call_control_id: leg.callControlId,
        call_session_id: leg.callSessionId
      })
    )
    fake.voice.setInsights("conv-gone", [{ status: "completed", results: ["Caller asked for opening hours."] }])
    await deliver(insightsGenerated({ conversation_id: "conv-gone" }))
    const [item] = await calls(key)
    expect(item).toMatchObject({ summary: "Caller asked for opening hours.", transcript: [] })
    const sent = await events(workspaceId)
    expect(sent.map((e) => e.type)).toEqual([
      "call.ringing",
      "call.answered",
      "call.completed",
      "call.recording.completed",
      "call.summary.completed"
    ])
  })

  it("an outbound call keeps its summary on the activity (SPEC's outbound order has no summary event); found by the call's id when the webhook names it", async () => {
    const { workspaceId, assistantId } = await callWorkspace()
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    const placed = await ok(await call(live, "POST", "/calls", { to: CALLER }), 201)
    const leg = [...fake.voice.calls.values()].find((c) => c.callSessionId === placed.call.carrierCallId)!
    fake.voice.pickUp(leg.callControlId)
    await deliver(webhook(leg.callControlId, "call.answered"))
    await deliver(webhook(leg.callControlId, "call.hangup"))
    await deliver(recordingSaved(leg.callControlId))
    fake.voice.setConversation("conv-out-sum", [{ role: "assistant", text: "Hi, this is Desk." }])
    fake.voice.setInsights("conv-out-sum", [{ status: "completed", results: ["Reminder confirmed."] }])
    // Not named by a conversation.ended yet: found by call_session_id, kept until the transcript is there.
    const insights = insightsGenerated({ conversation_id: "conv-out-sum", call_session_id: leg.callSessionId })
    await deliver(insights)
    expect((await calls(live))[0]!["summary"]).toBeNull()
    await deliver(
      fake.signedWebhook("call.conversation.ended", {
        conversation_id: "conv-out-sum",
        assistant_id: assistantId,
        call_control_id: leg.callControlId,
        call_session_id: leg.callSessionId
      })
    )
    await deliver(insights)
    expect((await calls(live))[0]).toMatchObject({ id: placed.call.id, summary: "Reminder confirmed." })
    expect((await events(workspaceId)).map((e) => e.type)).toEqual([
      "call.completed",
      "call.recording.completed",
      "call.transcript.completed"
    ])
  })
})

describe("Telnyx recordings larger than message media", () => {
  it("a recording over 5 MB is stored and served back whole; one declaring more than the recording cap is refused unread, the webhook acknowledged, and the transcript does not wait for it", async () => {
    const { workspaceId, key, e164, assistantId } = await callWorkspace()
    await ok(await call(key, "POST", `/numbers/${encodeURIComponent(e164)}/connect`))
    const big = await agentCallEnded(e164)
    await deliver(recordingSaved(big.callControlId, "big"))
    const [item] = await calls(key)
    const served = await recordingBytes(item!["recordingUrl"])
    expect(served.length).toBe(BIG.length)
    expect(Buffer.compare(served, BIG)).toBe(0) // toEqual walks 6 M elements one by one: far too slow
    expect(item!["recordingUrl"]).toMatch(/\.mp3\?/)

    const huge = await agentCallEnded(e164)
    const refused = await deliver(recordingSaved(huge.callControlId, "huge"))
    await deliver(refused) // again: acknowledged without another download (the same file would be refused)
    expect(hugeRequests).toBe(1)
    fake.voice.setConversation("conv-huge", [{ role: "assistant", text: "Hello!" }])
    await deliver(
      fake.signedWebhook("call.conversation.ended", {
        conversation_id: "conv-huge",
        assistant_id: assistantId,
        call_control_id: huge.callControlId,
        call_session_id: huge.callSessionId
      })
    )
    const hugeCall = (await calls(key)).find((c) => c["carrierCallId"] === huge.callSessionId)!
    expect(hugeCall).toMatchObject({ status: "completed", recordingUrl: null })
    expect(hugeCall["transcript"]).toHaveLength(1)
    const types = (await events(workspaceId)).filter((e) => e.data["carrierCallId"] === huge.callSessionId).map((e) =>
      e.type
    )
    expect(types).toEqual(["call.ringing", "call.answered", "call.completed", "call.transcript.completed"])
  })
})

describe("POST /calls with a live key on Telnyx", () => {
  it("sends the agent's, the job's and the call's own instructions to the assistant in the dial", async () => {
    const { workspaceId, key, assistantId } = await callWorkspace()
    await ok(
      await call(key, "PATCH", "/agent", {
        instructions: "You work for Acme Plumbing.",
        jobs: [{ name: "Reminder", instructions: "Confirm tomorrow's visit." }]
      })
    )
    await ok(await call(key, "POST", "/agent/publish"))
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    const placed = await ok(
      await call(live, "POST", "/calls", { to: CALLER, job: "Reminder", instructions: "Mention the side gate." }),
      201
    )
    const leg = [...fake.voice.calls.values()].find((c) => c.callSessionId === placed.call.carrierCallId)!
    expect(leg.commands.find((c) => c.action === "dial")!.body["assistant"]).toEqual({
      id: assistantId,
      instructions: "You work for Acme Plumbing.\n\nConfirm tomorrow's visit.\n\nMention the side gate."
    })
  })

  it("dials with the assistant and recording, answers the call in progress, and records it under the same id from its webhooks", async () => {
    const { workspaceId, e164, assistantId, agentId } = await callWorkspace()
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    const placed = await ok(await call(live, "POST", "/calls", { to: CALLER }), 201)
    expect(placed.simulated).toBeUndefined()
    expect(placed.call).toMatchObject({
      status: "in_progress",
      direction: "outbound",
      from: e164,
      to: CALLER,
      agentId,
      endedAt: null,
      recordingUrl: null
    })

    const leg = [...fake.voice.calls.values()].find((c) => c.callSessionId === placed.call.carrierCallId)!
    const dial = leg.commands.find((c) => c.action === "dial")!.body
    expect(dial).toMatchObject({
      connection_id: CONNECTION,
      from: e164,
      to: CALLER,
      assistant: { id: assistantId },
      record: "record-from-answer",
      command_id: `dial-${placed.call.id}`
    })
    expect(JSON.parse(Buffer.from(String(dial["client_state"]), "base64").toString("utf8"))).toEqual({
      workspaceId,
      callId: placed.call.id
    })

    fake.voice.pickUp(leg.callControlId)
    await deliver(webhook(leg.callControlId, "call.initiated")) // outbound: nothing to route
    await deliver(webhook(leg.callControlId, "call.answered"))
    await deliver(webhook(leg.callControlId, "call.hangup"))
    await deliver(recordingSaved(leg.callControlId))
    fake.voice.setConversation("conv-out", [{ role: "assistant", text: "Hi, this is Desk." }, {
      role: "user",
      text: "Hello?"
    }])
    await deliver(
      fake.signedWebhook("call.conversation.ended", {
        conversation_id: "conv-out",
        assistant_id: assistantId,
        call_control_id: leg.callControlId,
        call_session_id: leg.callSessionId
      })
    )

    const [recorded] = await calls(live)
    expect(recorded).toMatchObject({
      id: placed.call.id,
      conversationId: placed.conversationId,
      status: "completed",
      answeredBy: "agent",
      direction: "outbound",
      carrierCallId: leg.callSessionId
    })
    // The person we dialed is the callee (CONTRACT's callTranscript speakers).
    expect(recorded!["transcript"].map((t: any) => t.speaker)).toEqual(["agent", "callee"])
    const sent = await events(workspaceId)
    expect(sent.map((e) => e.type)).toEqual(["call.completed", "call.recording.completed", "call.transcript.completed"])
    for (const e of sent) expect(e.data).toMatchObject({ carrierCallId: leg.callSessionId, activityId: placed.call.id })
  })

  it("webhooks that beat the dial's answer are recorded in SPEC's order, not refused; POST /calls then answers the call as recorded", async () => {
    const { workspaceId, assistantId } = await callWorkspace()
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    fake.voice.setConversation("conv-early", [{ role: "assistant", text: "Hi, this is Desk." }, {
      role: "user",
      text: "Hello?"
    }])
    let early = ""
    beforeDialAnswer = async (callControlId) => {
      early = callControlId
      fake.voice.pickUp(callControlId)
      await deliver(webhook(callControlId, "call.answered"))
      await deliver(webhook(callControlId, "call.hangup"))
      await deliver(recordingSaved(callControlId))
      const leg = fake.voice.calls.get(callControlId)!
      await deliver(
        fake.signedWebhook("call.conversation.ended", {
          conversation_id: "conv-early",
          assistant_id: assistantId,
          call_control_id: leg.callControlId,
          call_session_id: leg.callSessionId
        })
      )
    }
    const placed = await ok(await call(live, "POST", "/calls", { to: CALLER }), 201).finally(() => {
      beforeDialAnswer = null
    })
    const leg = fake.voice.calls.get(early)!
    expect(placed.call).toMatchObject({ status: "completed", answeredBy: "agent", carrierCallId: leg.callSessionId })

    const recorded = await calls(live)
    expect(recorded).toHaveLength(1)
    expect(recorded[0]).toMatchObject({
      id: placed.call.id,
      conversationId: placed.conversationId,
      status: "completed"
    })
    expect(recorded[0]!["transcript"].map((t: any) => t.speaker)).toEqual(["agent", "callee"])
    const sent = await events(workspaceId)
    expect(sent.map((e) => e.type)).toEqual(["call.completed", "call.recording.completed", "call.transcript.completed"])
    for (const e of sent) expect(e.data).toMatchObject({ carrierCallId: leg.callSessionId, activityId: placed.call.id })

    // The session went by the carrier's ids from the first webhook on.
    const session = await app.runtime.runPromise(Effect.flatMap(CallSessionStore, (s) => s.get(leg.callSessionId)))
    expect(Option.getOrThrow(session).callControlId).toBe(leg.callControlId)
    const dialing = await app.runtime.runPromise(
      Effect.flatMap(CallSessionStore, (s) => s.get(dialingId(placed.call.id)))
    )
    expect(Option.isNone(dialing)).toBe(true)
  })

  it("an answer that beats the dial's answer is kept; the call is in progress, then recorded from its hangup", async () => {
    const { workspaceId } = await callWorkspace()
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    let early = ""
    beforeDialAnswer = async (callControlId) => {
      early = callControlId
      fake.voice.pickUp(callControlId)
      await deliver(webhook(callControlId, "call.answered"))
    }
    const placed = await ok(await call(live, "POST", "/calls", { to: CALLER }), 201).finally(() => {
      beforeDialAnswer = null
    })
    expect(placed.call).toMatchObject({
      status: "in_progress",
      carrierCallId: fake.voice.calls.get(early)!.callSessionId
    })
    await deliver(webhook(early, "call.hangup"))
    const [recorded] = await calls(live)
    expect(recorded).toMatchObject({ id: placed.call.id, status: "completed", answeredBy: "agent" })
  })

  it("a webhook naming a dial of ours that is not stored (refused, or another install's) is acknowledged and changes nothing", async () => {
    const { workspaceId, key } = await callWorkspace()
    const clientState = Buffer.from(JSON.stringify({ workspaceId, callId: crypto.randomUUID() })).toString("base64")
    await deliver(
      fake.signedWebhook("call.answered", {
        call_control_id: "v3:early",
        call_session_id: "early-session",
        client_state: clientState,
        from: "+13125550100",
        to: CALLER
      })
    )
    await deliver(
      fake.signedWebhook("call.hangup", {
        call_control_id: "v3:early",
        call_session_id: "early-session",
        client_state: clientState,
        hangup_cause: "normal_clearing"
      })
    )
    await deliver(
      fake.signedWebhook("call.answered", {
        call_control_id: "v3:other",
        call_session_id: "other-session",
        from: "+13125550100",
        to: CALLER
      })
    )
    expect(await calls(key)).toEqual([])
    expect(await events(workspaceId)).toEqual([])
  })

  it("a Telnyx refusal of the dial is 409 and records nothing", async () => {
    const { workspaceId } = await callWorkspace()
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    fake.script({
      type: "error",
      status: 422,
      code: "10016",
      title: "Invalid phone number",
      detail: "to is not dialable"
    })
    const refused = await expectError(await call(live, "POST", "/calls", { to: CALLER }), 409, "failed_precondition")
    expect(refused.message).toContain("to is not dialable")
    expect(await calls(live)).toEqual([])
    // The session stored for the dial is gone with it.
    const dial = JSON.parse(fake.requests.filter((r) => r.path === "/v2/calls").at(-1)!.body)
    const { callId } = JSON.parse(Buffer.from(dial.client_state, "base64").toString("utf8"))
    const session = await app.runtime.runPromise(Effect.flatMap(CallSessionStore, (s) => s.findByCallId(callId)))
    expect(Option.isNone(session)).toBe(true)
  })
})
