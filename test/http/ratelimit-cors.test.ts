/** SPEC "Limits" (rate-limit headers, 429) and the CORS convention (any origin, no credentials). */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { makeTestApp } from "../support/app.ts"
import { bearer, expectError, expectRateHeaders } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const preflight = (app: App, path = "/v1/api/contacts", method = "POST") =>
  app.fetch(path, {
    method: "OPTIONS",
    headers: {
      origin: "https://client.example",
      "access-control-request-method": method,
      "access-control-request-headers": "authorization, content-type, x-request-id"
    }
  })

/** `RateLimit-Remaining` is `expected`, plus what refilled since `started` (10 a second at 600 a minute), however slow the machine. */
const expectRemaining = (res: Response, expected: number, started: number) => {
  const remaining = Number(res.headers.get("ratelimit-remaining"))
  expect(remaining).toBeGreaterThanOrEqual(expected)
  expect(remaining).toBeLessThanOrEqual(expected + Math.ceil((performance.now() - started) / 100))
}

describe("rate-limit headers", () => {
  let app: App
  beforeAll(async () => {
    app = await makeTestApp({ rateLimitPerMinute: 600 })
  })
  afterAll(() => app.close())

  it("are on success, error, unknown-route, unauthenticated, spec and preflight responses", async () => {
    const auth = bearer(app.testKey)
    const responses: Array<[string, Response]> = [
      ["success", await app.fetch("/v1/api/contacts", { headers: auth })],
      ["created", await app.fetch("/v1/api/contacts", { method: "POST", headers: auth, json: { firstName: "Ada" } })],
      ["400", await app.fetch("/v1/api/contacts?limit=0", { headers: auth })],
      ["404", await app.fetch(`/v1/api/contacts/${crypto.randomUUID()}`, { headers: auth })],
      ["404 route", await app.fetch("/v1/api/nowhere", { headers: auth })],
      ["401", await app.fetch("/v1/api/contacts")],
      ["openapi", await app.fetch("/v1/api/openapi.json")],
      ["preflight", await preflight(app)]
    ]
    for (const [label, res] of responses) {
      expect(res.headers.get("ratelimit-limit"), label).toBe("600")
      expectRateHeaders(res)
    }
  })

  it("count down per key", async () => {
    const key = (await app.createKey(app.workspaceId)).token
    const started = performance.now()
    const first = await app.fetch("/v1/api/contacts", { headers: bearer(key) })
    const second = await app.fetch("/v1/api/contacts", { headers: bearer(key) })
    expect(first.headers.get("ratelimit-remaining")).toBe("599")
    expectRemaining(second, 598, started)
    expect(Number(second.headers.get("ratelimit-reset"))).toBeGreaterThanOrEqual(1)
    expect(Number(second.headers.get("ratelimit-reset"))).toBeLessThanOrEqual(60)
  })

  it("charge a large body a token per 16 KiB besides its own, chunked or not", async () => {
    const key = (await app.createKey(app.workspaceId)).token
    const notes = Array.from({ length: 100 }, () => "n".repeat(10_000))
    const big = JSON.stringify({ firstName: "Big", notes }) // about 1,000 KB: 61 whole 16 KiB
    const cost = 1 + Math.floor(big.length / 16_384)
    const started = performance.now()
    const created = await app.fetch("/v1/api/contacts", {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json", "content-length": String(big.length) },
      body: big
    })
    expect(created.status).toBe(201)
    expect(created.headers.get("ratelimit-remaining")).toBe(String(600 - cost))
    // No Content-Length: the body read gives the size.
    const chunked = await app.fetch("/v1/api/contacts", {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: new Blob([big]).stream(),
      duplex: "half"
    } as RequestInit)
    expect(chunked.status).toBe(201)
    expectRemaining(chunked, 600 - 2 * cost, started)
  })

  it("count a failed request against the key too", async () => {
    const key = (await app.createKey(app.workspaceId)).token
    const started = performance.now()
    await app.fetch("/v1/api/contacts", { method: "POST", headers: bearer(key), json: { nope: 1 } })
    const res = await app.fetch("/v1/api/contacts", { headers: bearer(key) })
    expectRemaining(res, 598, started)
  })
})

