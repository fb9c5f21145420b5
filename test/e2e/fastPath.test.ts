/**
 * The real server with the fast path on and off (FAST_PATH, adapters/fastPath.ts): Node with it on
 * (our server and router), Node with it off (NodeHttpServer and HttpApiBuilder) and Deno with it off
 * (HttpApiBuilder on Deno.serve), each on its own embedded database, and Node with it off on
 * Postgres (plain @effect/sql-pg statements, though the finer settings ask for prepared and
 * pipelined ones). The same requests get the same status, headers and body from all of them, once
 * ids, times and cursors are named by their order of appearance. Where Node's two servers differ
 * by design (a request Node's parser refuses), the difference is the documented one.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { PIPELINE_NAME } from "../../adapters/postgres/pipeline.ts"
import { normalizer } from "../support/normalize.ts"
import { freshDatabase } from "../support/postgres.ts"
import { exchange } from "../support/rawHttp.ts"
import { type RunningServer, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const tempDir = tempDirs("fastpath")
const postgresUrl = inject("postgresUrl")
if (postgresUrl === null && process.env["CI"] === "true") throw new Error("CI=true needs the Postgres of globalSetup")

type Name = "on" | "nodeOff" | "denoOff" | "postgresOff"
const servers: Partial<Record<Name, RunningServer>> = {}
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined

beforeAll(async () => {
  const env = (fastPath: boolean) => ({ DATA_DIR: tempDir(), FAST_PATH: String(fastPath), LOG_FORMAT: "json" })
  database = postgresUrl === null ? undefined : await freshDatabase(postgresUrl, "fastpath_e2e")
  const [on, nodeOff, denoOff, postgresOff] = await Promise.all([
    startServer("node", env(true)),
    startServer("node", env(false)),
    startServer("deno", env(false)),
    database === undefined
      ? undefined
      : startServer("node", {
        ...env(false),
        DATABASE_URL: database.url,
        DATABASE_PREPARED_STATEMENTS: "true",
        DATABASE_PIPELINE: "true"
      })
  ])
  Object.assign(servers, { on, nodeOff, denoOff, postgresOff })
}, 180_000)

afterAll(async () => {
  await Promise.all(Object.values(servers).map((s) => s?.stop()))
  await database?.drop()
})

/** Cursors differ too: each server signs them with its own secret. */
const normalizerOfServer = () => normalizer((_, key) => (key === "nextCursor" ? "cursor" : undefined))

/**
 * Headers a client sees, less those that differ between any two answers: the date, the rate
 * limit's count and window (one bucket per server, filled by different request orders).
 */
const VARYING = new Set(["date", "ratelimit-remaining", "ratelimit-reset"])

interface Step {
  readonly label: string
  readonly path: (ids: ReadonlyArray<string>) => string
  readonly init?: RequestInit
  readonly key?: boolean
}

const json = (method: string, body: string): RequestInit => ({
  method,
  body,
  headers: { "content-type": "application/json" }
})

const STEPS: ReadonlyArray<Step> = [
  {
    label: "create a contact",
    path: () => "/v1/api/contacts",
    init: json("POST", JSON.stringify({ firstName: "Ada", phone: "4155550101" })),
    key: true
  },
  {
    label: "create another",
    path: () => "/v1/api/contacts",
    init: json("POST", JSON.stringify({ firstName: "Alan", company: "Bletchley" })),
    key: true
  },
  { label: "get it", path: (ids) => `/v1/api/contacts/${ids[0]}`, key: true },
  { label: "HEAD of it", path: (ids) => `/v1/api/contacts/${ids[0]}`, init: { method: "HEAD" }, key: true },
  { label: "list", path: () => "/v1/api/contacts", key: true },
  { label: "search with a page size", path: () => "/v1/api/contacts?q=a&limit=1", key: true },
  { label: "an unknown id: 404", path: () => "/v1/api/contacts/01a21198-c398-7000-b35f-2897e71eb2d8", key: true },
  { label: "a malformed id: 404", path: () => "/v1/api/contacts/not-a-uuid", key: true },
  { label: "no key: 401", path: () => "/v1/api/contacts" },
  {
    label: "a wrong key: 401",
    path: () => "/v1/api/contacts",
    init: { headers: { authorization: "Bearer svc_test_nope" } }
  },
  {
    label: "a body its schema refuses: 400",
    path: () => "/v1/api/contacts",
    init: json("POST", JSON.stringify({ firstName: 7 })),
    key: true
  },
  { label: "malformed JSON: 400", path: () => "/v1/api/contacts", init: json("POST", "{"), key: true },
  { label: "a query outside its bounds: 400", path: () => "/v1/api/contacts?limit=0", key: true },
  { label: "an unknown route: 404", path: () => "/v1/api/nothing-here", key: true },
  {
    label: "a preflight",
    path: () => "/v1/api/contacts",
    init: { method: "OPTIONS", headers: { origin: "https://example.com", "access-control-request-method": "POST" } }
  },
  { label: "delete", path: (ids) => `/v1/api/contacts/${ids[1]}`, init: { method: "DELETE" }, key: true },
  { label: "the OpenAPI document", path: () => "/v1/api/openapi.json" },
  { label: "a probe", path: () => "/healthz" }
]

