/**
 * SPEC "Webhook endpoint" and "Events", CONTRACT.md webhook bodies and retries, over HTTP in-process:
 * every route's status and body, validation, scope and tenant isolation, the OpenAPI `webhooks`
 * section, and real deliveries to a local receiver verified by the official `standardwebhooks`.
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as OutboundHttp from "../../adapters/net/http.ts"
import * as Sender from "../../adapters/webhooks/sender.ts"
import { HostResolver, layerOutboundGuard } from "../../core/egress/guard.ts"
import { catalog, eventTypes } from "../../core/events/catalog.ts"
import { makeTestApp } from "../support/app.ts"
import { type Receiver, startReceiver, verify } from "../support/webhooks.ts"
import { bearer, expectError, UUID } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

// ------------------------------------------------------------------------------------ setup

let app: App
let receiver: Receiver
beforeAll(async () => {
  app = await makeTestApp()
  receiver = await startReceiver()
})
afterAll(async () => {
  await app.close()
  await receiver.close()
})

let key: string
let workspaceId: string
beforeEach(async () => {
  const ws = await app.createWorkspace("Webhooks test")
  key = ws.key
  workspaceId = ws.workspaceId
  receiver.answer = () => ({ status: 200 })
})

const callWith = (a: App, token: string) => (path: string, init: RequestInit & { json?: unknown } = {}) => {
  const headers = new Headers(init.headers)
  headers.set("authorization", bearer(token).authorization)
  return a.fetch(`/v1/api${path}`, { ...init, headers })
}
const call = (path: string, init: RequestInit & { json?: unknown } = {}) => callWith(app, key)(path, init)

const ok = async (res: Response, status = 200) => {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  return JSON.parse(text) as any
}

const create = async (json: Record<string, unknown> = {}) =>
  (await ok(await call("/webhooks", { method: "POST", json: { url: receiver.url(), events: ["*"], ...json } }), 201))
    .webhook

const ENDPOINT_FIELDS = ["apiVersion", "createdAt", "events", "id", "label", "status", "url"]
const DELIVERY_FIELDS = [
  "attempts",
  "createdAt",
  "error",
  "eventId",
  "eventType",
  "id",
  "lastAttemptAt",
  "nextAttemptAt",
  "responseStatus",
  "status"
]

/** The catalog of SPEC "Events", in the SPEC's order. */
/** SPEC's events, then CONTRACT's opt-out events. */
const SPEC_EVENTS = [
  "message.received",
  "message.delivered",
  "message.failed",
  "call.ringing",
  "call.answered",
  "call.forwarded",
  "call.completed",
  "call.missed",
  "call.recording.completed",
  "call.voicemail.completed",
  "call.transcript.completed",
  "call.summary.completed",
  "call.flow.started",
  "call.flow.completed",
  "call.flow.aborted",
  "contact.updated",
  "contact.deleted",
  "contact.opted_out",
  "contact.opted_in",
  "broadcast.completed"
]

// ------------------------------------------------------------------------------------ routes

