/**
 * Opt-outs on Telnyx (CONTRACT "Opt-outs and keywords"), over HTTP with the Telnyx carrier over the
 * fake Telnyx, whose messaging profile handles keywords as Telnyx documents
 * (https://developers.telnyx.com/docs/messaging/messages/advanced-opt-in-out, "Default behavior"):
 * an opt-out word blocks the recipient on the whole profile and Telnyx answers it; START lifts the
 * block; a send to a blocked recipient is refused with 40300. The service records every keyword,
 * answers only the ones Telnyx does not, refuses its own opted-out recipients before Telnyx, and
 * learns from Telnyx's 40300 (on a send, or in `message.finalized`) the opt-outs it did not know.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import * as TelnyxCarrier from "../../adapters/carrier/telnyx.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { OptOutStore } from "../../core/optouts/store.ts"
import { RegistrationGate } from "../../core/registration/gate.ts"
import { makeTestApp } from "../support/app.ts"
import {
  blockedByStop,
  DEFAULT_PROFILE,
  type SignedWebhook,
  statusPayload,
  useFakeTelnyx
} from "../support/fakeTelnyx.ts"
import { bearer, expectError, expectOk } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const ADA = "+14155550123"
const OTHER_PROFILE = "profile-elsewhere"
let seq = 0

const fake = useFakeTelnyx()

const approved = Layer.succeed(
  RegistrationGate,
  RegistrationGate.of({ textingState: () => Effect.succeed("approved" as const) })
)

let app: App | undefined
const theApp = async () => {
  app ??= await makeTestApp({
    carrier: TelnyxCarrier.layer({
      apiKey: Redacted.make(fake().apiKey),
      messagingProfileId: DEFAULT_PROFILE,
      baseUrl: fake().baseUrl
    }),
    registration: approved,
    telnyxPublicKey: fake().publicKey
  })
  return app
}
afterAll(async () => {
  await app?.close()
})

interface Line {
  readonly app: App
  readonly workspaceId: string
  readonly key: string
  readonly live: string
  readonly e164: string
}

/** A workspace with a number on our Telnyx account (on `profile`), registered, and a live key. */
const newLine = async (profile = DEFAULT_PROFILE): Promise<Line> => {
  const on = await theApp()
  const { workspaceId, key } = await on.createWorkspace(`Opt-outs ${++seq}`)
  const e164 = `+1628559${String(1000 + seq).padStart(4, "0")}`
  await expectOk(await on.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164 } }), 201)
  fake().addNumber(e164, { registered: true, messagingProfileId: profile })
  return { app: on, workspaceId, key, live: (await on.createKey(workspaceId, { kind: "live" })).token, e164 }
}

const post = async (on: App, w: SignedWebhook) =>
  expect((await on.fetch("/v1/carrier/telnyx", { method: "POST", headers: w.headers, body: w.rawBody })).status)
    .toBe(200)

/** `from` texts the line through Telnyx: the profile's keyword handling, then the signed webhook. */
const text = (line: Line, from: string, body: string) =>
  post(line.app, fake().signedWebhook("message.received", fake().inboundText({ from, to: line.e164, text: body })))

const send = (line: Line, to: string, body: string) =>
  line.app.fetch("/v1/api/messages", {
    method: "POST",
    headers: bearer(line.live),
    json: { to, from: line.e164, body }
  })

/** The POST /v2/messages the fake answered, as [from, to, HTTP status, text]. */
const telnyxSends = () =>
  fake().requests.filter((r) => r.method === "POST" && r.path === "/v2/messages").map((r) => {
    const b = r.json as Record<string, unknown>
    return [b["from"], b["to"], r.answer, b["text"]]
  })

const optOut = (line: Line, phone: string) =>
  line.app.runtime.runPromise(Effect.flatMap(OptOutStore, (s) => s.get(line.workspaceId, phone))).then(
    Option.getOrNull
  )

const events = (line: Line) =>
  line.app.runtime.runPromise(Effect.flatMap(EventOutbox, (o) => o.list(line.workspaceId))).then((all) =>
    all.map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }))
  )

