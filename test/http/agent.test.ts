/**
 * SPEC "Agent" and "Number `voiceMode`" through the HTTP API, on real Postgres when the suite has one
 * (PGlite otherwise): the first PATCH creates the agent with CONTRACT's defaults, later ones change
 * only what they send, publish snapshots the draft (an edit afterwards leaves the live configuration
 * alone), every refusal with its status, the credit usage of the month, connect and disconnect as
 * GET /numbers shows them, and the `agent:manage` scope.
 */
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentStore } from "../../core/agent/store.ts"
import { newActivity } from "../../core/conversations/model.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import type { makeTestApp } from "../support/app.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { bearer, expectError, expectOk, UUID } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let app: App
let close: () => Promise<void>
beforeAll(async () => {
  ;({ app, close } = await makeSqlTestApp("agent_http"))
}, 60_000)
afterAll(() => close())

let seq = 0
/** A workspace with an all-scope key and one number of its own. */
const workspace = async () => {
  const { workspaceId, key } = await app.createWorkspace("Agent")
  const e164 = `+1628555${String(1000 + ++seq).padStart(4, "0")}`
  const res = await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164 } })
  expect(res.status, await res.clone().text()).toBe(201)
  return { workspaceId, key, e164 }
}

const call = (key: string, method: string, path: string, json?: unknown) =>
  app.fetch(`/v1/api${path}`, { method, headers: bearer(key), ...(json === undefined ? {} : { json }) })
const ok = expectOk
const getAgent = async (key: string) => ok(await call(key, "GET", "/agent"))
const patch = async (key: string, json: unknown) => ok(await call(key, "PATCH", "/agent", json))
const numbers = async (key: string) =>
  (await ok(await call(key, "GET", "/numbers"))).numbers as Array<Record<string, unknown>>
const stored = (workspaceId: string) =>
  app.runtime.runPromise(Effect.flatMap(AgentStore, (s) => s.get(workspaceId))).then(Option.getOrThrow)
const enc = (e164: string) => encodeURIComponent(e164)

const defaults = {
  name: "Agent",
  greeting: null,
  tone: null,
  voice: null,
  language: null,
  instructions: null,
  status: "draft",
  enabled: true,
  timezone: "UTC",
  businessHours: {},
  inHoursAction: "agent",
  offHoursAction: "voicemail",
  jobs: []
}

