/**
 * The real Node server as an operator meets it: probes answer after boot, every request leaves one
 * JSON access-log line (LOG_FORMAT defaults to json off a terminal), and a start that cannot
 * succeed (a bad setting, a busy port) says why in one line and exits non-zero. (LOG_LEVEL and the
 * formats: test/apps/logging.test.ts.) Each boot costs seconds, so the cases share what they can.
 * Under Deno, the same shutdown lines and the same one-line refusals (on Postgres when the suite has
 * one: a boot of seconds).
 */
import { createServer, type Server } from "node:net"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { freshDatabase } from "../support/postgres.ts"
import { freePort, type RunningServer, runUntilExit, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const tempDir = tempDirs("ops")

/** The output's JSON lines (the first-boot banner is plain text for people). */
const jsonLines = (output: string) =>
  output.split("\n").flatMap((line) => {
    try {
      const v = JSON.parse(line)
      return typeof v === "object" && v !== null ? [v as Record<string, any>] : []
    } catch {
      return []
    }
  })

/** No Effect internals or stack frames in what an operator reads. */
// A stack frame is a line of its own (`    at fn (file:1:2)`); boot log lines may say "opened at <dir>" beside a time.
const expectNoStack = (text: string) =>
  expect(text).not.toMatch(/^\s+at .+:\d+:\d+\)?$|FiberFailure|node_modules|\[Symbol|_op/m)

/** Booted once by the first suite; the failing starts below reuse it warm (faster than a first boot). */
const dataDir = tempDir()

describe("a booted server", () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer("node", { DATA_DIR: dataDir })
  }, 90_000)
  afterAll(() => server.stop())

  it("answers /healthz and /readyz with 200", async () => {
    expect(await (await fetch(`${server.baseUrl}/healthz`)).json()).toEqual({ status: "ok" })
    const ready = await fetch(`${server.baseUrl}/readyz`)
    expect({ status: ready.status, body: await ready.json() }).toEqual({
      status: 200,
      body: { status: "ok", checks: { database: "ok", migrations: "ok", webhookWorker: "ok" } }
    })
  })

  it("writes one JSON access-log line per request, with timestamp, level, message and ids, never the key", async () => {
    const key = server.testKey!
    const res = await fetch(`${server.baseUrl}/v1/api/contacts?limit=5`, {
      headers: { authorization: `Bearer ${key}`, "x-request-id": "ops-log-1" }
    })
    expect(res.status).toBe(200)
    let line: Record<string, any> | undefined
    for (let i = 0; i < 50 && line === undefined; i++) {
      line = jsonLines(server.output()).find((l) => l["annotations"]?.requestId === "ops-log-1")
      if (line === undefined) await new Promise((r) => setTimeout(r, 20))
    }
    expect(line).toMatchObject({
      logLevel: "INFO",
      message: expect.stringMatching(/^GET \/v1\/api\/contacts 200 [\d.]+ms$/),
      annotations: {
        method: "GET",
        route: "/v1/api/contacts",
        status: 200,
        requestId: "ops-log-1",
        workspaceId: expect.any(String),
        keyId: expect.any(String)
      }
    })
    expect(Date.parse(line!["timestamp"])).not.toBeNaN()
    // The key is shown once, in the first-boot banner, never in a log line.
    expect(JSON.stringify(jsonLines(server.output()))).not.toContain(key)
    // The boot's own lines are JSON too.
    expect(jsonLines(server.output()).some((l) => /^Listening on/.test(l["message"]))).toBe(true)
  })

  it("refuses a second server on its port in one line naming the port", async () => {
    const port = new URL(server.baseUrl).port
    // A first boot on a fresh DATA_DIR (the running server holds its own): the port is checked before anything is written.
    const { code, stdout, stderr } = await runUntilExit({ PORT: port, DATA_DIR: tempDir() }, 150_000)
    expect(code).not.toBe(0)
    expect(stderr.trim()).toBe(`Port ${port} is already in use (HOST 127.0.0.1); set PORT to another port`)
    expectNoStack(stdout + stderr)
  }, 180_000)
})