describe("webhook endpoints: routes and bodies", () => {
  it("POST /webhooks answers 201 {webhook} with the secret, once", async () => {
    const res = await call("/webhooks", {
      method: "POST",
      json: { url: receiver.url("/a"), events: ["contact.updated", "contact.deleted"] }
    })
    const body = await ok(res, 201)
    expect(Object.keys(body)).toEqual(["webhook"])
    const w = body.webhook
    expect(Object.keys(w).sort()).toEqual([...ENDPOINT_FIELDS, "secret"].sort())
    expect(w).toMatchObject({
      url: receiver.url("/a"),
      events: ["contact.updated", "contact.deleted"],
      label: null,
      status: "enabled",
      apiVersion: null
    })
    expect(w.id).toMatch(UUID)
    expect(Number.isNaN(Date.parse(w.createdAt))).toBe(false)
    expect(w.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const full = await create({ label: "CRM sync", apiVersion: "2026-08-17" })
    expect(full).toMatchObject({ label: "CRM sync", apiVersion: "2026-08-17", events: ["*"] })
    expect(full.secret).not.toBe(w.secret)
  })

  it("GET /webhooks lists {webhooks} oldest first, never with secrets", async () => {
    expect(await ok(await call("/webhooks"))).toEqual({ webhooks: [] })
    const a = await create({ label: "a" })
    const b = await create({ label: "b", events: ["contact.deleted"] })
    const body = await ok(await call("/webhooks"))
    expect(Object.keys(body)).toEqual(["webhooks"])
    expect(body.webhooks.map((w: any) => w.id)).toEqual([a.id, b.id])
    for (const w of body.webhooks) expect(Object.keys(w).sort()).toEqual(ENDPOINT_FIELDS)
    expect(JSON.stringify(body)).not.toContain("whsec_")
    const { secret: _, ...publicA } = a
    expect(body.webhooks[0]).toEqual(publicA)
  })

  it("GET /webhooks/{id} answers {webhook} without secret; unknown or malformed ids 404", async () => {
    const w = await create()
    const body = await ok(await call(`/webhooks/${w.id}`))
    expect(Object.keys(body)).toEqual(["webhook"])
    const { secret: _, ...expected } = w
    expect(body.webhook).toEqual(expected)
    await expectError(await call(`/webhooks/${crypto.randomUUID()}`), 404, "not_found")
    await expectError(await call("/webhooks/not-a-uuid"), 404, "not_found")
  })

  it("PATCH /webhooks/{id} updates url, events, label, status, apiVersion and answers {webhook} without secret", async () => {
    const w = await create({ label: "old", events: ["contact.updated"] })
    const body = await ok(
      await call(`/webhooks/${w.id}`, {
        method: "PATCH",
        json: { url: receiver.url("/moved"), events: ["*"], label: "new", status: "disabled", apiVersion: "2026-08-17" }
      })
    )
    expect(Object.keys(body)).toEqual(["webhook"])
    expect(Object.keys(body.webhook).sort()).toEqual(ENDPOINT_FIELDS)
    expect(body.webhook).toEqual(
      {
        ...w,
        secret: undefined,
        url: receiver.url("/moved"),
        events: ["*"],
        label: "new",
        status: "disabled",
        apiVersion: "2026-08-17"
      } as any
    )
    // a partial patch keeps the rest; null clears the label
    const again = await ok(
      await call(`/webhooks/${w.id}`, { method: "PATCH", json: { label: null, status: "enabled" } })
    )
    expect(again.webhook).toMatchObject({
      url: receiver.url("/moved"),
      events: ["*"],
      label: null,
      status: "enabled",
      apiVersion: "2026-08-17"
    })
    expect((await ok(await call(`/webhooks/${w.id}`))).webhook).toEqual(again.webhook)
    await expectError(
      await call(`/webhooks/${crypto.randomUUID()}`, { method: "PATCH", json: { label: "x" } }),
      404,
      "not_found"
    )
  })

  it("DELETE /webhooks/{id} answers {deleted: true}; afterwards every route 404s", async () => {
    const w = await create()
    const keep = await create()
    expect(await ok(await call(`/webhooks/${w.id}`, { method: "DELETE" }))).toEqual({ deleted: true })
    await expectError(await call(`/webhooks/${w.id}`), 404, "not_found")
    await expectError(await call(`/webhooks/${w.id}`, { method: "DELETE" }), 404, "not_found")
    await expectError(await call(`/webhooks/${w.id}`, { method: "PATCH", json: { label: "x" } }), 404, "not_found")
    await expectError(await call(`/webhooks/${w.id}/rotate`, { method: "POST" }), 404, "not_found")
    await expectError(await call(`/webhooks/${w.id}/test`, { method: "POST" }), 404, "not_found")
    await expectError(await call(`/webhooks/${w.id}/deliveries`), 404, "not_found")
    expect((await ok(await call("/webhooks"))).webhooks.map((x: any) => x.id)).toEqual([keep.id])
  })

  it("POST /webhooks/{id}/rotate answers {webhook} with a new secret; the old one still signs for now", async () => {
    const w = await create()
    const body = await ok(await call(`/webhooks/${w.id}/rotate`, { method: "POST" }))
    expect(Object.keys(body)).toEqual(["webhook"])
    expect(Object.keys(body.webhook).sort()).toEqual([...ENDPOINT_FIELDS, "secret"].sort())
    expect(body.webhook.id).toBe(w.id)
    expect(body.webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(body.webhook.secret).not.toBe(w.secret)
    expect(Object.keys((await ok(await call(`/webhooks/${w.id}`))).webhook)).not.toContain("secret")
    const before = receiver.got.length
    await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
    const ping = receiver.got[before]!
    expect(String(ping.headers["webhook-signature"]).split(" ")).toHaveLength(2)
    expect(verify(body.webhook.secret, ping).type).toBe("ping")
    expect(verify(w.secret, ping).type).toBe("ping")
  })

  it("POST /webhooks/{id}/test sends a signed ping now and answers {delivery}", async () => {
    const w = await create({ events: ["contact.deleted"] })
    const before = receiver.got.length
    const body = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
    expect(Object.keys(body)).toEqual(["delivery"])
    const d = body.delivery
    expect(Object.keys(d).sort()).toEqual(DELIVERY_FIELDS)
    expect(d).toMatchObject({
      eventType: "ping",
      status: "succeeded",
      attempts: 1,
      responseStatus: 200,
      error: null,
      nextAttemptAt: null
    })
    expect(d.eventId).toMatch(/^evt_test_[0-9a-f]{32}$/)
    expect(d.id).toMatch(UUID)
    expect(receiver.got.length).toBe(before + 1)
    const got = receiver.got[before]!
    expect(got.path).toBe("/hook")
    expect(got.headers["content-type"]).toBe("application/json")
    expect(got.headers["webhook-id"]).toBe(d.eventId)
    const event = verify(w.secret, got)
    expect(Object.keys(event)).toEqual(["type", "timestamp", "data"])
    expect(event.type).toBe("ping")
    expect(typeof event.data.message).toBe("string")
    expect(Number.isNaN(Date.parse(event.timestamp))).toBe(false)
  })

  it("a failing test ping is recorded as pending with its status and the next retry", async () => {
    const w = await create()
    receiver.answer = () => ({ status: 503 })
    const { delivery } = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
    expect(delivery).toMatchObject({ status: "pending", attempts: 1, responseStatus: 503, error: "HTTP 503" })
    const wait = Date.parse(delivery.nextAttemptAt) - Date.parse(delivery.lastAttemptAt)
    expect(wait).toBeGreaterThanOrEqual(4500)
    expect(wait).toBeLessThanOrEqual(5500)
  })

  it("the sender does not follow redirects: a 3xx is a failed attempt and the target is never called", async () => {
    const w = await create({ url: receiver.url("/redirecting") })
    receiver.answer = (
      path
    ) => (path === "/redirecting" ? { status: 302, headers: { location: receiver.url("/target") } } : { status: 200 })
    const before = receiver.got.length
    const { delivery } = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
    expect(delivery).toMatchObject({ status: "pending", responseStatus: 302 })
    expect(delivery.error).toMatch(/redirect 302 not followed/)
    await new Promise((r) => setTimeout(r, 50))
    expect(receiver.got.slice(before).map((g) => g.path)).toEqual(["/redirecting"])
  })

  it("a 410 Gone answer disables the endpoint", async () => {
    const w = await create()
    receiver.answer = () => ({ status: 410 })
    const { delivery } = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
    expect(delivery).toMatchObject({ status: "failed", responseStatus: 410, nextAttemptAt: null })
    expect((await ok(await call(`/webhooks/${w.id}`))).webhook.status).toBe("disabled")
  })

  it("an unreachable receiver is a failed attempt with the network error", async () => {
    const closed = await startReceiver()
    const url = closed.url("/closed")
    await closed.close()
    const w = await create({ url })
    const { delivery } = await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))
    expect(delivery).toMatchObject({ status: "pending", attempts: 1, responseStatus: null })
    expect(delivery.error).toMatch(/ECONNREFUSED/)
  })

  it("GET /webhooks/{id}/deliveries: newest first, limit 1..200 (default 50), 400 outside", async () => {
    const w = await create()
    const ids: Array<string> = []
    for (let i = 0; i < 4; i++) {
      ids.push((await ok(await call(`/webhooks/${w.id}/test`, { method: "POST" }))).delivery.id)
      await new Promise((r) => setTimeout(r, 3))
    }
    const all = await ok(await call(`/webhooks/${w.id}/deliveries`))
    expect(Object.keys(all)).toEqual(["deliveries"])
    expect(all.deliveries.map((d: any) => d.id)).toEqual([...ids].reverse())
    for (const d of all.deliveries) expect(Object.keys(d).sort()).toEqual(DELIVERY_FIELDS)
    expect((await ok(await call(`/webhooks/${w.id}/deliveries?limit=2`))).deliveries.map((d: any) => d.id)).toEqual([
      ids[3],
      ids[2]
    ])
    expect((await ok(await call(`/webhooks/${w.id}/deliveries?limit=1`))).deliveries).toHaveLength(1)
    expect((await ok(await call(`/webhooks/${w.id}/deliveries?limit=200`))).deliveries).toHaveLength(4)
    for (const bad of ["0", "201", "-1", "1.5", "abc", ""]) {
      const e = await expectError(await call(`/webhooks/${w.id}/deliveries?limit=${bad}`), 400, "invalid_argument")
      expect(e.message).toMatch(/limit/)
    }
    await expectError(await call(`/webhooks/${crypto.randomUUID()}/deliveries`), 404, "not_found")
  })

  it("GET /webhook-events lists the 20 catalog types with descriptions, not ping", async () => {
    const body = await ok(await call("/webhook-events"))
    expect(Object.keys(body)).toEqual(["events"])
    expect(body.events.map((e: any) => e.type)).toEqual(SPEC_EVENTS)
    for (const e of body.events) {
      expect(Object.keys(e).sort()).toEqual(["description", "type"])
      expect(e.description.length).toBeGreaterThan(5)
    }
    expect(body.events.map((e: any) => e.type)).not.toContain("ping")
    expect(eventTypes).toEqual(SPEC_EVENTS)
  })
})