describe("GET, PATCH /agent and POST /agent/publish", () => {
  it("no agent yet: GET answers null with the month's usage, publish is 409 Create an agent first", async () => {
    const { key } = await workspace()
    const now = new Date()
    expect(await getAgent(key)).toEqual({
      agent: null,
      creditUsage: {
        periodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
        periodEnd: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
        includedMinutes: 100,
        usedMinutes: 0
      }
    })
    const refused = await expectError(await call(key, "POST", "/agent/publish"), 409, "failed_precondition")
    expect(refused.message).toBe("Create an agent first")
  })

  it("the first PATCH creates the agent with CONTRACT's defaults; later ones change only what they send; jobs are replaced wholesale", async () => {
    const { key } = await workspace()
    const { agent } = await patch(key, {})
    expect(agent.id).toMatch(UUID)
    expect(Object.keys(agent)).toEqual([
      "id",
      ...Object.keys(defaults).slice(0, 6),
      "status",
      ...Object.keys(defaults).slice(7)
    ])
    expect(agent).toEqual({ id: agent.id, ...defaults })
    const jobs = [{ name: "book", instructions: "Offer the next slot." }, {
      name: "quote",
      instructions: "Ask for the address."
    }]
    const edited = await patch(key, {
      name: "Front desk",
      greeting: "Hello!",
      timezone: "America/New_York",
      businessHours: { monday: [{ start: "09:00", end: "12:00" }, { start: "12:00", end: "17:00" }] },
      jobs
    })
    expect(edited.agent).toEqual({
      ...defaults,
      id: agent.id,
      name: "Front desk",
      greeting: "Hello!",
      timezone: "America/New_York",
      businessHours: { monday: [{ start: "09:00", end: "12:00" }, { start: "12:00", end: "17:00" }] },
      jobs
    })
    const again = await patch(key, { greeting: null, jobs: [jobs[1]], offHoursAction: "forward", enabled: false })
    expect(again.agent).toEqual({
      ...edited.agent,
      greeting: null,
      jobs: [jobs[1]],
      offHoursAction: "forward",
      enabled: false
    })
    expect((await getAgent(key)).agent).toEqual(again.agent)
  })

  it("publish snapshots the draft; an edit afterwards is draft again and leaves the published configuration alone", async () => {
    const { key, workspaceId } = await workspace()
    await patch(key, { name: "Live name", tone: "calm" })
    const published = (await ok(await call(key, "POST", "/agent/publish"))).agent
    expect(published.status).toBe("published")
    expect((await getAgent(key)).agent.status).toBe("published")
    const snapshot = await stored(workspaceId)
    expect(snapshot.published).toEqual(snapshot.draft)
    expect(snapshot.publishedAt).not.toBeNull()

    const edited = (await patch(key, { name: "Draft name" })).agent
    expect(edited).toEqual({ ...published, name: "Draft name", status: "draft" })
    const after = await stored(workspaceId)
    expect(after.published).toEqual(snapshot.published)
    expect(after.publishedAt).toBe(snapshot.publishedAt)
    expect(after.draft.name).toBe("Draft name")
    // the rule: published exactly when the draft is the live configuration
    expect((await patch(key, { name: "Live name" })).agent.status).toBe("published")
    expect((await patch(key, { name: "Draft name" })).agent.status).toBe("draft")
    const republished = (await ok(await call(key, "POST", "/agent/publish"))).agent
    expect(republished).toEqual({ ...edited, status: "published" })
    expect((await stored(workspaceId)).published?.name).toBe("Draft name")
  })

  it("every invalid PATCH is a 400 naming the field, and changes nothing", async () => {
    const { key } = await workspace()
    const { agent } = await patch(key, { name: "Kept" })
    const cases: Array<[unknown, string]> = [
      [{ colour: "red" }, "colour: unknown field"],
      [{ timezone: "Mars/Olympus" }, "timezone: must be an IANA time zone"],
      [{ timezone: "" }, "timezone: must be an IANA time zone"],
      [{ businessHours: { timezone: "Nowhere/City" } }, "businessHours.timezone: must be an IANA time zone"],
      [{ businessHours: { monday: [{ start: "9:00", end: "17:00" }] } }, "businessHours.monday.0.start"],
      [{ businessHours: { monday: [{ start: "09:00", end: "24:00" }] } }, "businessHours.monday.0.end"],
      [
        { businessHours: { monday: [{ start: "17:00", end: "09:00" }] } },
        "businessHours.monday: 17:00-09:00: start must be before end"
      ],
      [
        { businessHours: { monday: [{ start: "09:00", end: "09:00" }] } },
        "businessHours.monday: 09:00-09:00: start must be before end"
      ],
      [
        { businessHours: { friday: [{ start: "12:00", end: "18:00" }, { start: "09:00", end: "12:30" }] } },
        "businessHours.friday: 09:00-12:30 and 12:00-18:00 overlap"
      ],
      [{ businessHours: { funday: [] } }, "businessHours.funday: unknown field"],
      [
        { businessHours: { monday: [{ start: "09:00", end: "17:00", lunch: true }] } },
        "businessHours.monday.0.lunch: unknown field"
      ],
      [{ name: "" }, "name"],
      [{ name: "x".repeat(101) }, "name"],
      [{ greeting: "a\u0000b" }, "greeting: must not contain NUL characters"],
      [{ instructions: "x".repeat(10_001) }, "instructions"],
      [{ enabled: "yes" }, "enabled: expected boolean"],
      [{ inHoursAction: "hang_up" }, "inHoursAction"],
      [{ jobs: Array.from({ length: 21 }, (_, i) => ({ name: `job${i}`, instructions: "" })) }, "jobs"],
      [{ jobs: [{ name: "a", instructions: "" }, { name: "a", instructions: "" }] }, "jobs: job names must be unique"],
      [{ jobs: [{ name: "a" }] }, "jobs.0.instructions: is required"],
      [{ jobs: [{ name: "a", instructions: "", extra: 1 }] }, "jobs.0.extra: unknown field"],
      [[], "body"]
    ]
    for (const [body, message] of cases) {
      const error = await expectError(await call(key, "PATCH", "/agent", body), 400, "invalid_argument")
      expect(error.message, JSON.stringify(body).slice(0, 80)).toContain(message)
    }
    expect((await getAgent(key)).agent).toEqual(agent)
  })

  it("creditUsage counts this month's calls the agent answered, each rounded up to a minute", async () => {
    const { key, workspaceId } = await workspace()
    const now = new Date()
    const thisMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1, 0, 0, 1)).toISOString()
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0, 23, 59, 59)).toISOString()
    const activity = (createdAt: string, call: Record<string, unknown>) =>
      newActivity({
        id: crypto.randomUUID(),
        workspaceId,
        conversationId: crypto.randomUUID(),
        type: "call",
        direction: "inbound",
        call,
        createdAt
      })
    await app.runtime.runPromise(
      Effect.flatMap(ConversationStore, (s) =>
        Effect.forEach(
          [
            activity(thisMonth, { answeredBy: "agent", durationSeconds: 61 }),
            activity(thisMonth, { answeredBy: "agent", durationSeconds: 30 }),
            activity(thisMonth, { answeredBy: "member", durationSeconds: 600 }),
            activity(lastMonth, { answeredBy: "agent", durationSeconds: 600 })
          ],
          (a) => s.insertActivity(a)
        ))
    )
    expect((await getAgent(key)).creditUsage.usedMinutes).toBe(3)
  })
})

