/**
 * The live Telnyx path, tried from outside: the real server process with `CARRIER=telnyx` on a
 * real Postgres, pointed at the fake Telnyx (test/support/fakeTelnyx.ts) and driven over sockets as
 * a new operator would, from docs/operating.md ("Going live on Telnyx"), docs/ and the OpenAPI document
 * only. A live workspace buys a number, files its 10DLC registration, gets its numbers assigned to
 * the campaign at Telnyx (each texts live only then, one bought after the approval too), texts,
 * takes delivery reports and inbound texts (a repeat stored once), and answers a voicemail call
 * with greeting, recording and transcript (Telnyx's webhooks reversed and repeated), its events in
 * SPEC's order; a workspace whose only registration is a mock one cannot text live. Every Telnyx webhook is signed by the fake and
 * POSTed to `/v1/carrier/telnyx`. Needs Postgres: skipped without one, a failure under CI=true.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import {
  type FakeTelnyx,
  inboundPayload,
  type SignedWebhook,
  startFakeTelnyx,
  statusPayload
} from "../support/fakeTelnyx.ts"
import { freshDatabase } from "../support/postgres.ts"
import { business } from "../support/registration.ts"
import { freePort, type RunningServer, startServer } from "../support/server.ts"
import { until } from "../support/until.ts"

const ADMIN_TOKEN = "e2e-telnyx-admin"
const PROFILE_ID = "fake-profile"
const CONNECTION_ID = "fake-connection"
const ADA = "+14155550123"
const CALLER = "+14155550177"
const WORKSPACE = "Acme Plumbing"
const BILLING = {
  plan: "pro",
  trial: false,
  subscription: "active",
  paymentMethod: true,
  identity: "verified",
  mobileVerified: true,
  billedVia: "card",
  ownerEmail: "owner@acme.example"
}
// registration.md, "Mock mode": the words of a live send's 409 when only a mock registration is on file.
const MOCK_ONLY = "Texting is not registered for live messages: the registration on file was filed in mock mode"

interface Received {
  readonly id: string
  readonly type: string
  readonly timestamp: string
  readonly data: Record<string, any>
}

/** A local HTTP server: the workspace's webhook receiver (events by webhook-id) and the recording Telnyx links to. */
const startLocal = async () => {
  const events = new Map<string, Received>()
  const recording = Buffer.concat([Buffer.from("ID3"), Buffer.alloc(4096, 7)])
  let recordingFetches = 0
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/recording.mp3") {
      recordingFetches++
      res.writeHead(200, { "content-type": "audio/mpeg", "content-length": String(recording.length) }).end(recording)
      return
    }
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      try {
        const parsed = JSON.parse(body)
        events.set(String(req.headers["webhook-id"]), { id: String(req.headers["webhook-id"]), ...parsed })
      } catch {
        // not an event
      }
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  return {
    hooksUrl: `${base}/hooks`,
    recordingUrl: `${base}/recording.mp3`,
    recording,
    events,
    recordingFetches: () => recordingFetches,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
  }
}

const url = inject("postgresUrl")
const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

if (url === null && process.env["CI"] === "true") {
  describe("the live Telnyx path", () => {
    it("needs a Postgres under CI=true", () => {
      expect.fail("globalSetup provided no Postgres URL, and CI=true requires the Postgres end-to-end tests to run")
    })
  })
}