/** The line's one thread's activities, oldest first, as [direction, deliveryStatus, body]. */
const thread = async (line: Line) => {
  const api = (path: string) => line.app.fetch(`/v1/api${path}`, { headers: bearer(line.key) })
  const list = (await expectOk(await api("/conversations"))).conversations
  expect(list).toHaveLength(1)
  const activities = (await expectOk(await api(`/conversations/${list[0].id}`))).activities as Array<
    Record<string, any>
  >
  return activities.map((a) => [a.direction, a.deliveryStatus, a.body, a.authorUid ?? null])
}

const UNSUBSCRIBED = "You are unsubscribed and will receive no more messages. Reply START to resubscribe."

describe("opt-outs on Telnyx (the fake Telnyx)", () => {
  it("an inbound STOP is recorded with contact.opted_out; Telnyx blocks and answers it, the service does not answer again", async () => {
    const line = await newLine()
    await text(line, ADA, "stop")
    expect(await optOut(line, ADA)).toMatchObject({ phone: ADA, source: "keyword", keyword: "STOP" })
    expect((await events(line)).map((e) => e.type)).toEqual(["message.received", "contact.opted_out"])
    expect(fake().blocked(ADA)).toBe(true)
    expect(fake().autoReplies.map((r) => [r.op, r.from, r.to])).toEqual([["stop", line.e164, ADA]])
    expect(telnyxSends()).toEqual([])
    expect(await thread(line)).toEqual([["inbound", "received", "stop", null]])
  })

  it("an inbound REVOKE, a word Telnyx does not know, is recorded and answered by the service through Telnyx", async () => {
    const line = await newLine()
    await text(line, ADA, "Revoke")
    expect(await optOut(line, ADA)).toMatchObject({ source: "keyword", keyword: "REVOKE" })
    expect(fake().autoReplies).toEqual([])
    expect(fake().blocked(ADA)).toBe(false)
    const reply = `Opt-outs ${seq}: ${UNSUBSCRIBED}`
    expect(telnyxSends()).toEqual([[line.e164, ADA, 200, reply]])
    expect(await thread(line)).toEqual([["inbound", "received", "Revoke", null], ["outbound", "queued", reply, null]])
  })

  it("a live send to a recipient who texted STOP is refused 409 by the service before it reaches Telnyx", async () => {
    const line = await newLine()
    await text(line, ADA, "STOP")
    const refused = await expectError(await send(line, ADA, "Still on for 8?"), 409, "failed_precondition")
    expect(refused.message).toContain(`${ADA} opted out of texts from this workspace`)
    expect(refused.message).toContain("(replied STOP)")
    expect(telnyxSends()).toEqual([])
    expect(await thread(line)).toEqual([["inbound", "received", "STOP", null]])
  })

  it("a block rule the service does not know (STOP to another number of the profile): the send gets 40300, is 409, stored failed with message.failed, and a carrier opt-out is recorded", async () => {
    const line = await newLine()
    const elsewhere = await newLine()
    const otherProfile = await newLine(OTHER_PROFILE)
    // ADA opted out from another workspace's number on the same messaging profile.
    await text(elsewhere, ADA, "STOP ALL")
    expect(await optOut(line, ADA)).toBeNull()

    const refused = await expectError(await send(line, ADA, "Your table is ready"), 409, "failed_precondition")
    expect(refused.message).toContain("the carrier reported their opt-out")
    expect(telnyxSends()).toEqual([[line.e164, ADA, 409, "Your table is ready"]])
    expect(await thread(line)).toEqual([["outbound", "failed", "Your table is ready", null]])
    const sent = await events(line)
    expect(sent.map((e) => e.type)).toEqual(["message.failed", "contact.opted_out"])
    expect(sent[1]!.data).toMatchObject({ phone: ADA, source: "carrier", keyword: null })
    expect(await optOut(line, ADA)).toMatchObject({ source: "carrier", keyword: null })

    // Now the service knows: the next send stops here.
    await expectError(await send(line, ADA, "Hello?"), 409, "failed_precondition")
    expect(telnyxSends()).toHaveLength(1)
    // A block rule is the profile's: a number on another profile still texts ADA.
    await expectOk(await send(otherProfile, ADA, "From the other profile"), 201)
    expect(telnyxSends().at(-1)).toEqual([otherProfile.e164, ADA, 200, "From the other profile"])

    // START to this workspace's number opts ADA back in here, but Telnyx lifts a block only from
    // the number opted out from: the next send meets 40300 again, and the opt-out is recorded again.
    await text(line, ADA, "START")
    expect(await optOut(line, ADA)).toBeNull()
    expect(fake().blocked(ADA)).toBe(true)
    await expectError(await send(line, ADA, "Welcome back"), 409, "failed_precondition")
    expect(telnyxSends().at(-1)).toEqual([line.e164, ADA, 409, "Welcome back"])
    expect(await optOut(line, ADA)).toMatchObject({ source: "carrier" })
  })

  it("a message.finalized whose errors carry 40300 fails the message and records a carrier opt-out", async () => {
    const line = await newLine()
    const accepted = await expectOk(await send(line, ADA, "See you at 8"), 201)
    const carrierId = String([...fake().messages.values()].at(-1)!["id"])
    await post(
      line.app,
      fake().signedWebhook(
        "message.finalized",
        statusPayload({
          id: carrierId,
          status: "delivery_failed",
          from: line.e164,
          to: ADA,
          errors: [blockedByStop(line.e164, ADA)]
        }),
        { meta: { attempt: 1, deliveredTo: "https://switchboard.example/v1/carrier/telnyx" } }
      )
    )
    expect(await thread(line)).toEqual([["outbound", "failed", "See you at 8", null]])
    const sent = await events(line)
    expect(sent.map((e) => e.type)).toEqual(["message.delivered", "message.failed", "contact.opted_out"])
    expect(sent[1]!.data["activityId"]).toBe(accepted.message.id)
    expect(await optOut(line, ADA)).toMatchObject({ source: "carrier", keyword: null })
    await expectError(await send(line, ADA, "Hello?"), 409, "failed_precondition")
  })

  it("START after STOP opts back in at both ends: Telnyx lifts its block and answers, and a send goes through", async () => {
    const line = await newLine()
    await text(line, ADA, "STOP")
    await text(line, ADA, " start ")
    expect(await optOut(line, ADA)).toBeNull()
    expect((await events(line)).map((e) => e.type)).toEqual([
      "message.received",
      "contact.opted_out",
      "message.received",
      "contact.opted_in"
    ])
    expect(fake().blocked(ADA)).toBe(false)
    expect(fake().autoReplies.map((r) => r.op)).toEqual(["stop", "start"])
    expect(telnyxSends()).toEqual([])
    await expectOk(await send(line, ADA, "Welcome back"), 201)
    expect(telnyxSends()).toEqual([[line.e164, ADA, 200, "Welcome back"]])
  })

  it("a keyword Telnyx does not take as one is answered by the service: `Stop.` (punctuation) and INFO (no default keyword); HELP is Telnyx's", async () => {
    const stop = await newLine()
    await text(stop, ADA, "Stop.")
    expect(await optOut(stop, ADA)).toMatchObject({ source: "keyword", keyword: "STOP" })
    expect(fake().blocked(ADA)).toBe(false)
    expect(fake().autoReplies).toEqual([])
    expect(telnyxSends()).toEqual([[stop.e164, ADA, 200, `Opt-outs ${seq}: ${UNSUBSCRIBED}`]])

    const info = await newLine()
    await text(info, ADA, "INFO")
    expect(fake().autoReplies).toEqual([])
    expect(telnyxSends()).toHaveLength(2)
    expect(telnyxSends()[1]!.slice(0, 3)).toEqual([info.e164, ADA, 200])
    expect(telnyxSends()[1]![3]).toContain("Reply STOP to unsubscribe")

    const help = await newLine()
    await text(help, ADA, "help")
    expect(fake().autoReplies.map((r) => [r.op, r.from])).toEqual([["help", help.e164]])
    expect(telnyxSends()).toHaveLength(2)
  })
})
