/**
 * The contract of the carrier callbacks (core/carrier/callbacks.ts, receive.ts) as a workspace sees
 * them through the API, one list of tests run over the simulator (its traffic comes in through the
 * test helpers) and over Telnyx (the fake's signed webhooks posted to `/v1/carrier/telnyx`, the
 * messaging and voice adapters over the fake): an inbound text appears once in its thread, a delivery
 * report moves the outbound message's status, and an inbound call to a number in each voice mode
 * ends as the same call record and events. What only a real carrier can send (the same event twice,
 * out of order, about a message we do not know, forged) runs under a capability of its harness.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TelnyxCarrier from "../../adapters/carrier/telnyx.ts"
import * as TelnyxVoiceAdapter from "../../adapters/carrier/telnyxVoiceAdapter.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { RegistrationGate } from "../../core/registration/gate.ts"
import { makeTestApp } from "../support/app.ts"
import { ANSWERED_CALL_EVENTS } from "../support/callEvents.ts"
import {
  createEd25519Signer,
  type FakeTelnyx,
  inboundPayload,
  type SignedWebhook,
  startFakeTelnyx,
  statusPayload
} from "../support/fakeTelnyx.ts"
import { addMember } from "../support/members.ts"
import { bearer, expectError, expectOk } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>
/** A number's voice mode; `app` rings the team (two members with a phone), `app_unstaffed` a team with no phone. */
type Mode = "agent" | "voicemail" | "forward" | "app" | "app_unstaffed"

const CALLER = "+15550002222"
const OUTSIDE = "+15550009999"
let seq = 0

/** A workspace with a number and a published agent, and the key the carrier's traffic is checked with. */
interface Line {
  readonly workspaceId: string
  readonly key: string
  readonly e164: string
}

interface CallbackHarness {
  readonly name: string
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
  readonly app: () => App
  /** A new workspace line whose outbound texts reach this carrier. */
  readonly line: () => Promise<Line>
  /** The carrier delivers a text from `from` to the line. */
  readonly inboundText: (line: Line, from: string, body: string) => Promise<void>
  /** Sends a text from the line to `to` through this carrier; its activity id. */
  readonly send: (line: Line, to: string, body: string) => Promise<string>
  /** The API's answer to that send, whatever it is. */
  readonly attempt: (line: Line, to: string, body: string) => Promise<Response>
  /** How many texts the carrier sent `to` by itself from the line's number (its answers to keywords). */
  readonly carrierAnswers: (line: Line, to: string) => number
  /** The carrier reports the outbound message's status. */
  readonly report: (line: Line, activityId: string, status: "sent" | "delivered" | "delivery_failed") => Promise<void>
  /**
   * A caller rings the line and the call plays to its end; its carrierCallId. An `app` call is
   * answered by the first teammate whose phone was rung (the oldest with a phone).
   */
  readonly inboundCall: (line: Line, mode: Mode) => Promise<string>
  /** A voicemail gets an AI summary (`call.summary.completed` after its transcript). */
  readonly summarizesVoicemail: boolean
  /** A teammate's call gets a transcript and a summary (after its recording). */
  readonly transcribesMemberCalls: boolean
  /**
   * The carrier repeats, reorders, reports on messages we never sent, and signs what it sends (only
   * a real carrier does; the test helpers are the simulator's one way in).
   */
  readonly deliveries?: {
    readonly repeat: (line: Line, from: string, body: string) => Promise<void>
    readonly reportUnknown: () => Promise<number>
    readonly forged: (line: Line, from: string, body: string) => Promise<number>
  }
}

const api = (app: App, key: string, method: string, path: string, json?: unknown) =>
  app.fetch(`/v1/api${path}`, { method, headers: bearer(key), ...(json === undefined ? {} : { json }) })