describe("a start that cannot succeed", () => {
  it.each([
    [{ PORT: "abc" }, "Configuration error: PORT: expected an integer value but received \"abc\""],
    [{ CARRIER: "foo" }, "Configuration error: CARRIER: expected one of (simulated, telnyx) but received \"foo\""],
    [{ SECRETS_KEY: "not-hex" }, "Configuration error: SECRETS_KEY: must be 64 hex digits"],
    [
      { CARRIER: "telnyx", TELNYX_API_KEY: "KEY_x" },
      "Configuration error: CARRIER=telnyx needs TELNYX_PUBLIC_KEY, TELNYX_MESSAGING_PROFILE_ID, TELNYX_CONNECTION_ID"
    ]
  ])("%o prints one line naming the variable and exits 1", async (env, line) => {
    const { code, stdout, stderr } = await runUntilExit({ PORT: "0", DATA_DIR: dataDir, ...env })
    expect({ code, stderr: stderr.trim() }).toEqual({ code: 1, stderr: line })
    expectNoStack(stdout + stderr)
  }, 90_000)
})

describe("under Deno", () => {
  const url = inject("postgresUrl")
  /** A database for the Deno servers: the suite's Postgres (fast to boot), else an embedded one. */
  let database: Record<string, string>
  let drop = async () => {}
  beforeAll(async () => {
    if (url === null) {
      database = { DATA_DIR: tempDir() }
      return
    }
    const db = await freshDatabase(url, "ops_deno")
    database = { DATA_DIR: tempDir(), DATABASE_URL: db.url }
    drop = db.drop
  })
  afterAll(() => drop())

  it("logs draining and stopped on SIGTERM, in order, and exits 0", async () => {
    const server = await startServer("deno", database, 90_000)
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200)
    expect(await server.stop()).toBe(0)
    const messages = jsonLines(server.output()).map((l) => String(l["message"]))
    const at = (pattern: RegExp) => messages.findIndex((m) => pattern.test(m))
    const order = [/^Listening on/, /^Stopping$/, /^Draining: 0 request\(s\) in flight$/, /^Stopped \(\d+ ms\)$/].map(
      at
    )
    expect(order, server.output()).toEqual([...order].sort((a, b) => a - b))
    expect(order.every((i) => i >= 0), server.output()).toBe(true)
  }, 120_000)

  describe("a start that cannot succeed", () => {
    let busy: Server
    let busyPort: number
    beforeAll(async () => {
      busyPort = await freePort()
      busy = createServer()
      await new Promise<void>((done) => busy.listen(busyPort, "127.0.0.1", done))
    })
    afterAll(() => new Promise((done) => busy.close(done)))

    it.each<[Record<string, string>, string]>([
      [{ PORT: "abc" }, "Configuration error: PORT: expected an integer value but received \"abc\""],
      [{ SECRETS_KEY: "not-hex" }, "Configuration error: SECRETS_KEY: must be 64 hex digits"],
      [
        { CARRIER: "telnyx", TELNYX_API_KEY: "KEY_x" },
        "Configuration error: CARRIER=telnyx needs TELNYX_PUBLIC_KEY, TELNYX_MESSAGING_PROFILE_ID, TELNYX_CONNECTION_ID"
      ],
      // The port another process listens on.
      [{ PORT: "busy" }, "Port busy is already in use (HOST 127.0.0.1); set PORT to another port"]
    ])("%o prints one line naming it and exits 1", async (env, line) => {
      const port = env["PORT"] === "busy" ? String(busyPort) : (env["PORT"] ?? "0")
      const { code, stdout, stderr } = await runUntilExit({ ...database, ...env, PORT: port }, 90_000, "deno")
      expect({ code, stderr: stderr.trim() }).toEqual({ code: 1, stderr: line.replace("busy", port) })
      expectNoStack(stdout + stderr)
    }, 120_000)
  })
})
