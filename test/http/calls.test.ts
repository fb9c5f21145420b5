/**
 * Calls over HTTP in-process on real Postgres (PGlite without one) (SPEC "Endpoints" calls, "Order of call events",
 * CONTRACT "GET /calls", "POST /calls", test helper `inbound-calls`): inbound calls through the
 * helper, routed to the published agent, a teammate (app), voicemail or an outside number, their
 * events delivered to a real local receiver and verified with the official `standardwebhooks`, in
 * SPEC's order (the order the service emits them: event ids are time-ordered), one carrierCallId
 * per call; GET /calls, the transcript found by GET /messages/search, the recording served by its
 * signed URL; POST /calls (no `call.answered`, `call.completed` first, Idempotency-Key); every
 * refusal (400, 403, 404, 409). The agent is created, edited and published through `/agent`, and
 * numbers are routed by `POST /numbers/{e164}/connect` and `/disconnect`.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentConfig, weekdays } from "../../core/agent/model.ts"
import type { WorkspaceNumber } from "../../core/numbers/model.ts"
import type { makeTestApp } from "../support/app.ts"
import { ANSWERED_CALL_EVENTS } from "../support/callEvents.ts"
import { addMember } from "../support/members.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { bearer, expectError, UUID } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

// ------------------------------------------------------------------------------------ a local receiver

interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

const startReceiver = async () => {
  const got: Array<Received> = []
  const server: Server = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      got.push({ headers: req.headers, body })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  return {
    got,
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    waitFor: async (n: number, timeoutMs = 5000) => {
      const until = Date.now() + timeoutMs
      while (got.length < n) {
        if (Date.now() > until) throw new Error(`receiver got ${got.length} of ${n} requests`)
        await new Promise((r) => setTimeout(r, 5))
      }
    },
    close: () => new Promise<void>((done) => server.close(() => done()))
  }
}

interface Event {
  readonly id: string
  readonly type: string
  readonly timestamp: string
  readonly data: Record<string, any>
}

// ------------------------------------------------------------------------------------ setup

const NUMBER = "+14155550160"
const CALLER = "+14155550177"
const OUTSIDE = "+14155550188"

let app: App
let receiver: Awaited<ReturnType<typeof startReceiver>>
let key: string
let workspaceId: string
let secret: string
let agentId: string

const as = (token: string) => (path: string, init: RequestInit & { json?: unknown } = {}) => {
  const headers = new Headers(init.headers)
  headers.set("authorization", bearer(token).authorization)
  return app.fetch(`/v1/api${path}`, { ...init, headers })
}
const call = (path: string, init: RequestInit & { json?: unknown } = {}) => as(key)(path, init)

const ok = async (res: Response, status = 200) => {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  return JSON.parse(text) as any
}

const config = (patch: Partial<AgentConfig> = {}): AgentConfig => ({
  name: "Front desk",
  greeting: "Thanks for calling Luigi's, this is the assistant.",
  tone: null,
  voice: null,
  language: "en",
  instructions: "Take table bookings.",
  enabled: true,
  timezone: "UTC",
  businessHours: {},
  inHoursAction: "agent",
  offHoursAction: "voicemail",
  jobs: [{ name: "Confirm bookings", instructions: "Confirm tomorrow's bookings." }],
  ...patch
})

/** The workspace's agent through `PATCH /agent` (all of `cfg`), published unless `publish` is false; answers its id. */
const putAgent = async (token: string, cfg: AgentConfig, publish = true): Promise<string> => {
  const { agent } = await ok(await as(token)("/agent", { method: "PATCH", json: cfg }))
  if (publish) await ok(await as(token)("/agent/publish", { method: "POST" }))
  return agent.id
}

/** A number's routing through `POST /numbers/{e164}/connect` (agent) or `/disconnect` (the other modes). */
const route = async (
  e164: string,
  routing: { readonly voiceMode: WorkspaceNumber["voiceMode"]; readonly forwardTo?: string },
  token = key
) => {
  const res = routing.voiceMode === "agent"
    ? await as(token)(`/numbers/${encodeURIComponent(e164)}/connect`, { method: "POST" })
    : await as(token)(`/numbers/${encodeURIComponent(e164)}/disconnect`, {
      method: "POST",
      json: { mode: routing.voiceMode, ...(routing.forwardTo === undefined ? {} : { forwardTo: routing.forwardTo }) }
    })
  expect((await ok(res)).voiceMode).toBe(routing.voiceMode)
}