/** A line on `app`: a workspace, its seeded number, its published agent, routed by `mode` later. */
const newLine = async (app: App): Promise<Line> => {
  const { workspaceId, key } = await app.createWorkspace("Callbacks")
  const e164 = `+1628558${String(1000 + ++seq).padStart(4, "0")}`
  await expectOk(await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164 } }), 201)
  await expectOk(await api(app, key, "PATCH", "/agent", { name: "Desk", greeting: "Hello!" }))
  await expectOk(await api(app, key, "POST", "/agent/publish"))
  return { workspaceId, key, e164 }
}

/** Routes the line's calls as `mode` says (a new number rings the team in the app). */
const route = async (app: App, line: Line, mode: Mode) => {
  const number = `/numbers/${encodeURIComponent(line.e164)}`
  if (mode === "agent") await expectOk(await api(app, line.key, "POST", `${number}/connect`))
  if (mode === "voicemail") {
    await expectOk(await api(app, line.key, "POST", `${number}/disconnect`, { mode: "voicemail" }))
  }
  if (mode === "forward") {
    await expectOk(
      await api(app, line.key, "POST", `${number}/disconnect`, { mode: "forward", forwardTo: OUTSIDE })
    )
  }
}

// ------------------------------------------------------------------------------------ the simulator

const simulated = (): CallbackHarness => {
  let app: App
  return {
    name: "simulated",
    start: async () => {
      app = await makeTestApp()
    },
    stop: () => app.close(),
    app: () => app,
    line: () => newLine(app),
    inboundText: async (line, from, body) =>
      void await expectOk(
        await api(app, line.key, "POST", "/test-helpers/inbound-messages", { from, to: line.e164, body }),
        201
      ),
    send: async (line, to, body) =>
      (await expectOk(await api(app, line.key, "POST", "/messages", { to, from: line.e164, body }), 201)).message.id,
    attempt: (line, to, body) => api(app, line.key, "POST", "/messages", { to, from: line.e164, body }),
    carrierAnswers: () => 0,
    report: async (line, activityId, status) =>
      void await expectOk(await api(app, line.key, "POST", "/test-helpers/delivery-status", { activityId, status })),
    inboundCall: async (line, mode) => {
      await route(app, line, mode)
      // The first teammate with a phone answers the simulator's `answered` call.
      const played = await expectOk(
        await api(app, line.key, "POST", "/test-helpers/inbound-calls", {
          from: CALLER,
          to: line.e164,
          scenario: "answered"
        }),
        201
      )
      return played.carrierCallId
    },
    summarizesVoicemail: true,
    transcribesMemberCalls: true
  }
}

// ------------------------------------------------------------------------------------ Telnyx over the fake

const approved = Layer.succeed(
  RegistrationGate,
  RegistrationGate.of({ textingState: () => Effect.succeed("approved" as const) })
)