describe("POST /numbers/{e164}/connect and /disconnect", () => {
  it("connect: 404 for a number not in the workspace, 409 before an agent exists, then voiceMode agent with the agent's id", async () => {
    const { key, e164 } = await workspace()
    const other = await workspace()
    await expectError(await call(key, "POST", `/numbers/${enc(other.e164)}/connect`), 404, "not_found")
    await expectError(await call(key, "POST", `/numbers/${enc("+16285550000")}/connect`), 404, "not_found")
    await expectError(await call(key, "POST", "/numbers/not-a-number/connect"), 400, "invalid_argument")
    expect(
      (await expectError(await call(key, "POST", `/numbers/${enc(e164)}/connect`), 409, "failed_precondition")).message
    ).toBe("Create an agent first")
    const { agent } = await patch(key, {})
    expect(await ok(await call(key, "POST", `/numbers/${enc(e164)}/connect`))).toEqual({ ok: true, voiceMode: "agent" })
    expect(await numbers(key)).toEqual([
      expect.objectContaining({ e164, voiceMode: "agent", agentId: agent.id, forwardTo: null })
    ])
    // the other workspace's number is untouched
    expect(await numbers(other.key)).toEqual([
      expect.objectContaining({ e164: other.e164, voiceMode: "app", agentId: null })
    ])
  })

  it("disconnect: app by default (no body), voicemail, or forward to forwardTo; each clears agentId", async () => {
    const { key, e164 } = await workspace()
    await patch(key, {})
    const connect = async () =>
      expect((await ok(await call(key, "POST", `/numbers/${enc(e164)}/connect`))).voiceMode).toBe("agent")
    const disconnect = (json?: unknown) => call(key, "POST", `/numbers/${enc(e164)}/disconnect`, json)
    const routing = async () => {
      const [n] = await numbers(key)
      return [n?.["voiceMode"], n?.["agentId"], n?.["forwardTo"]]
    }

    await connect()
    expect(await ok(await disconnect())).toEqual({ ok: true, voiceMode: "app" })
    expect(await routing()).toEqual(["app", null, null])
    await connect()
    expect(await ok(await disconnect({ mode: "voicemail" }))).toEqual({ ok: true, voiceMode: "voicemail" })
    expect(await routing()).toEqual(["voicemail", null, null])
    await connect()
    expect(await ok(await disconnect({ mode: "forward", forwardTo: "(415) 555-0199" }))).toEqual({
      ok: true,
      voiceMode: "forward"
    })
    expect(await routing()).toEqual(["forward", null, "+14155550199"])
    // connecting again clears forwardTo: SPEC sets it only in forward mode
    await connect()
    expect([(await routing())[0], (await routing())[2]]).toEqual(["agent", null])
    expect(await ok(await disconnect({}))).toEqual({ ok: true, voiceMode: "app" })
    expect(await routing()).toEqual(["app", null, null])
  })

  it("disconnect refusals: forwardTo missing, malformed, misplaced or the number itself (400 naming it), bad mode, unknown field, another workspace's number (404)", async () => {
    const { key, e164 } = await workspace()
    const other = await workspace()
    const disconnect = (json: unknown, number = e164) => call(key, "POST", `/numbers/${enc(number)}/disconnect`, json)
    const cases: Array<[unknown, string]> = [
      [{ mode: "forward" }, "forwardTo: is required when mode is forward"],
      [{ mode: "forward", forwardTo: "not a phone" }, "forwardTo"],
      [{ mode: "voicemail", forwardTo: "+14155550199" }, "forwardTo: only with mode forward"],
      [{ forwardTo: "+14155550199" }, "forwardTo: only with mode forward"],
      [{ mode: "forward", forwardTo: e164 }, "forwardTo: must not be the number itself"],
      [{ mode: "forward", forwardTo: "+19005550123" }, "forwardTo: premium-rate numbers"],
      [{ mode: "forward", forwardTo: "(976) 555-0123" }, "forwardTo: premium-rate numbers"],
      [{ mode: "agent" }, "mode"],
      [{ mode: "app", colour: "red" }, "colour: unknown field"],
      ["app", "body"]
    ]
    for (const [body, message] of cases) {
      const error = await expectError(await disconnect(body), 400, "invalid_argument")
      expect(error.message, JSON.stringify(body)).toContain(message)
      // the optional body's null alternative adds nothing to the fields' own issues
      expect(error.message).not.toContain("expected null")
    }
    await expectError(await disconnect({ mode: "voicemail" }, other.e164), 404, "not_found")
    expect(await numbers(other.key)).toEqual([expect.objectContaining({ voiceMode: "app" })])
    expect(await numbers(key)).toEqual([expect.objectContaining({ voiceMode: "app", agentId: null, forwardTo: null })])
  })
})

