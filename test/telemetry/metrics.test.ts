/**
 * `GET /metrics` read as a scraper reads it (Prometheus text, parsed), after real requests through
 * the whole app in-process: request counts and durations by route template, method and status, the
 * rate-limit refusals, idempotency replays and webhook delivery outcomes with the queue gauges; the
 * admin token required (401 without, 404 when ADMIN_TOKEN is unset); SQL statement time on the
 * embedded database and on Postgres, through the clients the server builds.
 */
import { Redacted } from "effect"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { bearer } from "../http/helpers.ts"
import { makeTestApp } from "../support/app.ts"
import { ADMIN_TOKEN } from "../support/app.ts"
import { freshPglite } from "../support/pglite.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { type Exposition, parseExposition, valueOf } from "./promText.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const scrape = async (app: App): Promise<Exposition> => {
  const res = await app.fetch("/metrics", { headers: bearer(ADMIN_TOKEN) })
  const text = await res.text()
  expect(res.status, text).toBe(200)
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return parseExposition(text)
}

describe("GET /metrics", () => {
  let app: App
  let receiver: Server
  let receiverUrl: string
  beforeAll(async () => {
    app = await makeTestApp({ webhookWorker: true, webhookPollMs: 20 })
    receiver = createServer((req, res) => {
      req.resume()
      req.on("end", () => res.writeHead(204).end())
    })
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`
  })
  afterAll(async () => {
    await app.close()
    await new Promise((done) => receiver.close(done))
  })

  it("counts requests by route template, method and status, with their durations", async () => {
    const before = await scrape(app)
    const auth = bearer(app.testKey)
    const id = crypto.randomUUID()
    expect((await app.fetch("/v1/api/contacts", { headers: auth })).status).toBe(200)
    expect((await app.fetch(`/v1/api/contacts/${id}`, { headers: auth })).status).toBe(404)
    expect((await app.fetch("/v1/api/nowhere/at/all")).status).toBe(404)
    const after = await scrape(app)

    expect(after.types.get("http_server_requests_total")).toBe("counter")
    expect(after.types.get("http_server_request_duration_seconds")).toBe("histogram")
    const count = (e: Exposition, labels: Record<string, string>) =>
      valueOf(e, "http_server_requests_total", labels) ?? 0
    const ok = { route: "/v1/api/contacts", method: "GET", status: "200" }
    const missing = { route: "/v1/api/contacts/:id", method: "GET", status: "404" }
    const unmatched = { route: "unmatched", method: "GET", status: "404" }
    for (const labels of [ok, missing, unmatched]) {
      expect(count(after, labels) - count(before, labels), JSON.stringify(labels)).toBe(1)
    }
    // The raw path (with the id) is never a label: the route template stands for it.
    expect(after.samples.some((s) => Object.values(s.labels).some((v) => v.includes(id)))).toBe(false)

    const duration = (suffix: string, labels: Record<string, string>) =>
      valueOf(after, `http_server_request_duration_seconds${suffix}`, labels)
    expect(duration("_count", ok)).toBe(count(after, ok))
    expect(duration("_sum", ok)).toBeGreaterThan(0)
    expect(duration("_bucket", { ...ok, le: "+Inf" })).toBe(count(after, ok))
    // Buckets are cumulative.
    const buckets = after.samples.filter((s) =>
      s.name === "http_server_request_duration_seconds_bucket" && s.labels["route"] === ok.route &&
      s.labels["status"] === "200"
    )
    expect(buckets.length).toBeGreaterThan(5)
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value)
  })

  it("counts rate-limit refusals by bucket", async () => {
    // Its own app with a low limit; the registry is the process's, so both apps' counts add up.
    const limited = await makeTestApp({ rateLimitPerMinute: 3 })
    try {
      const refusals = (e: Exposition, bucket: string) => valueOf(e, "rate_limit_refusals_total", { bucket }) ?? 0
      const before = await scrape(app)
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) {
        statuses.push((await limited.fetch("/v1/api/contacts", { headers: bearer(limited.testKey) })).status)
      }
      for (let i = 0; i < 4; i++) statuses.push((await limited.fetch("/v1/api/nowhere")).status)
      expect(statuses).toEqual([200, 200, 200, 429, 404, 404, 404, 429])
      const after = await scrape(app)
      expect(refusals(after, "key") - refusals(before, "key")).toBe(1)
      expect(refusals(after, "ip") - refusals(before, "ip")).toBe(1)
      const count = (e: Exposition, labels: Record<string, string>) =>
        valueOf(e, "http_server_requests_total", labels) ?? 0
      expect(
        count(after, { route: "/v1/api/contacts", method: "GET", status: "429" }) -
          count(before, { route: "/v1/api/contacts", method: "GET", status: "429" })
      ).toBe(1)
      expect(
        count(after, { route: "unmatched", method: "GET", status: "429" }) -
          count(before, { route: "unmatched", method: "GET", status: "429" })
      ).toBe(1)
    } finally {
      await limited.close()
    }
  })

  it("counts idempotency replays", async () => {
    const { workspaceId, key } = await app.createWorkspace("Replays")
    expect(
      (await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+14155557001" } })).status
    ).toBe(201)
    const before = valueOf(await scrape(app), "idempotency_replays_total") ?? 0
    const send = () =>
      app.fetch("/v1/api/messages", {
        method: "POST",
        headers: { ...bearer(key), "idempotency-key": "metrics-1" },
        json: { to: "+14155550123", body: "once" }
      })
    expect((await send()).status).toBe(201)
    const replayed = await send()
    expect(replayed.status).toBe(201)
    expect(replayed.headers.get("idempotency-replayed")).toBe("true")
    expect((valueOf(await scrape(app), "idempotency_replays_total") ?? 0) - before).toBe(1)
  })

  it("counts webhook delivery outcomes", async () => {
    const { workspaceId, key } = await app.createWorkspace("Webhooks")
    expect(
      (await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+14155557002" } })).status
    ).toBe(201)
    const created = await app.fetch("/v1/api/webhooks", {
      method: "POST",
      headers: bearer(key),
      json: { url: receiverUrl, events: ["message.delivered"] }
    })
    expect(created.status, await created.clone().text()).toBe(201)
    const before = valueOf(await scrape(app), "webhook_deliveries_total", { outcome: "success" }) ?? 0
    expect(
      (await app.fetch("/v1/api/messages", {
        method: "POST",
        headers: bearer(key),
        json: { to: "+14155550123", body: "hook" }
      })).status
    ).toBe(201)
    let delivered = 0
    for (let i = 0; i < 100 && delivered === 0; i++) {
      await new Promise((r) => setTimeout(r, 20))
      delivered = (valueOf(await scrape(app), "webhook_deliveries_total", { outcome: "success" }) ?? 0) - before
    }
    expect(delivered).toBe(1)
    const e = await scrape(app)
    // Read once when the worker starts, then every 15 s: present, and nothing pending is older than the test.
    expect(e.types.get("webhook_queue_depth")).toBe("gauge")
    expect(valueOf(e, "webhook_oldest_pending_age_seconds")).toBeGreaterThanOrEqual(0)
  })

  it("needs the admin token: 401 without it or with another, 404 when ADMIN_TOKEN is unset", async () => {
    expect((await app.fetch("/metrics")).status).toBe(401)
    expect((await app.fetch("/metrics", { headers: bearer("wrong") })).status).toBe(401)
    expect((await app.fetch("/metrics", { headers: bearer(app.testKey) })).status).toBe(401)
    const closed = await makeTestApp({ adminToken: null })
    try {
      expect((await closed.fetch("/metrics", { headers: bearer(ADMIN_TOKEN) })).status).toBe(404)
    } finally {
      await closed.close()
    }
  })
})

describe.each(["pglite", "postgres"] as const)("SQL statement time on %s", (database) => {
  const url = inject("postgresUrl")
  it.skipIf(database === "postgres" && url === null)(
    "is a histogram in GET /metrics, counting the statements of a request",
    async () => {
      const db = database === "postgres" ? await freshDatabase(url!, "metrics_sql") : undefined
      const client = db === undefined ? freshPglite("migrated") : Postgres.layer({ url: Redacted.make(db.url) })
      const app = await makeTestApp({ stores: sqlStores(client) })
      try {
        const count = (e: Exposition) => valueOf(e, "db_client_statement_duration_seconds_count") ?? 0
        const before = await scrape(app)
        expect((await app.fetch("/v1/api/contacts", { headers: bearer(app.testKey) })).status).toBe(200)
        const after = await scrape(app)
        expect(after.types.get("db_client_statement_duration_seconds")).toBe("histogram")
        // The page's query at least (the key may come from the cache).
        expect(count(after) - count(before)).toBeGreaterThanOrEqual(1)
        expect(valueOf(after, "db_client_statement_duration_seconds_sum")).toBeGreaterThan(0)
        expect(valueOf(after, "db_client_statement_duration_seconds_bucket", { le: "+Inf" })).toBe(count(after))
      } finally {
        await app.close()
        await db?.drop()
      }
    },
    60_000
  )
})