const telnyx = (): CallbackHarness => {
  let app: App
  let fake: FakeTelnyx
  /** Serves the recordings Telnyx would host on S3. */
  let audio: Server
  let audioBase: string
  const live = new Map<string, string>()
  const post = async (w: SignedWebhook) => {
    const res = await app.fetch("/v1/carrier/telnyx", { method: "POST", headers: w.headers, body: w.rawBody })
    return res.status
  }
  const deliver = async (w: SignedWebhook) => expect(await post(w)).toBe(200)
  const drain = async () => {
    for (let w = fake.pendingCallWebhooks(); w.length > 0; w = fake.pendingCallWebhooks()) {
      for (const hook of w) await deliver(hook)
    }
  }
  const carrierId = (line: Line, activityId: string) =>
    app.runtime.runPromise(
      Effect.flatMap(ConversationStore, (s) => s.getActivity(line.workspaceId, activityId)).pipe(
        Effect.map((a) => Option.getOrThrow(a).carrierMessageId!)
      )
    )
  /** A text reaches Telnyx (its keyword handling runs) and then us. */
  const inbound = (line: Line, from: string, body: string) =>
    fake.signedWebhook("message.received", fake.inboundText({ from, to: line.e164, text: body }))
  return {
    name: "telnyx over the fake",
    start: async () => {
      audio = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "audio/mpeg", "content-length": 4 })
        res.end(new Uint8Array([0x49, 0x44, 0x33, 1]))
      })
      await new Promise<void>((resolve) => audio.listen(0, "127.0.0.1", resolve))
      audioBase = `http://127.0.0.1:${(audio.address() as AddressInfo).port}`
      fake = await startFakeTelnyx()
      const config = { apiKey: Redacted.make(fake.apiKey), messagingProfileId: "profile-1", baseUrl: fake.baseUrl }
      app = await makeTestApp({
        carrier: TelnyxCarrier.layer(config),
        voice: TelnyxVoiceAdapter.layer({ ...config, connectionId: "connection-1" }),
        registration: approved,
        telnyxPublicKey: fake.publicKey
      })
    },
    stop: async () => {
      await app.close()
      await fake.stop()
      audio.closeAllConnections()
      await new Promise((resolve) => audio.close(resolve))
    },
    app: () => app,
    line: async () => {
      const line = await newLine(app)
      fake.addNumber(line.e164, { registered: true })
      live.set(line.workspaceId, (await app.createKey(line.workspaceId, { kind: "live" })).token)
      return line
    },
    inboundText: (line, from, body) => deliver(inbound(line, from, body)),
    send: async (line, to, body) =>
      (await expectOk(
        await api(app, live.get(line.workspaceId)!, "POST", "/messages", { to, from: line.e164, body }),
        201
      )).message.id,
    attempt: (line, to, body) =>
      api(app, live.get(line.workspaceId)!, "POST", "/messages", { to, from: line.e164, body }),
    carrierAnswers: (line, to) => fake.autoReplies.filter((r) => r.from === line.e164 && r.to === to).length,
    report: async (line, activityId, status) =>
      deliver(
        fake.signedWebhook(
          status === "sent" ? "message.sent" : "message.finalized",
          statusPayload({
            id: await carrierId(line, activityId),
            status,
            ...(status === "delivery_failed"
              ? {
                errors: [{ code: "40002", title: "Blocked as spam (temporary)", detail: "Carrier blocked the message" }]
              }
              : {})
          })
        )
      ),
    inboundCall: async (line, mode) => {
      await route(app, line, mode)
      await drain() // other calls' leftovers
      const leg = fake.voice.inboundCall({ from: CALLER, to: line.e164 })
      await deliver(fake.signedWebhook("call.initiated", fake.voice.callPayload(leg.callControlId, "call.initiated")))
      await drain() // answered; a voicemail's greeting played
      // The team's phones, dialled in turn (oldest teammate first): the first picks up.
      const rung = [...fake.voice.calls.values()].find((c) => c.linkTo === leg.callControlId)
      if (rung !== undefined) {
        fake.voice.pickUp(rung.callControlId)
        await deliver(fake.signedWebhook("call.answered", fake.voice.callPayload(rung.callControlId, "call.answered")))
        await drain() // joined to the caller; the other phones hung up
      }
      if (mode === "forward") {
        // The outside line picks up.
        await deliver(fake.signedWebhook("call.answered", fake.voice.callPayload(leg.callControlId, "call.answered")))
      }
      fake.voice.callerHangsUp(leg.callControlId, {
        recordingUrl: `${audioBase}/${leg.callControlId}.mp3`,
        transcript: "Please call me back.",
        conversation: {
          id: `conv-${leg.callSessionId}`,
          messages: [{ role: "assistant", text: "Hello!" }, { role: "user", text: "Are you open today?" }],
          summary: "The caller asked whether the shop is open today."
        }
      })
      await drain()
      return leg.callSessionId
    },
    // Reason: Telnyx summarizes an AI assistant's conversation; a voicemail has none (drift from SPEC).
    summarizesVoicemail: false,
    // Reason: a teammate's call is recorded, but no assistant was on it to transcribe and summarize it.
    transcribesMemberCalls: false,
    deliveries: {
      repeat: async (line, from, body) => {
        const hook = inbound(line, from, body)
        await deliver(hook)
        await deliver(hook)
      },
      reportUnknown: () =>
        post(fake.signedWebhook("message.finalized", statusPayload({ id: "unknown-id", status: "delivered" }))),
      forged: (line, from, body) =>
        post(
          fake.signedWebhook("message.received", inboundPayload({ from, to: line.e164, text: body }), {
            signer: createEd25519Signer()
          })
        )
    }
  }
}

