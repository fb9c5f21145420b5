/**
 * Issue 15's defects, each as the request that reproduced it: bounded work before decoding, text
 * checked once at the edge, scopes before bodies, scoped test helpers, and an admin API that keyless
 * traffic cannot rate-limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InputBounds } from "../../core/kernel/input.ts"
import { makeTestApp } from "../support/app.ts"
import { freshPglite } from "../support/pglite.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { bearer, expectError } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let app: App
let readOnly: string
// On PGlite: NUL bytes used to reach Postgres, which refuses them (a 500), where the memory stores did not.
beforeAll(async () => {
  app = await makeTestApp({ stores: sqlStores(freshPglite("migrated")) })
  readOnly = (await app.createKey(app.workspaceId, { scopes: ["contacts:read"] })).token
})
afterAll(() => app.close())

const post = (path: string, token: string, body: string, method = "POST") =>
  app.fetch(path, { method, headers: { ...bearer(token), "content-type": "application/json" }, body })

const nested = (depth: number) => `{"firstName":"a","properties":{"x":${"[".repeat(depth)}${"]".repeat(depth)}}}`

describe("bounded work before decoding", () => {
  it("refuses a huge array by its length, before any element is decoded", async () => {
    const body = JSON.stringify({ firstName: "a", tags: Array.from({ length: 200_000 }, () => "a") })
    const error = await expectError(await post("/v1/api/contacts", app.testKey, body), 400, "invalid_argument")
    expect(error.message).toBe(`tags: more than ${InputBounds.arrayItems} items`)
  })

  it("refuses an object with 60,000 keys by its key count", async () => {
    const properties = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, "v"]))
    const error = await expectError(
      await post("/v1/api/contacts", app.testKey, JSON.stringify({ firstName: "a", properties })),
      400,
      "invalid_argument"
    )
    expect(error.message).toBe(`properties: more than ${InputBounds.objectKeys} keys`)
  })

  it("refuses many small values in all", async () => {
    const notes = Array.from({ length: 30 }, () => Array.from({ length: 900 }, () => "n"))
    const error = await expectError(
      await post("/v1/api/contacts", app.testKey, JSON.stringify({ firstName: "a", notes })),
      400,
      "invalid_argument"
    )
    expect(error.message).toBe(`body: more than ${InputBounds.values} values in all`)
  })

  it("answers 400, never 500, to a body nested 3,000 deep, on public and admin routes", async () => {
    const error = await expectError(await post("/v1/api/contacts", app.testKey, nested(3_000)), 400, "invalid_argument")
    expect(error.message).toBe(
      `properties.x.0.0.0.0.0.0.0.0.0.0.0.0.0.0: nested deeper than ${InputBounds.depth} levels`
    )
    await expectError(
      await post("/v1/admin/workspaces", "admin-secret-for-tests", nested(3_000)),
      400,
      "invalid_argument"
    )
    await expectError(
      await post(`/v1/admin/workspaces/${app.workspaceId}`, "admin-secret-for-tests", nested(3_000), "PATCH"),
      400,
      "invalid_argument"
    )
  })

  it("lets a body within the bounds reach the route's own validation", async () => {
    const error = await expectError(await post("/v1/api/contacts", app.testKey, nested(3)), 400, "invalid_argument")
    expect(error.message).toMatch(/^properties\.x: /)
    const tags = Array.from({ length: 101 }, (_, i) => `t${i}`)
    expect(
      (await expectError(
        await post("/v1/api/contacts", app.testKey, JSON.stringify({ tags })),
        400,
        "invalid_argument"
      )).message
    ).toMatch(/^tags: /)
  })

  it("checks the key's scope before reading the body: 403, not 400, for a bad or huge body", async () => {
    await expectError(
      await post("/v1/api/contacts", readOnly, "{\"firstName\": 12, \"nope\": true}"),
      403,
      "permission_denied"
    )
    await expectError(await post("/v1/api/contacts", readOnly, "not json"), 403, "permission_denied")
    const huge = JSON.stringify({ tags: Array.from({ length: 200_000 }, () => "a") })
    const error = await expectError(await post("/v1/api/contacts", readOnly, huge), 403, "permission_denied")
    expect(error.message).toBe("This key lacks the scope contacts:write")
    await expectError(
      await post("/v1/api/contacts/not-an-id", readOnly, nested(3_000), "PATCH"),
      403,
      "permission_denied"
    )
  })
})

describe("text is checked once, at the edge", () => {
  it("answers 404 for a NUL or an undecodable path segment where an id goes", async () => {
    for (
      const [method, path] of [
        ["PATCH", "/v1/api/contacts/%00"],
        ["GET", "/v1/api/contacts/%00"],
        ["POST", "/v1/api/webhooks/%00/rotate"],
        ["GET", "/v1/api/conversations/a%00b"],
        ["GET", "/v1/api/contacts/%ED%A0%80"],
        ["GET", "/v1/api/contacts/%E0%A4%A"]
      ] as const
    ) {
      const res = await app.fetch(path, {
        method,
        headers: { ...bearer(app.testKey), "content-type": "application/json" },
        body: method === "GET" ? null : "{}"
      })
      await expectError(res, 404, "not_found")
    }
  })

  it("answers 400 for NUL in a query parameter, naming it", async () => {
    const error = await expectError(
      await app.fetch("/v1/api/contacts?q=a%00b", { headers: bearer(app.testKey) }),
      400,
      "invalid_argument"
    )
    expect(error.message).toBe("q: must not contain NUL characters")
    await expectError(
      await app.fetch("/v1/api/messages/search?q=%00", { headers: bearer(app.testKey) }),
      400,
      "invalid_argument"
    )
  })

  it("answers 400 for NUL or a lone surrogate in any body string, admin fields included", async () => {
    const cases: Array<[string, string, string, string]> = [
      ["POST", "/v1/api/contacts", app.testKey, "{\"firstName\":\"a\\u0000b\"}"],
      ["POST", "/v1/api/contacts", app.testKey, "{\"firstName\":\"\\ud800\"}"],
      ["POST", "/v1/api/contacts", app.testKey, "{\"properties\":{\"k\\u0000\":\"v\"}}"],
      [
        "POST",
        "/v1/api/webhooks",
        app.testKey,
        "{\"url\":\"https://example.com/\\u0000\",\"events\":[\"contact.created\"]}"
      ],
      [
        "PATCH",
        `/v1/admin/workspaces/${app.workspaceId}`,
        "admin-secret-for-tests",
        "{\"billing\":{\"ownerEmail\":\"a\\u0000@example.com\"}}"
      ],
      [
        "PATCH",
        `/v1/admin/workspaces/${app.workspaceId}`,
        "admin-secret-for-tests",
        "{\"billing\":{\"plan\":\"pro\\u0000\"}}"
      ]
    ]
    for (const [method, path, token, body] of cases) {
      const error = await expectError(await post(path, token, body, method), 400, "invalid_argument")
      expect(error.message, body).toMatch(/NUL characters|lone surrogate/)
    }
  })

  it("keeps well-formed text outside the BMP (a surrogate pair) as it was sent", async () => {
    const res = await post("/v1/api/contacts", app.testKey, JSON.stringify({ firstName: "Ada 🚀" }))
    expect(res.status).toBe(201)
    expect(((await res.json()) as any).contact.firstName).toBe("Ada 🚀")
  })
})

describe("test helpers need the scopes of what they imitate", () => {
  it("refuses a contacts:read test key, and accepts one with messages:send and conversations:write", async () => {
    await app.admin(`/workspaces/${app.workspaceId}/numbers`, { method: "POST", json: { e164: "+14155550177" } })
    const inbound = JSON.stringify({ from: "+14155550123", to: "+14155550177", body: "hi" })
    const error = await expectError(
      await post("/v1/api/test-helpers/inbound-messages", readOnly, inbound),
      403,
      "permission_denied"
    )
    expect(error.message).toMatch(/messages:send|conversations:write/)
    const sendOnly = (await app.createKey(app.workspaceId, { scopes: ["messages:send"] })).token
    await expectError(await post("/v1/api/test-helpers/inbound-messages", sendOnly, inbound), 403, "permission_denied")
    await expectError(
      await post(
        "/v1/api/test-helpers/delivery-status",
        readOnly,
        JSON.stringify({ activityId: crypto.randomUUID(), status: "delivered" })
      ),
      403,
      "permission_denied"
    )
    const imitator = (await app.createKey(app.workspaceId, { scopes: ["messages:send", "conversations:write"] })).token
    const res = await post("/v1/api/test-helpers/inbound-messages", imitator, inbound)
    expect(res.status, await res.clone().text()).toBe(201)
  })
})

describe("admin API rate limit", () => {
  let limited: App
  beforeAll(async () => {
    limited = await makeTestApp({ rateLimitPerMinute: 20 })
  })
  afterAll(() => limited.close())

  it("is not exhausted by keyless requests from the same address", async () => {
    for (let i = 0; i < 25; i++) await limited.fetch("/v1/api/contacts")
    await expectError(await limited.fetch("/v1/api/contacts"), 429, "resource_exhausted")
    const res = await limited.admin(`/workspaces/${limited.workspaceId}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("ratelimit-limit")).toBe("20")
  })

  it("limits wrong admin tokens per address, apart from the operator's own requests", async () => {
    for (let i = 0; i < 20; i++) await limited.admin(`/workspaces/${limited.workspaceId}`, { headers: bearer("wrong") })
    await expectError(
      await limited.admin(`/workspaces/${limited.workspaceId}`, { headers: bearer("wrong") }),
      429,
      "resource_exhausted"
    )
    expect((await limited.admin(`/workspaces/${limited.workspaceId}`)).status).toBe(200)
  })
})