describe.runIf(url !== null)("the live Telnyx path end to end (CARRIER=telnyx on the fake Telnyx)", () => {
  let fake: FakeTelnyx
  let local: Awaited<ReturnType<typeof startLocal>>
  let server: RunningServer
  let carrierUrl: string

  const api = async (
    path: string,
    init: { token: string; method?: string; json?: unknown }
  ): Promise<{ status: number; body: any; text: string }> => {
    const res = await fetch(`${server.baseUrl}${path}`, {
      method: init.method ?? (init.json === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${init.token}`,
        ...(init.json === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      signal: AbortSignal.timeout(20_000)
    })
    const text = await res.text()
    return { status: res.status, body: text === "" ? null : JSON.parse(text), text }
  }
  const admin = (path: string, json?: unknown) => api(`/v1/admin${path}`, { token: ADMIN_TOKEN, json })

  /** POSTs a webhook the fake signed to the server, as Telnyx does (the fake's own helper gives up after 2 s). */
  const post = async (hook: SignedWebhook) => {
    const res = await fetch(carrierUrl, {
      method: "POST",
      headers: { ...hook.headers, "user-agent": "telnyx-webhooks" },
      body: hook.rawBody,
      signal: AbortSignal.timeout(20_000)
    })
    return { status: res.status, body: await res.text() }
  }
  const deliver = (eventType: string, payload: unknown) =>
    post(
      fake.signedWebhook(
        eventType,
        payload,
        eventType === "message.received" ? {} : { meta: { attempt: 1, deliveredTo: carrierUrl } }
      )
    )
  /**
   * Delivers the call webhooks the fake has queued, as Telnyx does: one not acknowledged with a 2xx
   * is delivered again (same event), until all are.
   */
  const deliverPendingCallWebhooks = async (options: { order?: "sent" | "reversed"; twice?: boolean } = {}) => {
    const delivered: Array<string> = []
    let hooks = fake.pendingCallWebhooks(options)
    const deadline = Date.now() + 30_000
    while (hooks.length > 0) {
      const again: Array<(typeof hooks)[number]> = []
      for (const hook of hooks) {
        const res = await post(hook)
        delivered.push(`${hook.eventType} ${res.status}`)
        if (res.status < 200 || res.status > 299) again.push(hook)
      }
      if (Date.now() > deadline) throw new Error(`call webhooks still refused: ${delivered.join(", ")}`)
      if (again.length > 0) await new Promise((r) => setTimeout(r, 300))
      hooks = again
    }
    return delivered
  }

  // The state the steps build on, in order.
  let workspaceId: string
  let live: string
  let test: string
  let number: string
  let conversationId: string

  beforeAll(async () => {
    fake = await startFakeTelnyx()
    cleanups.push(() => fake.stop())
    local = await startLocal()
    cleanups.push(() => local.close())
    const db = await freshDatabase(url!, "e2e_telnyx")
    cleanups.push(db.drop)
    const dataDir = mkdtempSync(join(tmpdir(), "switchboard-e2e-telnyx-"))
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
    // The server's address is its PUBLIC_BASE_URL, so it is chosen before the start.
    const port = await freePort()
    const publicBaseUrl = `http://127.0.0.1:${port}`
    carrierUrl = `${publicBaseUrl}/v1/carrier/telnyx`
    server = await startServer("node", {
      PORT: String(port),
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      CARRIER: "telnyx",
      TELNYX_BASE_URL: fake.baseUrl,
      TELNYX_API_KEY: fake.apiKey,
      TELNYX_PUBLIC_KEY: fake.publicKey,
      TELNYX_MESSAGING_PROFILE_ID: PROFILE_ID,
      TELNYX_CONNECTION_ID: CONNECTION_ID,
      PUBLIC_BASE_URL: publicBaseUrl,
      REGISTRY_POLL_MS: "300",
      // configuration.md: the guard refuses http and loopback unless this is set (the recording and
      // the webhook receiver are on 127.0.0.1).
      OUTBOUND_ALLOW_PRIVATE: "true",
      RATE_LIMIT_PER_MINUTE: "100000"
    })
    cleanups.push(() => server.stop())
    // Assignments at Telnyx stay pending until the test lets them complete (step 3).
    fake.setReview({ assignment: undefined })
  })

  it("1. the admin API makes a workspace ready to buy and text, with a live key and a test key", async () => {
    const ws = await admin("/workspaces", { name: WORKSPACE, billing: BILLING })
    expect(ws.status, ws.text).toBe(201)
    workspaceId = ws.body.workspace.id
    expect(workspaceId).toMatch(/^[0-9a-f-]{36}$/)
    const liveKey = await admin(`/workspaces/${workspaceId}/keys`, { kind: "live", name: "live" })
    const testKey = await admin(`/workspaces/${workspaceId}/keys`, { kind: "test", name: "test" })
    expect(liveKey.status, liveKey.text).toBe(201)
    expect(testKey.status, testKey.text).toBe(201)
    live = liveKey.body.key.token
    test = testKey.body.key.token
    const webhook = await api("/v1/api/webhooks", { token: live, json: { url: local.hooksUrl, events: ["*"] } })
    expect(webhook.status, webhook.text).toBe(201)
  })

  it("2. the live key searches Telnyx's numbers and buys a local one (the order settles on a later read)", async () => {
    const found = await api("/v1/api/numbers/available?type=local&locality=Chicago&limit=5", { token: live })
    expect(found.status, found.text).toBe(200)
    const list = found.body.available as Array<any>
    expect(list.length).toBeGreaterThan(0)
    // Only numbers that text: the search asks Telnyx for sms and voice.
    expect(list.map((n) => n.phone_number)).not.toContain("+13122010003")
    number = list[0].phone_number
    expect(fake.requests.find((r) => r.path === "/v2/available_phone_numbers")?.query.get("filter[locality]"))
      .toBe("Chicago")

    const bought = await api("/v1/api/numbers", { token: live, json: { phoneNumber: number } })
    expect(bought.status, bought.text).toBe(201)
    expect(bought.body.simulated).toBeUndefined()
    expect(bought.body.number).toMatchObject({ e164: number, type: "local", voiceMode: "app", status: "active" })
    const orders = [...fake.orders.values()]
    expect(orders).toHaveLength(1)
    // Created pending, read back until Telnyx fulfilled it; put on our messaging profile and connection.
    expect(orders[0]).toMatchObject({
      status: "success",
      messaging_profile_id: PROFILE_ID,
      connection_id: CONNECTION_ID
    })
    expect(fake.requests.some((r) => r.method === "GET" && r.path === `/v2/number_orders/${orders[0]!["id"]}`))
      .toBe(true)
    const numbers = await api("/v1/api/numbers", { token: live })
    expect(numbers.body.numbers.map((n: any) => n.e164)).toEqual([number])
    // numbers.md: the first local number is included in the plan, a ledger row of 0.
    const ledger = await admin(`/workspaces/${workspaceId}/ledger`)
    expect(ledger.body.charges.map((c: any) => [c.kind, c.amountCents, c.numberE164])).toEqual([
      ["local_number", 0, number]
    ])
  })

  it("3. files the live 10DLC registration; the number is assigned to the campaign at Telnyx, and only then texts live", async () => {
    // The test key never reaches Telnyx: its text is simulated, registration or not.
    const simulated = await api("/v1/api/messages", { token: test, json: { to: ADA, body: "test key" } })
    expect(simulated.status, simulated.text).toBe(201)
    expect(simulated.body.simulated).toBe(true)

    const unfiled = await api("/v1/api/messages", { token: live, json: { to: ADA, body: "too early" } })
    expect(unfiled.status, unfiled.text).toBe(409)
    expect(unfiled.body.error.code).toBe("failed_precondition")
    expect(unfiled.body.error.message).toMatch(/regist/i)

    const filed = await api("/v1/api/messaging/registration", { token: live, json: { business } })
    expect(filed.status, filed.text).toBe(201)
    expect(filed.body.mock).toBeUndefined()
    expect(filed.body.messaging.step).toBe("brand_pending")
    const brands = [...fake.brands.values()]
    expect(brands).toHaveLength(1)
    // The README: the registry's webhooks go to the carrier URL, named in every filing.
    expect(brands[0]).toMatchObject({
      displayName: WORKSPACE,
      companyName: business.companyName,
      webhookURL: carrierUrl
    })

    // The poller (REGISTRY_POLL_MS) reads the brand's review, builds the campaign and reads its review.
    const active = await until("campaign_active", async () => {
      const m = await api("/v1/api/messaging", { token: live })
      return m.body.messaging.step === "campaign_active" ? m.body.messaging : undefined
    })
    expect(active).toMatchObject({ canText: true, brand: { status: "accepted" }, campaign: { status: "approved" } })
    // registration.md: a live filing charges the texting setup of each local number, the campaign's
    // approval the messaging add-on (prorated).
    const charges = (await admin(`/workspaces/${workspaceId}/ledger`)).body.charges as Array<any>
    expect(charges.filter((c) => c.kind === "texting_setup").map((c) => [c.amountCents, c.numberE164]))
      .toEqual([[2000, number]])
    const addon = charges.filter((c) => c.kind === "messaging_addon")
    expect(addon).toHaveLength(1)
    // Prorated from today; in a month's last days it falls under the minimum charge and is waived.
    if (addon[0].amountCents === 0) expect(addon[0].description).toMatch(/waived/)
    else expect(addon[0].amountCents).toBeGreaterThanOrEqual(50)
    expect(addon[0].amountCents).toBeLessThanOrEqual(400)
    const campaigns = [...fake.campaigns.values()]
    expect(campaigns).toHaveLength(1)
    expect(campaigns[0]).toMatchObject({ brandId: brands[0]!["brandId"], webhookURL: carrierUrl })

    // The poller asks Telnyx to assign the number; Telnyx has not completed it yet.
    const pending = await until("the assignment request", () => fake.assignments.get(number))
    expect(pending).toMatchObject({ campaignId: campaigns[0]!["campaignId"], assignmentStatus: "PENDING_ASSIGNMENT" })
    const unassigned = await api("/v1/api/messages", { token: live, json: { to: ADA, body: "not yet" } })
    expect(unassigned.status, unassigned.text).toBe(409)
    expect(unassigned.body.error.message).toBe(`${number} is not yet assigned to the texting campaign`)
    expect(fake.requests.filter((r) => r.path === "/v2/messages")).toHaveLength(0)

    // Telnyx completes it; the poller's next read sees it, and the text goes out.
    fake.setReview({ assignment: { outcome: "assigned" } })
    const sent = await until("a live text accepted", async () => {
      const res = await api("/v1/api/messages", { token: live, json: { to: ADA, body: "Your plumber is on the way" } })
      if (res.status === 201) return res
      expect(res.status, res.text).toBe(409)
      expect(res.body.error.message).toBe(`${number} is not yet assigned to the texting campaign`)
      return undefined
    })
    expect(fake.assignments.get(number)).toMatchObject({ assignmentStatus: "ASSIGNED" })
    expect(sent.body.simulated).toBeUndefined()
    expect(sent.body.message).toMatchObject({ direction: "outbound", body: "Your plumber is on the way" })
    conversationId = sent.body.conversationId
  })

  it("3b. a number bought after the campaign's approval is assigned by the poller, then texts", async () => {
    const found = await api("/v1/api/numbers/available?type=local&locality=Chicago&limit=5", { token: live })
    const second: string = found.body.available.find((n: any) => n.phone_number !== number).phone_number
    const bought = await api("/v1/api/numbers", { token: live, json: { phoneNumber: second } })
    expect(bought.status, bought.text).toBe(201)
    // Nobody calls refresh: the poller asks Telnyx, and a later read confirms it.
    const assigned = await until(
      "the second number assigned",
      () => fake.assignments.get(second)?.["assignmentStatus"] === "ASSIGNED" ? fake.assignments.get(second) : undefined
    )
    expect(assigned["campaignId"]).toBe([...fake.campaigns.keys()][0])
    const sent = await until("a live text from the second number", async () => {
      const res = await api("/v1/api/messages", {
        token: live,
        json: { from: second, to: ADA, body: "From our second line" }
      })
      if (res.status === 201) return res
      expect(res.body.error.message).toBe(`${second} is not yet assigned to the texting campaign`)
      return undefined
    })
    expect(sent.body.message).toMatchObject({ direction: "outbound" })
    expect(fake.requests.filter((r) => r.path === "/v2/messages" && (r.json as any)?.from === second)).toHaveLength(1)
  })

  it("4. the live text reaches Telnyx, and its delivery reports move it to delivered", async () => {
    const sends = fake.requests.filter((r) =>
      r.method === "POST" && r.path === "/v2/messages" && r.answer === 200 && (r.json as any)?.from === number
    )
    expect(sends).toHaveLength(1)
    expect(sends[0]!.json).toMatchObject({ from: number, to: ADA, text: "Your plumber is on the way" })
    const telnyxId = [...fake.messages.values()].find((m) =>
      m["text"] === "Your plumber is on the way"
    )!["id"] as string
    // Assigned to an active campaign, so Telnyx queues it rather than failing it with 40010.
    expect(fake.messages.get(telnyxId)).toMatchObject({ errors: [] })

    const thread = async () => (await api(`/v1/api/conversations/${conversationId}`, { token: live })).body
    const outbound = (await thread()).activities.find((a: any) => a.body === "Your plumber is on the way")
    expect(outbound.deliveryStatus).toBe("queued")

    for (const status of ["sent", "delivered"]) {
      const res = await deliver(
        status === "sent" ? "message.sent" : "message.finalized",
        statusPayload({ id: telnyxId, status, from: number, to: ADA })
      )
      expect(res.status, res.body).toBeLessThan(300)
    }
    await until("delivered on the activity", async () => {
      const a = (await thread()).activities.find((x: any) => x.id === outbound.id)
      return a.deliveryStatus === "delivered" ? a : undefined
    })
    // A late, repeated message.sent does not move it back.
    const late = await deliver("message.sent", statusPayload({ id: telnyxId, status: "sent", from: number, to: ADA }))
    expect(late.status, late.body).toBeLessThan(300)
    expect((await thread()).activities.find((x: any) => x.id === outbound.id).deliveryStatus).toBe("delivered")
    // The workspace's webhook is told each step.
    await until(
      "message.delivered (delivered) at the receiver",
      () =>
        [...local.events.values()].find((e) =>
          e.type === "message.delivered" && e.data["activityId"] === outbound.id &&
          e.data["deliveryStatus"] === "delivered"
        )
    )
  })

  it("5. an inbound text to the number lands in the thread once, even when Telnyx delivers it twice", async () => {
    const payload = inboundPayload({
      from: ADA,
      to: number,
      text: "Great, see you at 3",
      messagingProfileId: PROFILE_ID
    })
    const [first, second] = await Promise.all([
      deliver("message.received", payload),
      deliver("message.received", payload)
    ])
    expect(first!.status, first!.body).toBeLessThan(300)
    expect(second!.status, second!.body).toBeLessThan(300)
    const again = await deliver("message.received", payload)
    expect(again.status, again.body).toBeLessThan(300)
    const thread = await api(`/v1/api/conversations/${conversationId}`, { token: live })
    expect(thread.body.activities.map((a: any) => [a.direction, a.body])).toEqual([
      ["outbound", "test key"],
      ["outbound", "Your plumber is on the way"],
      ["inbound", "Great, see you at 3"]
    ])
    await until(
      "message.received at the receiver",
      () =>
        [...local.events.values()].find((e) =>
          e.type === "message.received" && e.data["conversationId"] === conversationId
        )
    )
  })

  it("6. a voicemail call: answered, greeting spoken, recorded with transcription; recording and transcript on the call, events in SPEC's order", async () => {
    const mode = await api(`/v1/api/numbers/${encodeURIComponent(number)}/disconnect`, {
      token: live,
      json: { mode: "voicemail" }
    })
    expect(mode.status, mode.text).toBe(200)
    expect(mode.body).toMatchObject({ ok: true, voiceMode: "voicemail" })

    const call = fake.voice.inboundCall({ from: CALLER, to: number, connectionId: CONNECTION_ID })
    const rang = await deliver("call.initiated", fake.voice.callPayload(call.callControlId, "call.initiated"))
    expect(rang.status, rang.body).toBeLessThan(300)
    // Telnyx sends what each command causes (answered, speak started and ended) as the server acts.
    await until("the recording started", async () => {
      await deliverPendingCallWebhooks()
      return call.commands.some((c) => c.action === "record_start") ? true : undefined
    })
    expect(call.commands.map((c) => c.action)).toEqual(["answer", "speak", "record_start"])
    expect(call.commands[1]!.body).toMatchObject({
      payload: `You have reached ${WORKSPACE}. Please leave a message after the tone.`,
      voice: "female"
    })
    expect(call.commands[2]!.body).toMatchObject({ transcription: true })

    // The caller leaves a message and hangs up; Telnyx's hangup, recording and transcription come
    // last first, each twice.
    const transcript = "Hi, it's Sam, the sink is leaking again, please call me back"
    // The caller talks for 15 s: the fake dates the hangup (and the recording's end) then.
    call.state = "ended"
    call.endedAt = new Date(Date.parse(call.startTime) + 15_000).toISOString()
    fake.voice.callerHangsUp(call.callControlId, { recordingUrl: local.recordingUrl, transcript })
    const delivered = await deliverPendingCallWebhooks({ order: "reversed", twice: true })
    expect(delivered.length).toBeGreaterThanOrEqual(6)

    const voicemail = await until("the voicemail with its recording and transcript", async () => {
      const calls = await api("/v1/api/calls", { token: live })
      const c = calls.body.calls.find((x: any) => x.carrierCallId === call.callSessionId)
      return c?.recordingUrl && c.transcript?.length ? c : undefined
    })
    expect(voicemail).toMatchObject({
      type: "voicemail",
      direction: "inbound",
      from: CALLER,
      numberE164: number,
      durationSeconds: 15,
      transcript: [{ speaker: "caller", text: transcript }]
    })
    expect(local.recordingFetches()).toBeGreaterThanOrEqual(1)
    const audio = await fetch(voicemail.recordingUrl)
    expect(audio.status).toBe(200)
    // Telnyx's mp3, as downloaded from its link, served back from the blob store.
    expect(audio.headers.get("content-type")).toBe("audio/mpeg")
    expect(Buffer.from(await audio.arrayBuffer()).equals(local.recording)).toBe(true)
    // One voicemail for the call, however often Telnyx repeated itself.
    const calls = await api("/v1/api/calls", { token: live })
    expect(calls.body.calls.filter((x: any) => x.carrierCallId === call.callSessionId)).toHaveLength(1)

    // SPEC "Order of call events": ringing, (answered), completed or missed, then the recording
    // (here the voicemail), then the transcript; each once. Deliveries may arrive in any order, so
    // the order is the events' own timestamps. (The service ends a left voicemail with call.missed,
    // on every carrier; SPEC's catalog can be read to keep call.missed for calls with none.)
    const events = await until("call.transcript.completed at the receiver", () => {
      const mine = [...local.events.values()].filter((e) => e.data["carrierCallId"] === call.callSessionId)
      return mine.some((e) => e.type === "call.transcript.completed") ? mine : undefined
    })
    const types = events.map((e) => e.type)
    for (const t of new Set(types)) expect(types.filter((x) => x === t), t).toHaveLength(1)
    const rank = [
      ["call.ringing"],
      ["call.answered", "call.forwarded"],
      ["call.completed", "call.missed"],
      ["call.recording.completed", "call.voicemail.completed"],
      ["call.transcript.completed"],
      ["call.summary.completed"]
    ]
    const rankOf = (t: string) => rank.findIndex((r) => r.includes(t))
    expect(types.filter((t) => rankOf(t) < 0), "only call events of SPEC's order").toEqual([])
    expect(types).toContain("call.ringing")
    expect(types.filter((t) => t === "call.completed" || t === "call.missed")).toHaveLength(1)
    expect(types).toContain("call.voicemail.completed")
    expect(types).toContain("call.transcript.completed")
    const byRank = [...events].sort((a, b) => rankOf(a.type) - rankOf(b.type))
    for (let i = 1; i < byRank.length; i++) {
      expect(
        Date.parse(byRank[i]!.timestamp),
        `${byRank[i]!.type} after ${byRank[i - 1]!.type}`
      ).toBeGreaterThanOrEqual(Date.parse(byRank[i - 1]!.timestamp))
    }
  })

  it("7. a workspace whose only registration is a mock one cannot text live, even with its mock campaign active", async () => {
    const ws = await admin("/workspaces", { name: "Mock Only Bakery", billing: BILLING })
    expect(ws.status, ws.text).toBe(201)
    const id = ws.body.workspace.id
    const liveKey = await admin(`/workspaces/${id}/keys`, { kind: "live" })
    const testKey = await admin(`/workspaces/${id}/keys`, { kind: "test" })
    const liveB: string = liveKey.body.key.token
    const testB: string = testKey.body.key.token

    const found = await api("/v1/api/numbers/available?type=local&state=NY", { token: liveB })
    expect(found.status, found.text).toBe(200)
    const nyNumber: string = found.body.available[0].phone_number
    const bought = await api("/v1/api/numbers", { token: liveB, json: { phoneNumber: nyNumber } })
    expect(bought.status, bought.text).toBe(201)

    const filed = await api("/v1/api/messaging/registration", {
      token: testB,
      json: { business: { ...business, displayName: "Mock Only Bakery", companyName: "Mock Only Bakery LLC" } }
    })
    expect(filed.status, filed.text).toBe(201)
    expect(filed.body.mock).toBe(true)
    const active = await until("the mock campaign active", async () => {
      const m = await api("/v1/api/messaging/refresh", { token: testB, method: "POST" })
      return m.body?.messaging?.step === "campaign_active" ? m.body.messaging : undefined
    })
    expect(active.mock).toBe(true)

    const refused = await api("/v1/api/messages", { token: liveB, json: { to: ADA, body: "live?" } })
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body.error).toMatchObject({ code: "failed_precondition", message: MOCK_ONLY })
    // Nothing of it reached Telnyx: no text, no filing, no assignment.
    expect(fake.requests.filter((r) => r.path === "/v2/messages" && (r.json as any)?.from === nyNumber)).toEqual([])
    expect(fake.brands.size).toBe(1)
    expect(fake.assignments.has(nyNumber)).toBe(false)
    // The test key texts on its mock registration, simulated.
    const simulated = await api("/v1/api/messages", { token: testB, json: { to: ADA, body: "test" } })
    expect(simulated.status, simulated.text).toBe(201)
    expect(simulated.body.simulated).toBe(true)
    // A mock filing is not charged.
    const ledger = await admin(`/workspaces/${id}/ledger`)
    expect(ledger.body.charges.map((c: any) => c.kind)).toEqual(["local_number"])
  })
})
