/** GET /healthz and /readyz (api/health.ts), and the access log of every request (accessLog.ts). */
import { HttpApi } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, Logger, type LogLevel, type ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { routeMatcher } from "../../adapters/http/accessLog.ts"
import { Api } from "../../adapters/http/api.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as WebhookWorker from "../../adapters/webhooks/worker.ts"
import { Readiness, type StoreReadiness } from "../../core/health/readiness.ts"
import { makeTestApp } from "../support/app.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { bearer } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const readyz = async (app: App) => {
  const res = await app.fetch("/readyz")
  return { status: res.status, body: await res.json(), res }
}

describe("GET /healthz and /readyz", () => {
  let app: App
  beforeAll(async () => {
    app = await makeTestApp({ rateLimitPerMinute: 2, webhookWorker: true })
  })
  afterAll(() => app.close())

  it("answer 200 without a key, uncached, with a request id", async () => {
    const live = await app.fetch("/healthz")
    expect(live.status).toBe(200)
    expect(await live.json()).toEqual({ status: "ok" })
    expect(live.headers.get("cache-control")).toBe("no-store")
    expect(live.headers.get("x-request-id")).toMatch(/^req_/)
    const { status, body } = await readyz(app)
    expect({ status, body }).toEqual({
      status: 200,
      body: { status: "ok", checks: { database: "ok", migrations: "ok", webhookWorker: "ok" } }
    })
  })

  it("are never refused by the per-address rate limit (2 a minute here), and do not use it up", async () => {
    for (let i = 0; i < 10; i++) {
      expect((await app.fetch("/healthz")).status).toBe(200)
      const res = await app.fetch("/readyz")
      expect(res.status).toBe(200)
      expect(res.headers.get("ratelimit-limit")).toBeNull()
    }
    // The address still has its whole allowance for other keyless requests.
    expect((await app.fetch("/v1/api/openapi.json")).headers.get("ratelimit-remaining")).toBe("1")
  })

  it("ignore an Authorization header, even a bad one", async () => {
    expect((await app.fetch("/readyz", { headers: bearer("nonsense") })).status).toBe(200)
  })
})

describe("GET /readyz when a check fails", () => {
  it("answers 503 naming a database that does not answer", async () => {
    const down: StoreReadiness = { database: "unreachable", migrations: "unknown" }
    const stores = Layer.merge(
      MemoryStores.layer,
      Layer.succeed(Readiness, Readiness.of({ check: Effect.succeed(down) }))
    )
    const app = await makeTestApp({ stores })
    try {
      const { status, body } = await readyz(app)
      expect({ status, body }).toEqual({
        status: 503,
        body: { status: "unavailable", checks: { ...down, webhookWorker: "disabled" } }
      })
      // Liveness does not depend on the database.
      expect((await app.fetch("/healthz")).status).toBe(200)
    } finally {
      await app.close()
    }
  })

  it("answers 503 when a check hangs, within its bound", async () => {
    const stores = Layer.merge(MemoryStores.layer, Layer.succeed(Readiness, Readiness.of({ check: Effect.never })))
    const app = await makeTestApp({ stores })
    try {
      const started = Date.now()
      const { status, body } = await readyz(app)
      expect(status).toBe(503)
      expect(body.checks.database).toBe("unreachable")
      expect(Date.now() - started).toBeLessThan(5000)
    } finally {
      await app.close()
    }
  })

  it("answers 503 once the webhook worker stopped, 200 while it runs", async () => {
    const app = await makeTestApp()
    try {
      expect((await readyz(app)).body.checks.webhookWorker).toBe("disabled")
      const scope = await app.runtime.runPromise(Scope.make())
      await app.runtime.runPromise(Layer.buildWithScope(WebhookWorker.layer({ pollMs: 20 }), scope))
      expect(await readyz(app)).toMatchObject({ status: 200, body: { checks: { webhookWorker: "ok" } } })
      await app.runtime.runPromise(Scope.close(scope, Exit.void))
      const { status, body } = await readyz(app)
      expect({ status, body }).toEqual({
        status: 503,
        body: { status: "unavailable", checks: { database: "ok", migrations: "ok", webhookWorker: "stopped" } }
      })
    } finally {
      await app.close()
    }
  })

  it("answers 503 on SQL while the database takes no writes (a standby), and 200 once it does", async () => {
    const { app, close } = await makeSqlTestApp("readyz_read_only")
    const runtime = app.runtime as unknown as ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, never>
    const sql = (query: string) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (c) => c.unsafe(query)))
    try {
      // PGlite has one session: read-only for it is read-only for the whole app, as on a standby.
      await sql("SET default_transaction_read_only = on")
      const { status, body } = await readyz(app)
      expect({ status, body }).toEqual({
        status: 503,
        body: { status: "unavailable", checks: { database: "read_only", migrations: "ok", webhookWorker: "disabled" } }
      })
      await sql("SET default_transaction_read_only = off")
      expect((await readyz(app)).status).toBe(200)
    } finally {
      await close()
    }
  })

  it("answers 503 on SQL with a migration not applied, and 200 once it is", async () => {
    const { app, close } = await makeSqlTestApp("readyz_pending")
    // The SQL app's runtime holds its SqlClient too (makeSqlTestApp), which TestAppOptions does not type.
    const runtime = app.runtime as unknown as ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, never>
    const sql = (query: string) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (c) => c.unsafe(query)))
    try {
      expect((await readyz(app)).status).toBe(200)
      const [last] =
        (await sql("SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id DESC LIMIT 1")) as Array<
          { migration_id: number; name: string }
        >
      await sql(`DELETE FROM effect_sql_migrations WHERE migration_id = ${Number(last!.migration_id)}`)
      const { status, body } = await readyz(app)
      expect({ status, body }).toEqual({
        status: 503,
        body: { status: "unavailable", checks: { database: "ok", migrations: "pending", webhookWorker: "disabled" } }
      })
      await sql(
        `INSERT INTO effect_sql_migrations (migration_id, name) VALUES (${Number(last!.migration_id)}, '${last!.name}')`
      )
      expect((await readyz(app)).status).toBe(200)
    } finally {
      await close()
    }
  })
})