describe("the OpenAPI document", () => {
  it("documents connect without a body and disconnect's body as optional", async () => {
    const doc = await ok(await app.fetch("/v1/api/openapi.json"))
    expect(doc.paths["/v1/api/numbers/{e164}/connect"].post.requestBody).toBeUndefined()
    expect(doc.paths["/v1/api/numbers/{e164}/disconnect"].post.requestBody.required).toBe(false)
    expect(doc.paths["/v1/api/agent"].patch.requestBody.required).toBe(true)
  })
})

describe("scope agent:manage", () => {
  it("every agent route is 403 without it, and works with it alone", async () => {
    const { workspaceId, e164 } = await workspace()
    const without =
      (await app.createKey(workspaceId, { scopes: ["numbers:read", "numbers:manage", "calls:place"] })).token
    const only = (await app.createKey(workspaceId, { scopes: ["agent:manage"] })).token
    const routes: Array<[string, string, unknown?]> = [
      ["GET", "/agent"],
      ["PATCH", "/agent", { name: "x" }],
      ["POST", "/agent/publish"],
      ["POST", `/numbers/${enc(e164)}/connect`],
      ["POST", `/numbers/${enc(e164)}/disconnect`, { mode: "voicemail" }]
    ]
    for (const [method, path, json] of routes) {
      const error = await expectError(await call(without, method, path, json), 403, "permission_denied")
      expect(error.message).toBe("This key lacks the scope agent:manage")
    }
    expect((await getAgent(only)).agent).toBeNull()
    for (const [method, path, json] of routes) {
      expect((await call(only, method, path, json)).status, `${method} ${path}`).toBe(200)
    }
    expect((await getAgent(only)).agent).toMatchObject({ name: "x", status: "published" })
  })
})