// ------------------------------------------------------------------------------------ the contract

const ADA = "+14155550123"
const QUITTER = "+14155550166"

const events = (app: App, workspaceId: string) =>
  app.runtime.runPromise(Effect.flatMap(EventOutbox, (o) => o.list(workspaceId))).then((all) =>
    all.map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }))
  )

describe.each([simulated(), telnyx()])("carrier callbacks: $name", (h) => {
  beforeAll(() => h.start())
  afterAll(() => h.stop())

  const threadOf = async (line: Line) => {
    const list = (await expectOk(await api(h.app(), line.key, "GET", "/conversations"))).conversations
    expect(list).toHaveLength(1)
    return list[0]
  }
  const activities = async (line: Line, conversationId: string) =>
    (await expectOk(await api(h.app(), line.key, "GET", `/conversations/${conversationId}`))).activities as Array<
      Record<string, any>
    >

  it("an inbound text to a workspace number appears once in its thread, with message.received", async () => {
    const line = await h.line()
    await h.inboundText(line, ADA, "Booking for 4 tonight?")
    const thread = await threadOf(line)
    expect(thread).toMatchObject({
      numberE164: line.e164,
      participants: [ADA],
      unread: 1,
      preview: "Booking for 4 tonight?"
    })
    expect((await activities(line, thread.id)).map((a) => [a.direction, a.deliveryStatus, a.body])).toEqual([
      ["inbound", "received", "Booking for 4 tonight?"]
    ])
    expect((await events(h.app(), line.workspaceId)).map((e) => e.type)).toEqual(["message.received"])
  })

  it("delivery reports move the outbound message's status: delivered, or failed", async () => {
    const line = await h.line()
    const delivered = await h.send(line, ADA, "See you at 8")
    const failed = await h.send(line, ADA, "And bring the menu")
    await h.report(line, delivered, "sent")
    await h.report(line, delivered, "delivered")
    await h.report(line, failed, "delivery_failed")
    const thread = await threadOf(line)
    const status = Object.fromEntries((await activities(line, thread.id)).map((a) => [a.id, a.deliveryStatus]))
    expect(status).toEqual({ [delivered]: "delivered", [failed]: "failed" })
    // message.delivered as the carrier accepts a message, and again on each status update.
    const of = async (id: string) =>
      (await events(h.app(), line.workspaceId)).filter((e) => e.data["activityId"] === id).map((e) => e.type)
    expect(await of(delivered)).toEqual(["message.delivered", "message.delivered", "message.delivered"])
    expect(await of(failed)).toEqual(["message.delivered", "message.failed"])
  })

  /** What each voice mode comes to: the call record and SPEC's event order. */
  const expected: Record<Mode, { call: Record<string, unknown>; events: ReadonlyArray<string> }> = {
    agent: {
      call: { type: "call", status: "completed", answeredBy: "agent" },
      events: ANSWERED_CALL_EVENTS
    },
    voicemail: {
      call: { type: "voicemail", status: "missed", answeredBy: null },
      events: ["call.ringing", "call.missed", "call.voicemail.completed", "call.transcript.completed"]
    },
    forward: {
      call: { type: "call", status: "completed", answeredBy: null, recordingUrl: null, transcript: null },
      events: ["call.ringing", "call.forwarded", "call.completed"]
    },
    app: {
      call: { type: "call", status: "completed", answeredBy: "member" },
      events: h.transcribesMemberCalls
        ? ANSWERED_CALL_EVENTS
        : ["call.ringing", "call.answered", "call.completed", "call.recording.completed"]
    },
    app_unstaffed: {
      call: { type: "voicemail", status: "missed", answeredBy: null },
      events: ["call.ringing", "call.missed", "call.voicemail.completed", "call.transcript.completed"]
    }
  }

  it.each(["agent", "voicemail", "forward", "app", "app_unstaffed"] as const)(
    "an inbound call to a number in %s mode: one call record and its events in SPEC's order",
    async (mode) => {
      const line = await h.line()
      // The team: the oldest member has no phone; in app mode two have one.
      await addMember(h.app().runtime, line.workspaceId, null)
      const first = mode === "app" ? await addMember(h.app().runtime, line.workspaceId, "+15550003101") : null
      if (mode === "app") await addMember(h.app().runtime, line.workspaceId, "+15550003102")
      const carrierCallId = await h.inboundCall(line, mode)
      const calls = (await expectOk(await api(h.app(), line.key, "GET", "/calls"))).calls
      expect(calls).toHaveLength(1)
      expect(calls[0]).toMatchObject({
        direction: "inbound",
        from: CALLER,
        to: line.e164,
        numberE164: line.e164,
        carrierCallId,
        ...expected[mode].call
      })
      const recorded = mode !== "forward"
      if (recorded) expect(calls[0].recordingUrl).toEqual(expect.any(String))
      if (recorded && (mode !== "app" || h.transcribesMemberCalls)) {
        expect(calls[0].transcript.length).toBeGreaterThan(0)
      }
      if (mode === "agent") expect(calls[0].summary).toEqual(expect.any(String))
      const sent = (await events(h.app(), line.workspaceId)).filter((e) => e.type.startsWith("call."))
      const voicemail = mode === "voicemail" || mode === "app_unstaffed"
      expect(sent.map((e) => e.type)).toEqual([
        ...expected[mode].events,
        ...(voicemail && h.summarizesVoicemail ? ["call.summary.completed"] : [])
      ])
      for (const e of sent) expect(e.data["carrierCallId"], e.type).toBe(carrierCallId)
      if (first !== null) {
        expect(sent.find((e) => e.type === "call.answered")!.data).toMatchObject({
          answeredBy: "member",
          memberUid: first.id
        })
      }
    }
  )

  it.runIf(h.deliveries !== undefined)(
    "the same text delivered twice is stored once; a report on a message we never sent is acknowledged; a forged one is refused and stores nothing",
    async () => {
      const d = h.deliveries!
      const line = await h.line()
      await d.repeat(line, ADA, "Twice?")
      const thread = await threadOf(line)
      expect(await activities(line, thread.id)).toHaveLength(1)
      expect((await events(h.app(), line.workspaceId)).map((e) => e.type)).toEqual(["message.received"])
      expect(await d.reportUnknown()).toBe(200)
      const other = await h.line()
      expect(await d.forged(other, ADA, "forged")).toBe(401)
      expect((await expectOk(await api(h.app(), other.key, "GET", "/conversations"))).conversations).toEqual([])
    }
  )

  it("an inbound STOP opts its sender out: answered once (by the carrier or the service), and a later send is refused 409", async () => {
    // Not ADA: Telnyx blocks a recipient on the whole messaging profile, which every line here shares.
    const line = await h.line()
    await h.inboundText(line, QUITTER, "STOP")
    const thread = await threadOf(line)
    const replies = (await activities(line, thread.id)).filter((a) => a.direction === "outbound")
    expect(replies.length + h.carrierAnswers(line, QUITTER)).toBe(1)
    expect((await events(h.app(), line.workspaceId)).map((e) => e.type)).toContain("contact.opted_out")
    await expectError(await h.attempt(line, QUITTER, "Are you there?"), 409, "failed_precondition")
    expect((await activities(line, thread.id)).filter((a) => a.direction === "outbound")).toHaveLength(replies.length)
  })

  it(
    "a report that arrives after a later one does not move the status back",
    async () => {
      const line = await h.line()
      const id = await h.send(line, ADA, "Late report")
      await h.report(line, id, "delivered")
      await h.report(line, id, "sent")
      const thread = await threadOf(line)
      expect((await activities(line, thread.id)).find((a) => a.id === id)?.deliveryStatus).toBe("delivered")
    }
  )
})