describe("429 resource_exhausted", () => {
  let app: App
  beforeAll(async () => {
    app = await makeTestApp({ rateLimitPerMinute: 5 })
  })
  afterAll(() => app.close())

  it("answers the 6th request of one key with 429 and Retry-After, leaving other keys alone", async () => {
    const key = (await app.createKey(app.workspaceId)).token
    const other = (await app.createKey(app.workspaceId)).token
    for (let i = 0; i < 5; i++) {
      const res = await app.fetch("/v1/api/contacts", { headers: bearer(key) })
      expect(res.status).toBe(200)
      expect(res.headers.get("ratelimit-remaining")).toBe(String(4 - i))
    }
    const limited = await app.fetch("/v1/api/contacts", { headers: bearer(key) })
    const error = await expectError(limited, 429, "resource_exhausted")
    expect(error.message.length).toBeGreaterThan(0)
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(Number.isInteger(retryAfter)).toBe(true)
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(limited.headers.get("ratelimit-limit")).toBe("5")
    expect(limited.headers.get("ratelimit-remaining")).toBe("0")
    expect(limited.headers.get("access-control-allow-origin")).toBe("*")
    // Writes are limited too, and nothing is created.
    await expectError(
      await app.fetch("/v1/api/contacts", { method: "POST", headers: bearer(key), json: { firstName: "Over" } }),
      429,
      "resource_exhausted"
    )
    const fresh = await app.fetch("/v1/api/contacts", { headers: bearer(other) })
    expect(fresh.status).toBe(200)
    expect(fresh.headers.get("ratelimit-remaining")).toBe("4")
    expect(((await fresh.json()) as any).contacts.map((c: any) => c.firstName)).not.toContain("Over")
  })

  it("limits a key across workspaces independently", async () => {
    const b = await app.createWorkspace("Limited B")
    for (let i = 0; i < 5; i++) {
      expect((await app.fetch("/v1/api/contacts", { headers: bearer(b.key) })).status).toBe(200)
    }
    await expectError(await app.fetch("/v1/api/contacts", { headers: bearer(b.key) }), 429, "resource_exhausted")
  })
})

describe("unauthenticated floods", () => {
  let app: App
  beforeEach(async () => {
    app = await makeTestApp({ rateLimitPerMinute: 5 })
  })
  afterEach(() => app.close())

  const floods: Array<[string, Record<string, string>]> = [
    ["no header", {}],
    ["garbage bearer", { authorization: "Bearer garbage" }],
    ["well-formed unknown key", { authorization: `Bearer svc_live_${"q".repeat(40)}` }]
  ]

  it.each(floods)("are limited per address (%s): five 401s, then 429", async (_, headers) => {
    for (let i = 0; i < 5; i++) {
      const res = await app.fetch("/v1/api/contacts", { headers })
      await expectError(res, 401, "unauthenticated")
      expect(res.headers.get("ratelimit-remaining"), `request ${i + 1}`).toBe(String(4 - i))
    }
    const limited = await app.fetch("/v1/api/contacts", { headers })
    await expectError(limited, 429, "resource_exhausted")
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    // A valid key is still served: it has its own allowance.
    expect((await app.fetch("/v1/api/contacts", { headers: bearer(app.testKey) })).status).toBe(200)
  })

  it("are limited on unknown routes too", async () => {
    for (let i = 0; i < 5; i++) await expectError(await app.fetch("/v1/api/nowhere"), 404, "not_found")
    await expectError(await app.fetch("/v1/api/nowhere"), 429, "resource_exhausted")
  })
})