const seedNumber = async (ws: string, e164: string) =>
  ok(await app.admin(`/workspaces/${ws}/numbers`, { method: "POST", json: { e164 } }), 201)

let close: () => Promise<void>
beforeAll(async () => {
  ;({ app, close } = await makeSqlTestApp("calls_http", { webhookWorker: true }))
  receiver = await startReceiver()
  const ws = await app.createWorkspace("Calls test")
  key = ws.key
  workspaceId = ws.workspaceId
  await seedNumber(workspaceId, NUMBER)
  agentId = await putAgent(key, config())
  await route(NUMBER, { voiceMode: "agent" })
  secret =
    (await ok(await call("/webhooks", { method: "POST", json: { url: receiver.url, events: ["*"] } }), 201)).webhook
      .secret
})
afterAll(async () => {
  await close()
  await receiver.close()
})

/**
 * Runs `act`, waits for `count` deliveries, checks nothing more arrives, and answers them verified
 * by `standardwebhooks`, in the order the service emitted them (event ids are time-ordered UUIDv7).
 */
const deliveriesOf = async (count: number, act: () => Promise<void>): Promise<ReadonlyArray<Event>> => {
  const before = receiver.got.length
  await act()
  await receiver.waitFor(before + count)
  await new Promise((r) => setTimeout(r, 150))
  const got = receiver.got.slice(before)
  expect(got, "no more deliveries than expected").toHaveLength(count)
  return got
    .map((r) => {
      const id = String(r.headers["webhook-id"])
      const verified = new Webhook(secret).verify(r.body, {
        "webhook-id": id,
        "webhook-timestamp": String(r.headers["webhook-timestamp"]),
        "webhook-signature": String(r.headers["webhook-signature"])
      }) as Omit<Event, "id">
      return { id, ...verified }
    })
    .sort((a, b) => (a.id < b.id ? -1 : 1))
}

const inbound = (scenario: string, extra: Record<string, unknown> = {}) =>
  call("/test-helpers/inbound-calls", { method: "POST", json: { from: CALLER, to: NUMBER, scenario, ...extra } })

/** An inbound call through the helper and its events. */
const inboundCall = async (scenario: string, count: number, extra: Record<string, unknown> = {}) => {
  let body: any
  const events = await deliveriesOf(count, async () => {
    body = await ok(await inbound(scenario, extra), 201)
  })
  for (const e of events) expect(e.data["carrierCallId"], e.type).toBe(body.carrierCallId)
  return { call: body.call, carrierCallId: body.carrierCallId as string, events, types: events.map((e) => e.type) }
}

const CALL_FIELDS = [
  "agentId",
  "answeredBy",
  "carrierCallId",
  "conversationId",
  "createdAt",
  "direction",
  "durationSeconds",
  "endedAt",
  "from",
  "id",
  "numberE164",
  "recordingUrl",
  "status",
  "summary",
  "to",
  "transcript",
  "type"
]

// ------------------------------------------------------------------------------------ inbound

