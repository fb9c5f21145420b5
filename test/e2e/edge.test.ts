/**
 * End to end, issue 15 (hostile input at the edge): the real Node server process on embedded PGlite,
 * driven over raw sockets. What Node's parser refuses and requests that arrive too slowly get the
 * envelope within the configured timeouts (under Deno: a body that arrives too slowly); caller-supplied
 * URLs reach neither an answer nor the log with their credentials or a raw newline.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exchange, expectEnvelope } from "../support/rawHttp.ts"
import { type RunningServer, startServer } from "../support/server.ts"

const ADMIN_TOKEN = "e2e-edge-admin"
const NUMBER = "+14155550100"
const REQUEST_TIMEOUT_MS = 2000
const HEADERS_TIMEOUT_MS = 1000

let server: RunningServer
let port = 0
const dataDir = mkdtempSync(join(tmpdir(), "switchboard-e2e-edge-"))

beforeAll(async () => {
  server = await startServer("node", {
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS)
  })
  port = Number(new URL(server.baseUrl).port)
}, 90_000)
afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const call = async (path: string, init: { json?: unknown; token?: string } = {}) => {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: init.json === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${init.token ?? server.testKey}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" })
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
  })
  return { status: res.status, body: (await res.json()) as any }
}

describe("Node's parser and timeouts answer the envelope (defects 5 and 6)", () => {
  it("a malformed request is 400, a URL over 16 KB is 431, each with a request id", async () => {
    expectEnvelope(await exchange(port, ["GET /v1/api/contacts HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n"]), 400)
    expectEnvelope(
      await exchange(port, [`GET /v1/api/contacts?q=${"a".repeat(17 * 1024)} HTTP/1.1\r\nHost: a\r\n\r\n`]),
      431
    )
  })

  it("a body that trickles in is cut with 408 at REQUEST_TIMEOUT_MS, and logged as 408 once", async () => {
    const head =
      `POST /v1/api/contacts HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${server.testKey}\r\nX-Request-Id: trickle_1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"firstName":"`
    const res = await exchange(port, [head, ...Array.from({ length: 100 }, () => ["a", 100]).flat()])
    expect(expectEnvelope(res, 408, /^trickle_1$/)).toMatch(/the whole request 2 s/)
    expect(res.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50)
    expect(res.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + 1500)
    // The app's own answer to the body it could not read is never sent: the log says what the client got.
    const lines = () => server.output().split("\n").filter((l) => l.includes("trickle_1"))
    // A refusal line of the server's own would come first, before the app's answer.
    for (let i = 0; i < 100 && !lines().some((l) => l.includes("POST /v1/api/contacts")); i++) {
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(lines()).toEqual([expect.stringMatching(/POST \/v1\/api\/contacts 408 /)])
  })

  it("a chunked body past 1 MiB is refused once 1 MiB has arrived, without waiting for (or reading) the rest", async () => {
    const head =
      `POST /v1/api/contacts HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${server.testKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    const data = `{"firstName":"Ada","notes":["${"y".repeat(1200 * 1024)}`
    // The body never ends: only a server that stops at the limit answers before REQUEST_TIMEOUT_MS (408).
    const res = await exchange(port, [
      head,
      `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`,
      REQUEST_TIMEOUT_MS * 3
    ])
    expect(expectEnvelope(res, 400)).toBe("Request body exceeds 1 MiB")
  })
})

describe("under Deno, whose server has no timeouts of its own", () => {
  it("a body that trickles in is answered 408 in the envelope at REQUEST_TIMEOUT_MS", async () => {
    const denoDir = mkdtempSync(join(tmpdir(), "switchboard-e2e-edge-deno-"))
    const deno = await startServer("deno", { DATA_DIR: denoDir, REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) })
    try {
      let sent = 0
      // A byte every 100 ms, for 10 s.
      const body = new ReadableStream<Uint8Array>({
        pull: async (c) => {
          await new Promise((r) => setTimeout(r, 100))
          if (sent++ > 100) c.close()
          else c.enqueue(new TextEncoder().encode(sent === 1 ? "{\"firstName\":\"" : "a"))
        }
      })
      const started = Date.now()
      const res = await fetch(`${deno.baseUrl}/v1/api/contacts`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${deno.testKey}`,
          "content-type": "application/json",
          "x-request-id": "deno_slow_1"
        },
        body,
        duplex: "half"
      } as RequestInit)
      expect(res.status).toBe(408)
      expect(res.headers.get("x-request-id")).toBe("deno_slow_1")
      expect(await res.json()).toEqual({
        error: {
          code: "invalid_argument",
          message: "The request body did not arrive within 2 s",
          requestId: "deno_slow_1"
        }
      })
      expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + 1500)
    } finally {
      await deno.stop()
      rmSync(denoDir, { recursive: true, force: true })
    }
  }, 90_000)
})

describe("caller-supplied URLs in answers and logs (defect 11)", () => {
  const secret = "hunter2-e2e"
  const forged = "level=ERROR message=forged-by-a-caller"

  it("a refused webhook URL is echoed without its credentials or a raw newline", async () => {
    const res = await call("/v1/api/webhooks", {
      json: { url: `https://ops:${secret}@hooks.example.com/in\n${forged}`, events: ["*"] }
    })
    expect(res.status).toBe(400)
    expect(res.body.error.message).toMatch(
      /^url https:\/\/hooks\.example\.com\/in\\u000alevel=ERROR .* credentials in URLs are not accepted$/
    )
    expect(res.body.error.message).not.toContain(secret)
  })

  it("inbound media that cannot be stored is logged without credentials, on one line", async () => {
    const workspaceId = /\(([0-9a-f-]{36})\) on first boot/.exec(server.output())?.[1]
    expect(
      (await call(`/v1/admin/workspaces/${workspaceId}/numbers`, { json: { e164: NUMBER }, token: ADMIN_TOKEN })).status
    ).toBe(201)
    const got = await call("/v1/api/test-helpers/inbound-messages", {
      json: {
        from: "+14155550123",
        to: NUMBER,
        body: "see attached",
        mediaUrls: [`https://ops:${secret}@media.example.com/a.png\n${forged}`]
      }
    })
    expect(got.status).toBe(201)
    expect(got.body.message.media).toEqual([])
    const started = Date.now()
    while (!server.output().includes("Inbound media could not be stored") && Date.now() - started < 5000) {
      await new Promise((r) => setTimeout(r, 50))
    }
    const lines = server.output().split("\n")
    // The URL as the warning shows it, escaped on its own line: the app writes the newline as
    // `\u000a`, and the JSON log line (LOG_FORMAT's default off a terminal) escapes that backslash.
    const shown = lines.find((l) => l.includes("media.example.com/a.png"))
    expect(shown).toContain("media.example.com/a.png\\\\u000alevel=ERROR")
    expect(server.output()).not.toContain(secret)
    expect(lines.filter((l) => l.startsWith(forged))).toEqual([])
  })
})