/** Every step against one server, once: its answers as a client sees them, normalised. */
const answered = new Map<RunningServer, ReturnType<typeof ask>>()
const answers = (server: RunningServer) => {
  if (!answered.has(server)) answered.set(server, ask(server))
  return answered.get(server)!
}

const ask = async (server: RunningServer) => {
  const normal = normalizerOfServer()
  const ids: Array<string> = []
  const out: Array<{ label: string; status: number; headers: Array<string>; body: unknown }> = []
  for (const [i, step] of STEPS.entries()) {
    const headers = new Headers(step.init?.headers)
    headers.set("x-request-id", `req_fastpath_${i}`)
    if (step.key) headers.set("authorization", `Bearer ${server.testKey}`)
    const res = await fetch(`${server.baseUrl}${step.path(ids)}`, { ...step.init, headers })
    const text = await res.text()
    const body = text === "" ? "" : (JSON.parse(text) as { contact?: { id: string } })
    if (step.label.startsWith("create") && typeof body === "object") ids.push(body.contact!.id)
    const seen: Array<string> = []
    res.headers.forEach((value, name) => {
      if (!VARYING.has(name)) seen.push(`${name}: ${value}`)
    })
    out.push({ label: step.label, status: res.status, headers: seen.sort(), body: normal(body) })
  }
  return out
}

describe("FAST_PATH=true and FAST_PATH=false serve the same API", () => {
  it("the servers with it off say so at boot; the one with it on does not", () => {
    expect(servers.on!.output()).not.toMatch(/Fast path off/)
    expect(servers.nodeOff!.output()).toMatch(/Fast path off \(FAST_PATH=false\)/)
    expect(servers.denoOff!.output()).toMatch(/Fast path off \(FAST_PATH=false\)/)
  })

  it("Node with it off answers every request as Node with it on", async () => {
    const [on, off] = [await answers(servers.on!), await answers(servers.nodeOff!)]
    expect(off).toEqual(on)
    expect(on.map((a) => `${a.label} ${a.status}`)).toContain("the OpenAPI document 200")
  })

  it("Deno with it off answers every request as Node with it on", async () => {
    // Node's keep-alive headers aside: Deno.serve sends none, whichever way the app is served.
    const transport = new Set(["connection", "keep-alive"])
    const strip = (list: Awaited<ReturnType<typeof ask>>) =>
      list.map((a) => ({ ...a, headers: a.headers.filter((h) => !transport.has(h.split(":")[0]!)) }))
    expect(strip(await answers(servers.denoOff!))).toEqual(strip(await answers(servers.on!)))
  })

  it.skipIf(postgresUrl === null)(
    "Node with it off on Postgres answers as Node with it on, with no pipelined connection",
    async () => {
      expect(await answers(servers.postgresOff!)).toEqual(await answers(servers.on!))
      const client = new pg.Client({ connectionString: database!.url })
      await client.connect()
      try {
        const { rows } = await client.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
          [PIPELINE_NAME]
        )
        expect(rows[0].n).toBe(0)
      } finally {
        await client.end()
      }
    }
  )

  it("where they differ by design: a request Node's parser refuses gets the envelope with it on, Node's bare status line with it off", async () => {
    const port = (s: RunningServer) => Number(new URL(s.baseUrl).port)
    const on = await exchange(port(servers.on!), ["GARBAGE\r\n\r\n"])
    expect(on.status).toBe(400)
    expect(JSON.parse(on.body)).toMatchObject({ error: { code: "invalid_argument" } })
    const off = await exchange(port(servers.nodeOff!), ["GARBAGE\r\n\r\n"])
    expect(off.status).toBe(400)
    expect(off.body).toBe("")
    expect(off.headers["x-request-id"]).toBeUndefined()
  })
})