// ------------------------------------------------------------------------------------ validation, scope, tenancy

describe("webhook endpoints: validation, scope and tenant isolation", () => {
  const bad = async (json: unknown, pattern: RegExp, path = "/webhooks", method = "POST") => {
    const e = await expectError(await call(path, { method, json }), 400, "invalid_argument")
    expect(e.message).toMatch(pattern)
  }

  it("rejects unknown event types, ping, * mixed with others, empty events, unknown fields and missing url", async () => {
    const url = receiver.url()
    await bad({ url, events: ["contact.created"] }, /unknown event type contact\.created/)
    await bad({ url, events: ["ping"] }, /ping/)
    await bad({ url, events: ["*", "contact.updated"] }, /\*/)
    await bad({ url, events: [] }, /events/)
    await bad({ url, events: ["*"], secret: "whsec_mine" }, /secret/)
    await bad({ url, events: ["*"], status: "enabled" }, /status/)
    await bad({ events: ["*"] }, /url/)
    await bad({ url, events: "contact.updated" }, /events/)
    await bad({ url: "not a url", events: ["*"] }, /url/)
    const w = await create()
    await bad({ events: ["ping"] }, /ping/, `/webhooks/${w.id}`, "PATCH")
    await bad({ events: [] }, /events/, `/webhooks/${w.id}`, "PATCH")
    await bad({ status: "paused" }, /status/, `/webhooks/${w.id}`, "PATCH")
    await bad({ secret: "x" }, /secret/, `/webhooks/${w.id}`, "PATCH")
    expect((await ok(await call("/webhooks"))).webhooks).toHaveLength(1)
  })

  it("with OUTBOUND_ALLOW_PRIVATE off: https only, no private literals, no names resolving to private addresses", async () => {
    const dns = new Map<string, ReadonlyArray<string>>([
      ["hooks.example.com", ["93.184.216.34"]],
      ["sneaky.example.com", ["10.0.0.7"]]
    ])
    const resolver = Layer.succeed(
      HostResolver,
      HostResolver.of({
        resolve: (h) => Effect.suspend(() => (dns.has(h) ? Effect.succeed(dns.get(h)!) : Effect.fail("ENOTFOUND")))
      })
    )
    const strict = await makeTestApp({
      outbound: Layer.merge(layerOutboundGuard(false).pipe(Layer.provide(resolver)), Sender.layer).pipe(
        Layer.provideMerge(OutboundHttp.layer(false))
      )
    })
    try {
      const s = callWith(strict, strict.testKey)
      const reject = async (url: string, pattern: RegExp) => {
        const e = await expectError(
          await s("/webhooks", { method: "POST", json: { url, events: ["*"] } }),
          400,
          "invalid_argument"
        )
        expect(e.message).toMatch(pattern)
      }
      await reject("http://hooks.example.com/x", /must use https/)
      await reject("https://127.0.0.1/x", /loopback/)
      await reject("https://2130706433/x", /loopback/)
      await reject("https://[::1]/x", /loopback/)
      await reject("https://169.254.169.254/latest/meta-data", /linkLocal/)
      await reject("https://localhost/x", /localhost/)
      await reject("https://sneaky.example.com/x", /private address \(10\.0\.0\.7\)/)
      await reject("https://user:pw@hooks.example.com/x", /credentials/)
      await reject("https://nowhere.example.com/x", /does not resolve/)
      const created = await ok(
        await s("/webhooks", { method: "POST", json: { url: "https://hooks.example.com/x", events: ["*"] } }),
        201
      )
      const e = await expectError(
        await s(`/webhooks/${created.webhook.id}`, { method: "PATCH", json: { url: "http://hooks.example.com/y" } }),
        400,
        "invalid_argument"
      )
      expect(e.message).toMatch(/https/)
      expect((await ok(await s("/webhooks"))).webhooks.map((w: any) => w.url)).toEqual(["https://hooks.example.com/x"])
    } finally {
      await strict.close()
    }
  })

  it("every route needs webhooks:manage: 403 naming the scope", async () => {
    const w = await create()
    const limited = await app.createKey(workspaceId, { scopes: ["contacts:read", "contacts:write"] })
    const as = callWith(app, limited.token)
    const routes: Array<[string, RequestInit & { json?: unknown }]> = [
      ["/webhook-events", {}],
      ["/webhooks", {}],
      ["/webhooks", { method: "POST", json: { url: receiver.url(), events: ["*"] } }],
      [`/webhooks/${w.id}`, {}],
      [`/webhooks/${w.id}`, { method: "PATCH", json: { label: "x" } }],
      [`/webhooks/${w.id}`, { method: "DELETE" }],
      [`/webhooks/${w.id}/rotate`, { method: "POST" }],
      [`/webhooks/${w.id}/test`, { method: "POST" }],
      [`/webhooks/${w.id}/deliveries`, {}]
    ]
    for (const [path, init] of routes) {
      const e = await expectError(await as(path, init), 403, "permission_denied")
      expect(e.message, `${init.method ?? "GET"} ${path}`).toContain("webhooks:manage")
    }
    // nothing changed
    expect((await ok(await call(`/webhooks/${w.id}`))).webhook.label).toBeNull()
    const withScope = await app.createKey(workspaceId, { scopes: ["webhooks:manage"] })
    expect((await ok(await callWith(app, withScope.token)("/webhooks"))).webhooks).toHaveLength(1)
  })

  it("another workspace's endpoint is 404 on every route and absent from lists", async () => {
    const theirs = await create({ label: "theirs" })
    const other = await app.createWorkspace("Intruder")
    const as = callWith(app, other.key)
    expect((await ok(await as("/webhooks"))).webhooks).toEqual([])
    await expectError(await as(`/webhooks/${theirs.id}`), 404, "not_found")
    await expectError(
      await as(`/webhooks/${theirs.id}`, { method: "PATCH", json: { url: receiver.url("/stolen") } }),
      404,
      "not_found"
    )
    await expectError(await as(`/webhooks/${theirs.id}/rotate`, { method: "POST" }), 404, "not_found")
    await expectError(await as(`/webhooks/${theirs.id}/test`, { method: "POST" }), 404, "not_found")
    await expectError(await as(`/webhooks/${theirs.id}/deliveries`), 404, "not_found")
    await expectError(await as(`/webhooks/${theirs.id}`, { method: "DELETE" }), 404, "not_found")
    const still = (await ok(await call(`/webhooks/${theirs.id}`))).webhook
    expect(still).toMatchObject({ url: receiver.url(), label: "theirs", status: "enabled" })
  })
})