describe("the access log", () => {
  const lines: Array<{ level: LogLevel.LogLevel; message: unknown; annotations: Record<string, unknown> }> = []
  const recorder = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message, annotations }) => {
      lines.push({
        level: logLevel,
        message: Array.isArray(message) ? message[0] : message,
        annotations: Object.fromEntries(annotations)
      })
    })
  )
  let app: App
  beforeAll(async () => {
    app = await makeTestApp({ logger: recorder })
  })
  afterAll(() => app.close())

  const last = () => lines.at(-1)!

  it("writes one Info line per request with the route template, status, duration and ids, never the raw path or query", async () => {
    lines.length = 0
    const id = crypto.randomUUID()
    const res = await app.fetch(`/v1/api/contacts/${id}?secret=hunter2`, {
      headers: { ...bearer(app.testKey), "x-request-id": "probe-1" }
    })
    expect(res.status).toBe(400) // `secret` is no parameter of the route
    expect(lines).toHaveLength(1)
    const line = last()
    expect(line.level._tag).toBe("Info")
    expect(line.message).toMatch(/^GET \/v1\/api\/contacts\/:id 400 [\d.]+ms$/)
    const { durationMs, keyId, ...rest } = line.annotations
    expect(rest).toEqual({
      method: "GET",
      route: "/v1/api/contacts/:id",
      status: 400,
      requestId: "probe-1",
      workspaceId: app.workspaceId
    })
    expect(typeof durationMs).toBe("number")
    expect(keyId).toMatch(/\S/)
    const text = JSON.stringify(lines)
    for (const secret of [id, "hunter2", app.testKey]) expect(text).not.toContain(secret)
  })

  it("logs requests refused before any handler, without workspace or key", async () => {
    lines.length = 0
    await app.fetch("/v1/api/contacts", { headers: bearer("svc_test_not_a_real_key") })
    await app.fetch("/v1/api/nowhere/at/all")
    await app.fetch("/v1/api/contacts", {
      method: "OPTIONS",
      headers: { origin: "https://x.example", "access-control-request-method": "POST" }
    })
    await app.fetch("/readyz")
    expect(lines.map((l) => [l.annotations["route"], l.annotations["status"], "workspaceId" in l.annotations])).toEqual(
      [
        ["/v1/api/contacts", 401, false],
        ["(unmatched)", 404, false],
        ["/v1/api/contacts", 204, false],
        ["/readyz", 200, false]
      ]
    )
    expect(JSON.stringify(lines)).not.toContain("svc_test_not_a_real_key")
  })

  it("logs every endpoint under its own template, a static segment winning over a parameter as in the router", () => {
    const match = routeMatcher(Api, [["GET", "/v1/api/openapi.json"]])
    const endpoints: Array<[string, string]> = []
    HttpApi.reflect(Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => void endpoints.push([endpoint.method, endpoint.path])
    })
    expect(endpoints.length).toBeGreaterThan(40)
    for (const [method, path] of endpoints) {
      const concrete = path.replace(/:[^/]+/g, "9f1c2e4a-0000-4000-8000-000000000000")
      expect(match(method, `${concrete}?limit=5`), `${method} ${path}`).toBe(path)
    }
    expect(match("GET", "/v1/api/openapi.json")).toBe("/v1/api/openapi.json")
    // A trailing slash is refused (404) before routing (platform.ts); an empty id is no id.
    expect(match("GET", "/v1/api/contacts/")).toBeUndefined()
    expect(match("GET", "/v1/api/contacts//notes")).toBeUndefined()
    expect(match("PUT", "/v1/api/contacts")).toBeUndefined()
  })
})