describe("inbound calls through POST /test-helpers/inbound-calls", () => {
  it("answered by the published agent: ringing, answered, completed, recording, transcript, summary, one carrierCallId; in GET /calls, searchable, recording served", async () => {
    const { call: c, carrierCallId, events, types } = await inboundCall("answered", 6, { durationSeconds: 90 })
    expect(types).toEqual(ANSWERED_CALL_EVENTS)
    expect(carrierCallId).toMatch(/^sim_call_/)
    const [ringing, answered, completed, recording, transcript, summary] = events.map((e) => e.data)
    expect(ringing).toEqual({
      numberE164: NUMBER,
      from: CALLER,
      callerName: null,
      carrierCallId,
      direction: "inbound",
      routedBy: "number"
    })
    expect(answered).toEqual({
      answeredBy: "agent",
      direction: "inbound",
      numberE164: NUMBER,
      from: CALLER,
      carrierCallId,
      agentId
    })
    const ref = {
      conversationId: c.conversationId,
      inboxId: expect.stringMatching(UUID),
      activityId: c.id,
      numberE164: NUMBER,
      carrierCallId
    }
    expect(completed).toEqual({ ...ref, answeredBy: "agent" })
    expect(recording).toEqual(ref)
    expect(transcript).toEqual(ref)
    expect(summary).toEqual({
      conversationId: c.conversationId,
      activityId: c.id,
      carrierCallId,
      summaryText: c.summary
    })

    expect(Object.keys(c).sort()).toEqual(CALL_FIELDS)
    expect(c).toMatchObject({
      type: "call",
      direction: "inbound",
      status: "completed",
      from: CALLER,
      to: NUMBER,
      numberE164: NUMBER,
      durationSeconds: 90,
      answeredBy: "agent",
      agentId,
      carrierCallId
    })
    expect(c.transcript[0]).toEqual({
      speaker: "agent",
      text: "Thanks for calling Luigi's, this is the assistant.",
      offsetSeconds: 0
    })
    expect(c.transcript.map((t: any) => t.speaker)).toEqual(["agent", "caller", "agent", "caller"])
    expect(new Date(c.endedAt).getTime() - new Date(c.createdAt).getTime()).toBe(90_000)

    // Listed first by GET /calls.
    const { calls } = await ok(await call("/calls"))
    expect(calls[0]).toEqual({ ...c, recordingUrl: expect.any(String) })

    // The recording is a WAV behind its signed URL.
    const url = new URL(c.recordingUrl)
    expect(url.pathname).toMatch(/^\/v1\/media\//)
    const audio = await app.fetch(url.pathname + url.search)
    expect(audio.status).toBe(200)
    expect(audio.headers.get("content-type")).toBe("audio/wav")
    expect(new TextDecoder().decode((await audio.arrayBuffer()).slice(0, 4))).toBe("RIFF")

    // The transcript is searchable; the thread holds the call with its transcript and a placeholder contact.
    const found = await ok(await call("/messages/search?q=booked%20table"))
    expect(found.results.map((r: any) => r.activityId)).toContain(c.id)
    const thread = await ok(await call(`/conversations/${c.conversationId}`))
    expect(thread.conversation.participants).toEqual([CALLER])
    expect(thread.conversation.unread).toBeGreaterThan(0)
    const activity = thread.activities.find((a: any) => a.id === c.id)
    expect(activity).toMatchObject({
      type: "call",
      direction: "inbound",
      callTranscript: c.transcript,
      call: { status: "completed", carrierCallId, answeredBy: "agent", agentId }
    })
    expect(activity.media).toEqual([{
      url: expect.stringContaining("/v1/media/"),
      contentType: "audio/wav",
      size: expect.any(Number),
      filename: "recording.wav"
    }])
    const contacts = await ok(await call(`/contacts?q=${encodeURIComponent("4155550177")}`))
    expect(contacts.contacts).toHaveLength(1)

    // The agent's 90 s are counted in its credit usage, rounded up to 2 minutes.
    const usage = (await ok(await call("/agent"))).creditUsage
    expect(usage.usedMinutes).toBe(2)
  })

  it("missed: ringing then missed; nothing recorded", async () => {
    const { call: c, types, events } = await inboundCall("missed", 2)
    expect(types).toEqual(["call.ringing", "call.missed"])
    expect(events[1]!.data).not.toHaveProperty("answeredBy")
    expect(c).toMatchObject({
      type: "call",
      status: "missed",
      answeredBy: null,
      recordingUrl: null,
      transcript: null,
      summary: null,
      durationSeconds: 0
    })
  })

  it("voicemail: ringing, missed, voicemail, transcript, summary; a voicemail with its audio", async () => {
    const { call: c, types, events } = await inboundCall("voicemail", 5)
    expect(types).toEqual([
      "call.ringing",
      "call.missed",
      "call.voicemail.completed",
      "call.transcript.completed",
      "call.summary.completed"
    ])
    expect(events[4]!.data).not.toHaveProperty("summaryText")
    expect(c).toMatchObject({
      type: "voicemail",
      status: "missed",
      answeredBy: null,
      recordingUrl: expect.stringContaining("/v1/media/")
    })
    expect(c.transcript.map((t: any) => t.speaker)).toEqual(["caller"])
    const found = await ok(await call("/messages/search?q=voicemail%20reservation"))
    expect(found.results.map((r: any) => [r.activityId, r.type])).toContainEqual([c.id, "voicemail"])
  })

  it("a call flow: flow.started and flow.completed before the answer, or flow.aborted then missed", async () => {
    const completed = await inboundCall("flow_completed", 8)
    expect(completed.types).toEqual([
      "call.ringing",
      "call.flow.started",
      "call.flow.completed",
      "call.answered",
      "call.completed",
      "call.recording.completed",
      "call.transcript.completed",
      "call.summary.completed"
    ])
    expect(completed.events[0]!.data["routedBy"]).toBe("flow")
    expect(completed.events[2]!.data).toMatchObject({ terminal: "astra", numberE164: NUMBER, flowVersion: 1 })
    const aborted = await inboundCall("flow_aborted", 4)
    expect(aborted.types).toEqual(["call.ringing", "call.flow.started", "call.flow.aborted", "call.missed"])
    expect(aborted.events[2]!.data).toMatchObject({ reason: "caller_hung_up", nodeId: "menu" })
  })

  it("forward: ringing, forwarded to the outside number, completed without answeredBy; nothing recorded", async () => {
    await route(NUMBER, { voiceMode: "forward", forwardTo: OUTSIDE })
    try {
      const { call: c, types, events } = await inboundCall("answered", 3)
      expect(types).toEqual(["call.ringing", "call.forwarded", "call.completed"])
      expect(events[1]!.data).toEqual({
        forwardedTo: OUTSIDE,
        numberE164: NUMBER,
        from: CALLER,
        carrierCallId: c.carrierCallId,
        direction: "inbound"
      })
      expect(events[2]!.data).not.toHaveProperty("answeredBy")
      expect(c).toMatchObject({ status: "completed", answeredBy: null, recordingUrl: null, transcript: null })
    } finally {
      await route(NUMBER, { voiceMode: "agent" })
    }
  })

  it("app: the team is rung and the first teammate with a phone (oldest first) answers; the number is named when it is the workspace's only one; no inline summary", async () => {
    await route(NUMBER, { voiceMode: "app" })
    try {
      // The oldest member has no phone: only members with one are rung.
      await addMember(app.runtime, workspaceId, null)
      const first = await addMember(app.runtime, workspaceId, "+14155550191")
      await addMember(app.runtime, workspaceId, "+14155550192")
      const { call: c, types, events } = await inboundCall("answered", 6)
      expect(types).toEqual(ANSWERED_CALL_EVENTS)
      expect(events[1]!.data).toEqual({
        answeredBy: "member",
        direction: "inbound",
        numberE164: NUMBER,
        from: CALLER,
        carrierCallId: c.carrierCallId,
        memberUid: first.id
      })
      expect(events[2]!.data["answeredBy"]).toBe("member")
      expect(events[5]!.data).not.toHaveProperty("summaryText")
      expect(c).toMatchObject({ answeredBy: "member", agentId: null, status: "completed" })
      expect(c.transcript[0].speaker).toBe("member")
      const detail = await ok(await call(`/conversations/${c.conversationId}`))
      expect(detail.activities.find((a: any) => a.id === c.id).call.memberUid).toBe(first.id)
    } finally {
      await route(NUMBER, { voiceMode: "agent" })
    }
  })

  it("voicemail routing takes a voicemail for an answered scenario; an agent routed off hours follows offHoursAction", async () => {
    await route(NUMBER, { voiceMode: "voicemail" })
    try {
      const { call: c, types } = await inboundCall("answered", 5)
      expect(types).toEqual([
        "call.ringing",
        "call.missed",
        "call.voicemail.completed",
        "call.transcript.completed",
        "call.summary.completed"
      ])
      expect(c.type).toBe("voicemail")
    } finally {
      await route(NUMBER, { voiceMode: "agent" })
    }
    // Open on no day at all: always off hours, so the agent's offHoursAction (voicemail) applies.
    await putAgent(
      key,
      config({
        businessHours: { monday: [], tuesday: [], wednesday: [], thursday: [], friday: [], saturday: [], sunday: [] }
      })
    )
    try {
      const { call: c } = await inboundCall("answered", 5)
      expect(c).toMatchObject({ type: "voicemail", agentId: null })
    } finally {
      await putAgent(key, config())
    }
  })

  it("refusals: a live key 403, a number of another workspace or none 404, a bad scenario or field 400", async () => {
    const live = await app.createKey(workspaceId, { kind: "live" })
    await expectError(
      await as(live.token)("/test-helpers/inbound-calls", {
        method: "POST",
        json: { from: CALLER, to: NUMBER, scenario: "answered" }
      }),
      403,
      "permission_denied"
    )
    const other = await app.createWorkspace("Other calls workspace")
    await expectError(
      await as(other.key)("/test-helpers/inbound-calls", {
        method: "POST",
        json: { from: CALLER, to: NUMBER, scenario: "answered" }
      }),
      404,
      "not_found"
    )
    await expectError(await inbound("answered", { to: "+14155550999" }), 404, "not_found")
    await expectError(await inbound("hung_up"), 400, "invalid_argument")
    await expectError(await inbound("answered", { durationSeconds: 0 }), 400, "invalid_argument")
    expect((await expectError(await inbound("answered", { colour: "red" }), 400, "invalid_argument")).message)
      .toContain("colour")
    await expectError(await inbound("answered", { from: "not a phone" }), 400, "invalid_argument")
    // The other workspace sees none of these calls.
    expect((await ok(await as(other.key)("/calls"))).calls).toEqual([])
  })
})

// ------------------------------------------------------------------------------------ withheld callers

describe("a withheld caller (inbound-calls `from` null)", () => {
  it("answered by the agent, then a voicemail: every event and call says from null; both in the number's one withheld thread, with no contact; texting it is 409", async () => {
    const contactsBefore = (await ok(await call("/contacts?limit=200"))).contacts.length
    const answered = await inboundCall("answered", 6, { from: null })
    expect(answered.types).toEqual(ANSWERED_CALL_EVENTS)
    const carrierCallId = answered.carrierCallId
    expect(answered.events[0]!.data).toEqual({
      numberE164: NUMBER,
      from: null,
      callerName: null,
      carrierCallId,
      direction: "inbound",
      routedBy: "number"
    })
    expect(answered.events[1]!.data).toEqual({
      answeredBy: "agent",
      direction: "inbound",
      numberE164: NUMBER,
      from: null,
      carrierCallId,
      agentId
    })
    expect(answered.events[2]!.data).toMatchObject({
      conversationId: answered.call.conversationId,
      activityId: answered.call.id,
      answeredBy: "agent"
    })
    expect(answered.call).toMatchObject({
      type: "call",
      status: "completed",
      from: null,
      to: NUMBER,
      answeredBy: "agent",
      agentId
    })

    const voicemail = await inboundCall("voicemail", 5, { from: null })
    expect(voicemail.types).toEqual([
      "call.ringing",
      "call.missed",
      "call.voicemail.completed",
      "call.transcript.completed",
      "call.summary.completed"
    ])
    expect(voicemail.events[0]!.data["from"]).toBeNull()
    expect(voicemail.call).toMatchObject({ type: "voicemail", status: "missed", from: null, to: NUMBER })
    expect(voicemail.call.conversationId).toBe(answered.call.conversationId)

    // GET /calls lists both with from null.
    const { calls } = await ok(await call("/calls?limit=200"))
    for (const c of [answered.call, voicemail.call]) {
      expect(calls.find((x: any) => x.id === c.id)).toMatchObject({
        from: null,
        to: NUMBER,
        conversationId: c.conversationId
      })
    }

    // The thread: listed, named, no participants and no contact; the activities' call objects say from null.
    const id = answered.call.conversationId
    const listed = (await ok(await call("/conversations?limit=100"))).conversations.find((t: any) => t.id === id)
    expect(listed).toMatchObject({
      numberE164: NUMBER,
      participants: [],
      contactName: "Withheld caller",
      unread: 2,
      preview: "Voicemail"
    })
    const thread = await ok(await call(`/conversations/${id}`))
    expect(thread.activities.map((a: any) => [a.id, a.type, a.call.from, a.call.to])).toEqual([
      [answered.call.id, "call", null, NUMBER],
      [voicemail.call.id, "voicemail", null, NUMBER]
    ])
    expect((await ok(await call("/contacts?limit=200"))).contacts).toHaveLength(contactsBefore)
    const found = await ok(await call("/messages/search?q=voicemail%20reservation&limit=100"))
    expect(found.results.find((r: any) => r.activityId === voicemail.call.id)).toMatchObject({
      conversationId: id,
      participants: [],
      numberE164: NUMBER
    })

    // Nobody to text: a clear 409, nothing stored, no event.
    const events = await deliveriesOf(0, async () => {
      const refused = await expectError(
        await call("/messages", { method: "POST", json: { conversationId: id, body: "Sorry we missed you" } }),
        409,
        "failed_precondition"
      )
      expect(refused.message).toContain("conversationId: this conversation is with withheld callers")
    })
    expect(events).toEqual([])
    expect((await ok(await call(`/conversations/${id}`))).activities).toHaveLength(2)
  })

  it("a number calling itself is a 400 naming from, however it is written", async () => {
    for (const from of [NUMBER, "(415) 555-0160"]) {
      expect((await expectError(await inbound("answered", { from }), 400, "invalid_argument")).message).toBe(
        "from: must not be the number called (to)"
      )
    }
  })
})

// ------------------------------------------------------------------------------------ routing rules

describe("routing rules", () => {
  const workspaceWith = async (e164: string, cfg: AgentConfig) => {
    const ws = await app.createWorkspace(`Routing ${e164}`)
    await seedNumber(ws.workspaceId, e164)
    await putAgent(ws.key, cfg)
    await route(e164, { voiceMode: "agent" }, ws.key)
    const ring = async () =>
      (await ok(
        await as(ws.key)("/test-helpers/inbound-calls", {
          method: "POST",
          json: { from: CALLER, to: e164, scenario: "answered" }
        }),
        201
      )).call
    return { ...ws, ring }
  }

  it("an agent action forward takes a voicemail, even after the number forwarded (connect clears forwardTo)", async () => {
    const e164 = "+14155550163"
    const ws = await workspaceWith(e164, config({ inHoursAction: "forward" }))
    expect(await ws.ring()).toMatchObject({
      type: "voicemail",
      status: "missed",
      answeredBy: null,
      agentId: null,
      recordingUrl: expect.any(String)
    })
    // A forwardTo set while forwarding does not outlive the forward mode.
    await route(e164, { voiceMode: "forward", forwardTo: OUTSIDE }, ws.key)
    await route(e164, { voiceMode: "agent" }, ws.key)
    expect(await ws.ring()).toMatchObject({ type: "voicemail", status: "missed", answeredBy: null })
  })

  it("businessHours.timezone, when set, is the zone the hours are read in, whatever the agent's timezone; without it, the agent's", async () => {
    // Two zones 12 hours apart. The hours open an hour either side of now in one of them (the one
    // where now is between 02:00 and 22:00, so the range stays in the day); in the other it is then
    // 12 hours off, closed.
    const utcMinute = Math.floor(Date.now() / 60_000) % 1440
    const zones = [{ zone: "Etc/GMT-6", minute: (utcMinute + 360) % 1440 }, {
      zone: "Etc/GMT+6",
      minute: (utcMinute + 1080) % 1440
    }]
    const hoursZone = zones.find((z) => z.minute >= 120 && z.minute <= 1320)!
    const agentZone = zones.find((z) => z !== hoursZone)!
    const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`
    const week = Object.fromEntries(
      weekdays.map((d) => [d, [{ start: hhmm(hoursZone.minute - 60), end: hhmm(hoursZone.minute + 60) }]])
    )

    const e164 = "+14155550164"
    const ws = await workspaceWith(
      e164,
      config({ timezone: agentZone.zone, businessHours: { timezone: hoursZone.zone, ...week } })
    )
    expect(await ws.ring()).toMatchObject({ type: "call", answeredBy: "agent" })
    // The same hours without their own zone are read in the agent's: off hours, voicemail.
    await putAgent(ws.key, config({ timezone: agentZone.zone, businessHours: week }))
    expect(await ws.ring()).toMatchObject({ type: "voicemail", agentId: null })
    // The agent's zone made the hours' zone: in hours again.
    await putAgent(ws.key, config({ timezone: hoursZone.zone, businessHours: week }))
    expect(await ws.ring()).toMatchObject({ type: "call", answeredBy: "agent" })
  })
})

// ------------------------------------------------------------------------------------ GET /calls

describe("GET /calls", () => {
  it("newest first, limit 1 to 200 (default 50), scope conversations:read", async () => {
    const all = (await ok(await call("/calls"))).calls
    expect(all.length).toBeGreaterThan(3)
    const times = all.map((c: any) => c.createdAt)
    expect([...times].sort().reverse()).toEqual(times)
    const two = (await ok(await call("/calls?limit=2"))).calls
    expect(two.map((c: any) => c.id)).toEqual(all.slice(0, 2).map((c: any) => c.id))
    await expectError(await call("/calls?limit=0"), 400, "invalid_argument")
    await expectError(await call("/calls?limit=201"), 400, "invalid_argument")
    const narrow = await app.createKey(workspaceId, { scopes: ["calls:place"] })
    expect((await expectError(await as(narrow.token)("/calls"), 403, "permission_denied")).message).toContain(
      "conversations:read"
    )
  })
})

// ------------------------------------------------------------------------------------ POST /calls

describe("POST /calls", () => {
  it("a test key: simulated, answered by the callee with the agent, events completed, recording, transcript (no answered); Idempotency-Key replays", async () => {
    let body: any
    const events = await deliveriesOf(3, async () => {
      body = await ok(
        await call("/calls", {
          method: "POST",
          headers: { "idempotency-key": "call-1" },
          json: { to: "+1 415 555 0199", job: "Confirm bookings" }
        }),
        201
      )
    })
    expect(events.map((e) => e.type)).toEqual([
      "call.completed",
      "call.recording.completed",
      "call.transcript.completed"
    ])
    const c = body.call
    expect(body).toEqual({ call: expect.any(Object), conversationId: c.conversationId, simulated: true })
    expect(c).toMatchObject({
      type: "call",
      direction: "outbound",
      status: "completed",
      from: NUMBER,
      to: "+14155550199",
      numberE164: NUMBER,
      answeredBy: "agent",
      agentId,
      durationSeconds: 45
    })
    expect(c.transcript.map((t: any) => t.speaker)).toEqual(["agent", "callee", "agent", "callee"])
    expect(c.summary).toContain("Confirm bookings")
    for (const e of events) {
      expect(e.data).toMatchObject({
        carrierCallId: c.carrierCallId,
        conversationId: c.conversationId,
        activityId: c.id,
        numberE164: NUMBER
      })
    }
    expect(events[0]!.data["answeredBy"]).toBe("agent")

    // The same key replays the answer and sends nothing more.
    const replay = await call("/calls", {
      method: "POST",
      headers: { "idempotency-key": "call-1" },
      json: { to: "+1 415 555 0199", job: "Confirm bookings" }
    })
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect(await ok(replay, 201)).toEqual(body)
    await new Promise((r) => setTimeout(r, 150))
    expect((await ok(await call("/calls?limit=200"))).calls.filter((x: any) => x.direction === "outbound"))
      .toHaveLength(1)
  })

  it("a test key's call uses none of the agent's minutes; a call to a premium-rate number or to the workspace's own number is 400", async () => {
    const before = (await ok(await call("/agent"))).creditUsage.usedMinutes
    await ok(await call("/calls", { method: "POST", json: { to: "+14155550197" } }), 201)
    expect((await ok(await call("/agent"))).creditUsage.usedMinutes).toBe(before)
    for (const to of ["+19005550123", "(976) 555-0123"]) {
      expect(
        (await expectError(await call("/calls", { method: "POST", json: { to } }), 400, "invalid_argument")).message
      ).toContain("to: premium-rate numbers")
    }
    expect(
      (await expectError(await call("/calls", { method: "POST", json: { to: NUMBER } }), 400, "invalid_argument"))
        .message
    ).toBe("to: is one of this workspace's own numbers")
  })

  it("a live key dials the simulated voice carrier: not `simulated`, from the number named", async () => {
    const live = await app.createKey(workspaceId, { kind: "live" })
    const body = await ok(
      await as(live.token)("/calls", {
        method: "POST",
        json: { to: "+14155550198", from: NUMBER, instructions: "Ask about the party of six." }
      }),
      201
    )
    expect(body).not.toHaveProperty("simulated")
    expect(body.call).toMatchObject({
      direction: "outbound",
      status: "completed",
      carrierCallId: expect.stringMatching(/^sim_call_/),
      recordingUrl: expect.any(String)
    })
    expect(body.call.summary).toContain("party of six")
  })

  it("refusals: 403 without calls:place, 400 bad to, unknown job or field, 404 a from not in the workspace, 409 no published agent or no active number", async () => {
    const narrow = await app.createKey(workspaceId, { scopes: ["conversations:read"] })
    expect(
      (await expectError(
        await as(narrow.token)("/calls", { method: "POST", json: { to: CALLER } }),
        403,
        "permission_denied"
      )).message
    ).toContain("calls:place")
    await expectError(await call("/calls", { method: "POST", json: { to: "12" } }), 400, "invalid_argument")
    expect(
      (await expectError(
        await call("/calls", { method: "POST", json: { to: CALLER, job: "Sell timeshares" } }),
        400,
        "invalid_argument"
      )).message
    ).toContain("job")
    expect(
      (await expectError(
        await call("/calls", { method: "POST", json: { to: CALLER, colour: "red" } }),
        400,
        "invalid_argument"
      )).message
    ).toContain("colour")
    await expectError(
      await call("/calls", { method: "POST", json: { to: CALLER, from: "+14155550111" } }),
      404,
      "not_found"
    )

    // No agent, a draft never published, a disabled one: 409.
    const other = await app.createWorkspace("No agent")
    await seedNumber(other.workspaceId, "+14155550161")
    const place = () => as(other.key)("/calls", { method: "POST", json: { to: CALLER } })
    expect((await expectError(await place(), 409, "failed_precondition")).message).toContain("Publish an agent first")
    await putAgent(other.key, config(), false)
    expect((await expectError(await place(), 409, "failed_precondition")).message).toContain("Publish an agent first")
    await putAgent(other.key, config({ enabled: false }))
    await expectError(await place(), 409, "failed_precondition")

    // A published agent but no number.
    const bare = await app.createWorkspace("No number")
    await putAgent(bare.key, config())
    expect(
      (await expectError(
        await as(bare.key)("/calls", { method: "POST", json: { to: CALLER } }),
        409,
        "failed_precondition"
      )).message
    ).toContain("no active phone number")
  })

  it("an unpublished agent answers no inbound call: the number rings the team; with no teammate's phone to ring, the caller leaves a voicemail", async () => {
    const ws = await app.createWorkspace("Draft agent")
    await seedNumber(ws.workspaceId, "+14155550162")
    await putAgent(ws.key, config(), false)
    await route("+14155550162", { voiceMode: "agent" }, ws.key)
    const ring = async () =>
      (await ok(
        await as(ws.key)("/test-helpers/inbound-calls", {
          method: "POST",
          json: { from: CALLER, to: "+14155550162", scenario: "answered" }
        }),
        201
      )).call
    await addMember(app.runtime, ws.workspaceId, null)
    expect(await ring()).toMatchObject({
      type: "voicemail",
      status: "missed",
      answeredBy: null,
      recordingUrl: expect.any(String)
    })
    await addMember(app.runtime, ws.workspaceId, "+14155550193")
    expect(await ring()).toMatchObject({ type: "call", answeredBy: "member", agentId: null })
  })
})