describe("CORS", () => {
  let app: App
  beforeAll(async () => {
    app = await makeTestApp()
  })
  afterAll(() => app.close())

  it("answers a preflight with 2xx, any origin and the headers a client needs", async () => {
    for (
      const [path, method] of [
        ["/v1/api/contacts", "POST"],
        [`/v1/api/contacts/${crypto.randomUUID()}`, "PATCH"],
        [`/v1/api/contacts/${crypto.randomUUID()}`, "DELETE"],
        ["/v1/api/contacts", "GET"]
      ] as const
    ) {
      const res = await preflight(app, path, method)
      expect(res.status).toBeGreaterThanOrEqual(200)
      expect(res.status).toBeLessThan(300)
      expect(res.headers.get("access-control-allow-origin")).toBe("*")
      const allowedHeaders = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase()
      expect(allowedHeaders).toContain("authorization")
      expect(allowedHeaders).toContain("content-type")
      expect(res.headers.get("access-control-allow-methods")).toContain(method)
      expect(res.headers.get("access-control-allow-credentials")).not.toBe("true")
      expectRateHeaders(res)
    }
  })

  it("answers a preflight without authentication and without consuming the key's allowance", async () => {
    const res = await preflight(app)
    expect(res.status).toBeLessThan(300)
    expect(await res.text()).toBe("")
  })

  it("puts the CORS headers on success and error responses and exposes the tracing headers", async () => {
    const responses = [
      await app.fetch("/v1/api/contacts", { headers: { ...bearer(app.testKey), origin: "https://client.example" } }),
      await app.fetch("/v1/api/contacts", { headers: { origin: "https://client.example" } }),
      await app.fetch("/v1/api/nowhere", { headers: { origin: "https://client.example" } }),
      await app.fetch("/v1/api/openapi.json", { headers: { origin: "https://client.example" } })
    ]
    for (const res of responses) {
      expect(res.headers.get("access-control-allow-origin"), `${res.status}`).toBe("*")
      expect(res.headers.get("access-control-allow-credentials")).not.toBe("true")
      const exposed = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/\s*,\s*/)
      for (const h of ["x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after"]) {
        expect(exposed, `${res.status}`).toContain(h)
      }
    }
  })
})

describe("behind a reverse proxy (TRUST_PROXY)", () => {
  /** Keyless requests until the per-address limit (2) refuses one; returns the statuses. */
  const flood = async (app: App, forwardedFor: string, n = 3) => {
    const statuses: Array<number> = []
    for (let i = 0; i < n; i++) {
      statuses.push((await app.fetch("/v1/api/contacts", { headers: { "x-forwarded-for": forwardedFor } })).status)
    }
    return statuses
  }

  it("off (the default): X-Forwarded-For is ignored, so two claimed clients share one bucket", async () => {
    const app = await makeTestApp({ rateLimitPerMinute: 2 })
    expect(await flood(app, "203.0.113.1", 2)).toEqual([401, 401])
    expect(await flood(app, "203.0.113.2", 1)).toEqual([429])
    await app.close()
  })

  it("one trusted proxy: each client it forwards has its own bucket, and a spoofed extra hop does not escape", async () => {
    const app = await makeTestApp({ rateLimitPerMinute: 2, trustProxy: 1 })
    expect(await flood(app, "203.0.113.1")).toEqual([401, 401, 429])
    expect(await flood(app, "203.0.113.2")).toEqual([401, 401, 429])
    // The client wrote an address of its own; the proxy appended the one it saw: still 203.0.113.1.
    expect(await flood(app, "198.51.100.7, 203.0.113.1", 1)).toEqual([429])
    expect(await flood(app, " 198.51.100.8 ,203.0.113.2", 1)).toEqual([429])
    // Unknown routes and the admin token's per-address bucket follow the same address.
    await expectError(
      await app.fetch("/v1/api/nowhere", { headers: { "x-forwarded-for": "203.0.113.1" } }),
      429,
      "resource_exhausted"
    )
    const admin = (forwardedFor: string) =>
      app.fetch("/v1/admin/workspaces/x", {
        headers: { authorization: "Bearer wrong", "x-forwarded-for": forwardedFor }
      }).then((r) => r.status)
    expect([
      await admin("203.0.113.9"),
      await admin("203.0.113.9"),
      await admin("203.0.113.9"),
      await admin("203.0.113.10")
    ]).toEqual([401, 401, 429, 401])
    await app.close()
  })

  it("two trusted proxies: the client is the second address from the right", async () => {
    const app = await makeTestApp({ rateLimitPerMinute: 2, trustProxy: 2 })
    expect(await flood(app, "203.0.113.1, 10.0.0.1")).toEqual([401, 401, 429])
    expect(await flood(app, "203.0.113.2, 10.0.0.1")).toEqual([401, 401, 429])
    expect(await flood(app, "6.6.6.6, 203.0.113.2, 10.0.0.2", 1)).toEqual([429])
    await app.close()
  })
})
