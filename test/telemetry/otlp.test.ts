/**
 * OTLP export, read as a collector reads it: the real Node server (test/support/server.ts) with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local HTTP server that records what arrives on
 * /v1/traces and /v1/metrics (OTLP/HTTP JSON). One request that runs SQL must arrive as an HTTP
 * server span with the route, and `sql.execute` spans under it in the same trace; the metrics must
 * arrive with the request counter and the SQL statement histogram (also in `GET /metrics`); the
 * resource carries OTEL_SERVICE_NAME.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, inject, it } from "vitest"
import { freshDatabase } from "../support/postgres.ts"
import { type RunningServer, startServer } from "../support/server.ts"
import { parseExposition, valueOf } from "./promText.ts"

interface Received {
  readonly path: string
  readonly body: any
}

interface Attribute {
  readonly key: string
  readonly value: { readonly stringValue?: string; readonly intValue?: string | number }
}

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: ReadonlyArray<Attribute>
}

const attr = (attributes: ReadonlyArray<Attribute>, key: string) => {
  const v = attributes.find((a) => a.key === key)?.value
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : String(v.intValue))
}

const received: Array<Received> = []
let collector: Server
let server: RunningServer
let dataDir: string

const url = inject("postgresUrl")
const ADMIN_TOKEN = "otlp-test-admin-token-0123456789abcdef"

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      // A body that is not JSON is kept as text, so an assertion below names what arrived.
      let parsed: unknown = body
      try {
        parsed = JSON.parse(body)
      } catch {
        // kept as text
      }
      received.push({ path: req.url ?? "", body: parsed })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((done) => collector.listen(0, "127.0.0.1", done))
  const port = (collector.address() as { port: number }).port
  dataDir = mkdtempSync(join(tmpdir(), "switchboard-otlp-"))
  // Postgres when the suite has one (a faster boot), else the embedded database.
  const database = url === null ? {} : { DATABASE_URL: (await freshDatabase(url, "otlp")).url }
  server = await startServer("node", {
    ...database,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN_TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_SERVICE_NAME: "switchboard-otlp-test",
    OTEL_METRIC_EXPORT_INTERVAL: "300",
    OTEL_BSP_SCHEDULE_DELAY: "100"
  }, 90_000)
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await new Promise((done) => collector?.close(done))
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

const spansIn = (r: Received): Array<OtlpSpan & { service: string | undefined }> =>
  (r.body?.resourceSpans ?? []).flatMap((rs: any) =>
    (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((s: OtlpSpan) => ({ ...s, service: attr(rs.resource?.attributes ?? [], "service.name") }))
    )
  )

const waitFor = async <A>(find: () => A | undefined, what: string, ms = 10_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) {
      throw new Error(
        `${what} did not arrive; received: ${JSON.stringify(received.map((r) => r.path))}\n${server.output()}`
      )
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

it("exports a request's server span with its SQL spans under it, and the metrics, by OTLP/HTTP JSON", async () => {
  const res = await fetch(`${server.baseUrl}/v1/api/contacts`, {
    headers: { authorization: `Bearer ${server.testKey}` }
  })
  expect(res.status).toBe(200)

  const spans = () => received.filter((r) => r.path === "/v1/traces").flatMap(spansIn)
  const request = await waitFor(
    () => spans().find((s) => s.name === "http.server GET" && attr(s.attributes, "http.route") === "/v1/api/contacts"),
    "the server span of GET /v1/api/contacts"
  )
  expect(request.service).toBe("switchboard-otlp-test")
  expect(attr(request.attributes, "http.response.status_code")).toBe("200")
  expect(request.parentSpanId ?? "").toBe("")

  // Every span of the trace leads up to the request's span; some of them are SQL statements.
  const sql = await waitFor(() => {
    const inTrace = spans().filter((s) => s.traceId === request.traceId)
    const statements = inTrace.filter((s) => s.name === "sql.execute")
    return statements.length > 0 ? { inTrace, statements } : undefined
  }, "sql.execute spans in the request's trace")
  const byId = new Map(sql.inTrace.map((s) => [s.spanId, s]))
  for (const statement of sql.statements) {
    let at: OtlpSpan | undefined = statement
    while (at !== undefined && at.spanId !== request.spanId) {
      at = at.parentSpanId
        ? byId.get(at.parentSpanId)
        : undefined
    }
    expect(at, `sql.execute ${statement.spanId} under the request span`).toBeDefined()
    expect(attr(statement.attributes, "db.query.text")).toMatch(/\bSELECT\b/i)
  }

  const metricNames = () =>
    new Set<string>(
      received
        .filter((r) => r.path === "/v1/metrics")
        .flatMap((r) =>
          (r.body?.resourceMetrics ?? []).flatMap((rm: any) =>
            (rm.scopeMetrics ?? []).flatMap((sm: any) => (sm.metrics ?? []).map((m: any) => m.name))
          )
        )
    )
  await waitFor(
    () => (metricNames().has("http_server_requests_total") ? true : undefined),
    "the request counter in /v1/metrics"
  )
  expect(metricNames().has("http_server_request_duration_seconds")).toBe(true)
  await waitFor(
    () => (metricNames().has("db_client_statement_duration_seconds") ? true : undefined),
    "the SQL statement histogram in /v1/metrics"
  )

  // The same statements, timed, for a scraper.
  const scraped = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(scraped.status).toBe(200)
  const exposition = parseExposition(await scraped.text())
  expect(exposition.types.get("db_client_statement_duration_seconds")).toBe("histogram")
  expect(valueOf(exposition, "db_client_statement_duration_seconds_count")).toBeGreaterThan(0)
}, 60_000)