// ------------------------------------------------------------------------------------ OpenAPI

describe("OpenAPI webhooks section", () => {
  it("documents every catalog event (and ping) as an OpenAPI 3.1 webhook with the signing headers", async () => {
    const doc = await ok(await app.fetch("/v1/api/openapi.json"))
    expect(doc.openapi).toMatch(/^3\.1/)
    expect(Object.keys(doc.webhooks).sort()).toEqual([...SPEC_EVENTS, "ping"].sort())
    for (const type of SPEC_EVENTS) {
      const op = doc.webhooks[type].post
      expect(op.description).toContain(catalog[type as keyof typeof catalog].description)
      expect(op.parameters.map((p: any) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"])
      const schema = op.requestBody.content["application/json"].schema
      expect(schema.required).toEqual(["type", "timestamp", "data"])
      expect(schema.properties.type).toEqual({ const: type })
      expect(schema.properties.data.type).toBe("object")
    }
    expect(doc.webhooks["contact.updated"].post.requestBody.content["application/json"].schema.properties.data.required)
      .toContain("contactId")
    for (
      const path of [
        "/v1/api/webhooks",
        "/v1/api/webhooks/{id}",
        "/v1/api/webhooks/{id}/rotate",
        "/v1/api/webhooks/{id}/test",
        "/v1/api/webhooks/{id}/deliveries",
        "/v1/api/webhook-events"
      ]
    ) {
      expect(doc.paths[path], path).toBeDefined()
    }
  })
})

// ------------------------------------------------------------------------------------ must-show: live deliveries

describe("live delivery with the background worker", () => {
  let live: App
  let hooks: Receiver
  beforeAll(async () => {
    // The worker never polls here: only the commit signal can make it deliver within a second.
    live = await makeTestApp({ webhookWorker: true, webhookPollMs: 600_000 })
    hooks = await startReceiver()
  })
  afterAll(async () => {
    await live.close()
    await hooks.close()
  })

  it("contact.updated (create, patch with fields) and contact.deleted reach a local receiver within 1 s, verified by standardwebhooks", async () => {
    const as = callWith(live, live.testKey)
    const w = (await ok(
      await as("/webhooks", {
        method: "POST",
        json: { url: hooks.url("/crm"), events: ["contact.updated", "contact.deleted"] }
      }),
      201
    )).webhook

    const latencies: Array<number> = []
    const step = async (request: () => Promise<Response>, status: number) => {
      const n = hooks.got.length
      const started = Date.now()
      const body = await ok(await request(), status)
      await hooks.waitFor(n + 1, 3000)
      const got = hooks.got[n]!
      latencies.push(got.at - started)
      expect(got.at - started, "delivered within one second of the API call").toBeLessThan(1000)
      expect(got.path).toBe("/crm")
      expect(String(got.headers["webhook-id"])).toMatch(/^evt_[0-9a-f]{32}$/)
      return { body, event: verify(w.secret, got) }
    }

    const created = await step(
      () => as("/contacts", { method: "POST", json: { firstName: "Ada", phone: "4155550101" } }),
      201
    )
    const id = created.body.contact.id
    expect(created.event).toMatchObject({ type: "contact.updated", data: { contactId: id, change: "created" } })
    expect(created.event.data).not.toHaveProperty("fields")
    expect(Object.keys(created.event.data).sort()).toEqual(["change", "contactId"])

    const patched = await step(
      () => as(`/contacts/${id}`, { method: "PATCH", json: { tags: ["vip"], firstName: "Ada" } }),
      200
    )
    expect(patched.event).toEqual({
      type: "contact.updated",
      timestamp: expect.any(String),
      data: { contactId: id, change: "updated", fields: ["firstName", "tags"] }
    })

    const deleted = await step(() => as(`/contacts/${id}`, { method: "DELETE" }), 200)
    expect(deleted.event).toEqual({ type: "contact.deleted", timestamp: expect.any(String), data: { contactId: id } })

    // exactly three deliveries, all recorded as succeeded, newest first
    await new Promise((r) => setTimeout(r, 200))
    expect(hooks.got).toHaveLength(3)
    expect(new Set(hooks.got.map((g) => g.headers["webhook-id"])).size).toBe(3)
    const { deliveries } = await ok(await as(`/webhooks/${w.id}/deliveries`))
    expect(deliveries.map((d: any) => [d.eventType, d.status, d.attempts])).toEqual([
      ["contact.deleted", "succeeded", 1],
      ["contact.updated", "succeeded", 1],
      ["contact.updated", "succeeded", 1]
    ])
    expect(deliveries.map((d: any) => d.eventId).reverse()).toEqual(hooks.got.map((g) => g.headers["webhook-id"]))
    console.log(`webhook latency from API call to receiver (create, patch, delete): ${latencies.join(" ms, ")} ms`)
  })

  it("retries come due on the workspace clock: advanced past the 5 s and 5 min steps, both retries go out at once", async () => {
    // A worker that polls (every 20 ms): a moved clock is noticed by the next poll, not by a commit.
    const polling = await makeTestApp({ webhookWorker: true, webhookPollMs: 20 })
    const { key: token } = await polling.createWorkspace("Retry clock")
    const as = callWith(polling, token)
    const flaky = await startReceiver()
    try {
      let calls = 0
      flaky.answer = () => ({ status: ++calls < 3 ? 503 : 200 })
      const w = (await ok(
        await as("/webhooks", { method: "POST", json: { url: flaky.url("/flaky"), events: ["contact.updated"] } }),
        201
      )).webhook
      await ok(await as("/contacts", { method: "POST", json: { firstName: "Retry" } }), 201)
      await flaky.waitFor(1, 3000)
      // The next attempts are due 5 s and then 5 min later; on the moved clock both are due now.
      await ok(await as("/test-helpers/clock", { method: "POST", json: { advanceSeconds: 400 } }))
      await flaky.waitFor(3, 4000)
      // The third answer reached the receiver; its outcome is recorded just after.
      let deliveries: Array<any> = []
      for (let i = 0; i < 100 && deliveries[0]?.status !== "succeeded"; i++) {
        deliveries = (await ok(await as(`/webhooks/${w.id}/deliveries`))).deliveries
        await new Promise((r) => setTimeout(r, 20))
      }
      expect(deliveries).toMatchObject([{ eventType: "contact.updated", status: "succeeded", attempts: 3 }])
    } finally {
      await flaky.close()
      await polling.close()
    }
  })

  it("an endpoint not subscribed to a type, or disabled, receives nothing", async () => {
    const as = callWith(live, live.testKey)
    const only = await startReceiver()
    try {
      await ok(
        await as("/webhooks", {
          method: "POST",
          json: { url: only.url("/deleted-only"), events: ["contact.deleted"] }
        }),
        201
      )
      const off =
        (await ok(await as("/webhooks", { method: "POST", json: { url: only.url("/off"), events: ["*"] } }), 201))
          .webhook
      await ok(await as(`/webhooks/${off.id}`, { method: "PATCH", json: { status: "disabled" } }))
      const c = (await ok(await as("/contacts", { method: "POST", json: { firstName: "Grace" } }), 201)).contact
      await new Promise((r) => setTimeout(r, 300))
      expect(only.got).toEqual([])
      await ok(await as(`/contacts/${c.id}`, { method: "DELETE" }))
      await only.waitFor(1, 2000)
      await new Promise((r) => setTimeout(r, 200))
      expect(only.got.map((g) => g.path)).toEqual(["/deleted-only"])
    } finally {
      await only.close()
    }
  })
})
