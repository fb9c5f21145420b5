/** SPEC "Errors": every failure is `{error: {code, message, requestId}}`; X-Request-Id on everything. */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { withBodyLimit } from "../../adapters/http/web.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { makeTestApp } from "../support/app.ts"
import { bearer, expectError, expectRateHeaders, tick } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let app: App
let auth: Record<string, string>
beforeAll(async () => {
  app = await makeTestApp()
  auth = bearer(app.testKey)
})
afterAll(() => app.close())

const post = (body: BodyInit, headers: Record<string, string> = { "content-type": "application/json" }) =>
  app.fetch("/v1/api/contacts", { method: "POST", headers: { ...auth, ...headers }, body })

describe("request bodies", () => {
  it("rejects invalid JSON", async () => {
    for (const body of ["{bad", "{\"firstName\": \"x\"", "", "undefined", "{'firstName': 'x'}"]) {
      const error = await expectError(await post(body), 400, "invalid_argument")
      expect(error.message.toLowerCase(), body).toMatch(/json|body/)
    }
  })

  it("rejects a JSON array, number, string, boolean or null instead of an object", async () => {
    for (const body of ["[]", "[{\"firstName\":\"x\"}]", "42", "\"Ada\"", "true", "null"]) {
      const error = await expectError(await post(body), 400, "invalid_argument")
      expect(error.message, body).toMatch(/body/)
    }
  })

  it("rejects an unknown field, naming it", async () => {
    const error = await expectError(
      await app.fetch("/v1/api/contacts", {
        method: "POST",
        headers: auth,
        json: { firstName: "Ada", nickname: "Countess" }
      }),
      400,
      "invalid_argument"
    )
    expect(error.message).toContain("nickname")
  })

  it("rejects an unknown field on PATCH too, and changes nothing", async () => {
    const created = await app.fetch("/v1/api/contacts", { method: "POST", headers: auth, json: { firstName: "Ada" } })
    const id = ((await created.json()) as any).contact.id
    const error = await expectError(
      await app.fetch(`/v1/api/contacts/${id}`, {
        method: "PATCH",
        headers: auth,
        json: { firstName: "B", middleName: "x" }
      }),
      400,
      "invalid_argument"
    )
    expect(error.message).toContain("middleName")
    const get = await app.fetch(`/v1/api/contacts/${id}`, { headers: auth })
    expect(((await get.json()) as any).contact.firstName).toBe("Ada")
  })

  it("rejects an unknown query parameter, naming it like an unknown field, on routes with and without a query", async () => {
    const unknown = async (path: string, name: string) => {
      const error = await expectError(await app.fetch(path, { headers: auth }), 400, "invalid_argument")
      expect(error.message, path).toBe(`${name}: unknown field`)
    }
    await unknown("/v1/api/contacts?limt=5", "limt")
    await unknown("/v1/api/contacts?limit=5&q=a&extra=1", "extra")
    await unknown("/v1/api/messages/search?q=a&conversationId=x", "conversationId")
    await unknown("/v1/api/contacts/ct_unknown?expand=all", "expand")
    await unknown("/v1/api/numbers?x=1", "x")
    // The declared parameters still pass.
    expect((await app.fetch("/v1/api/contacts?limit=5&q=a", { headers: auth })).status).toBe(200)
  })

  it("answers a path with a trailing slash 404, not the route without it (`/conversations/` was the list, found by the fuzz suite)", async () => {
    for (
      const path of [
        "/v1/api/conversations/",
        "/v1/api/contacts/",
        "/v1/api/contacts/ct_1/",
        "/v1/api/contacts/?limit=1"
      ]
    ) {
      await expectError(await app.fetch(path, { headers: auth }), 404, "not_found")
    }
    expect((await app.fetch("/v1/api/conversations", { headers: auth })).status).toBe(200)
  })

  it("rejects a wrong type, naming the field and the expectation", async () => {
    const cases: Array<[unknown, string]> = [
      [{ firstName: 5 }, "firstName"],
      [{ firstName: "Ada", tags: "vip" }, "tags"],
      [{ firstName: "Ada", tags: ["vip", 3] }, "tags"],
      [{ firstName: "Ada", properties: { plan: 1 } }, "properties"],
      [{ firstName: "Ada", phones: [{ label: "home" }] }, "phones"],
      [{ firstName: "Ada", notes: "one" }, "notes"]
    ]
    for (const [json, field] of cases) {
      const error = await expectError(
        await app.fetch("/v1/api/contacts", { method: "POST", headers: auth, json }),
        400,
        "invalid_argument"
      )
      expect(error.message, JSON.stringify(json)).toContain(field)
    }
    const error = await expectError(
      await app.fetch("/v1/api/contacts", { method: "POST", headers: auth, json: { firstName: 5 } }),
      400,
      "invalid_argument"
    )
    expect(error.message).toMatch(/string/)
  })

  it("rejects a body over 1 MiB with 400", async () => {
    const big = JSON.stringify({ firstName: "Ada", notes: ["x".repeat(1024 * 1024)] })
    const error = await expectError(await post(big), 400, "invalid_argument")
    expect(error.message).toContain("1 MiB")
    // Just over the limit, without a declared length (a stream).
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"notes":["${"y".repeat(1024 * 1024)}"]}`))
        controller.close()
      }
    })
    const res = await app.fetch("/v1/api/contacts", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: stream,
      duplex: "half"
    } as RequestInit)
    expect((await expectError(res, 400, "invalid_argument")).message).toContain("1 MiB")
  })

  it("accepts a body just under 1 MiB to the size check (then validates it)", async () => {
    const body = JSON.stringify({ firstName: "Ada", notes: ["x".repeat(1024 * 1024 - 100)] })
    const error = await expectError(await post(body), 400, "invalid_argument")
    // Too long for a note, but not rejected for its size.
    expect(error.message).not.toContain("1 MiB")
    expect(error.message).toContain("notes")
  })

  it("rejects a non-JSON content type", async () => {
    for (
      const contentType of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "application/merge-patch+json",
        "application/jsonl"
      ]
    ) {
      const error = await expectError(
        await post("{\"firstName\":\"Ada\"}", { "content-type": contentType }),
        400,
        "invalid_argument"
      )
      expect(error.message).toContain("application/json")
    }
  })

  it("accepts application/json with a charset", async () => {
    const res = await post("{\"firstName\":\"Ada\"}", { "content-type": "application/json; charset=utf-8" })
    expect(res.status).toBe(201)
  })
})

describe("a body that does not arrive in time (the web handler: Deno and these tests)", () => {
  it("answers 408 in the envelope once the request timeout passes, without reaching the app", async () => {
    let reached = false
    const serve = withBodyLimit(async () => {
      reached = true
      return new Response("{}")
    }, 300)
    // One byte, then nothing: the stream never ends.
    const trickle = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode("{")) })
    const started = Date.now()
    const res = await serve(
      new Request("http://localhost/v1/api/contacts", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", "x-request-id": "slow_body_1" },
        body: trickle,
        duplex: "half"
      } as RequestInit)
    )
    const error = await expectError(res, 408, "invalid_argument")
    expect(error).toEqual({
      code: "invalid_argument",
      message: "The request body did not arrive within 0.3 s",
      requestId: "slow_body_1"
    })
    expect(res.headers.get("access-control-allow-origin")).toBe("*")
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    expect(reached).toBe(false)
  })
})

describe("routes", () => {
  it("answers 404 not_found for an unknown route, with or without a key", async () => {
    for (const path of ["/v1/api/nope", "/v1/api/contacts/x/y", "/", "/v2/api/contacts", "/v1/api"]) {
      await expectError(await app.fetch(path, { headers: auth }), 404, "not_found")
      await expectError(await app.fetch(path), 404, "not_found")
    }
  })

  it("answers an enveloped error for an unknown method on a known path", async () => {
    const put = await app.fetch("/v1/api/contacts", { method: "PUT", headers: auth, json: { firstName: "Ada" } })
    await expectError(put, 404, "not_found")
    await expectError(await app.fetch("/v1/api/contacts", { method: "DELETE", headers: auth }), 404, "not_found")
    await expectError(
      await app.fetch(`/v1/api/contacts/${crypto.randomUUID()}`, { method: "POST", headers: auth, json: {} }),
      404,
      "not_found"
    )
  })
})

describe("query parameters", () => {
  it.each(["0", "201", "abc", "-1", "1.5", "", "1e3"])("rejects limit=%s", async (limit) => {
    const error = await expectError(
      await app.fetch(`/v1/api/contacts?limit=${limit}`, { headers: auth }),
      400,
      "invalid_argument"
    )
    expect(error.message).toContain("limit")
  })

  it("accepts limit=1 and limit=200", async () => {
    expect((await app.fetch("/v1/api/contacts?limit=1", { headers: auth })).status).toBe(200)
    expect((await app.fetch("/v1/api/contacts?limit=200", { headers: auth })).status).toBe(200)
  })

  describe("cursors", () => {
    let cursor: string
    beforeAll(async () => {
      for (const name of ["Cursor One", "Cursor Two", "Cursor Three"]) {
        await app.fetch("/v1/api/contacts", { method: "POST", headers: auth, json: { firstName: name } })
        await tick()
      }
      const res = await app.fetch("/v1/api/contacts?q=cursor&limit=1", { headers: auth })
      cursor = ((await res.json()) as any).nextCursor
      expect(typeof cursor).toBe("string")
    })

    it("accepts the cursor verbatim", async () => {
      const res = await app.fetch(`/v1/api/contacts?q=cursor&limit=1&cursor=${encodeURIComponent(cursor)}`, {
        headers: auth
      })
      expect(res.status).toBe(200)
      expect(((await res.json()) as any).contacts).toHaveLength(1)
    })

    it("rejects a modified cursor", async () => {
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1)
      const tampered = [
        flip(cursor, 0),
        flip(cursor, cursor.length - 1),
        flip(cursor, cursor.indexOf(".") - 1),
        `${cursor}x`,
        cursor.slice(1),
        "garbage",
        `${cursor}.x`,
        "a.b"
      ]
      for (const bad of tampered) {
        const error = await expectError(
          await app.fetch(`/v1/api/contacts?q=cursor&limit=1&cursor=${encodeURIComponent(bad)}`, { headers: auth }),
          400,
          "invalid_argument"
        )
        expect(error.message).toContain("cursor")
      }
    })

    it("rejects a cursor replayed with a different q, or without one", async () => {
      for (const q of ["?q=other&", "?q=cursor%20one&", "?"]) {
        const error = await expectError(
          await app.fetch(`/v1/api/contacts${q}limit=1&cursor=${encodeURIComponent(cursor)}`, { headers: auth }),
          400,
          "invalid_argument"
        )
        expect(error.message).toContain("cursor")
      }
    })

    it("rejects a cursor from another workspace", async () => {
      const other = await app.createWorkspace("Cursor B")
      const error = await expectError(
        await app.fetch(`/v1/api/contacts?q=cursor&limit=1&cursor=${encodeURIComponent(cursor)}`, {
          headers: bearer(other.key)
        }),
        400,
        "invalid_argument"
      )
      expect(error.message).toContain("cursor")
    })
  })
})

describe("X-Request-Id", () => {
  it.each(["abc-123", "A_b-9", "x".repeat(64), "0"])("echoes a valid client id %s on success and error", async (id) => {
    const ok = await app.fetch("/v1/api/contacts", { headers: { ...auth, "x-request-id": id } })
    expect(ok.status).toBe(200)
    expect(ok.headers.get("x-request-id")).toBe(id)
    const bad = await app.fetch("/v1/api/contacts/nope", { headers: { ...auth, "x-request-id": id } })
    expect((await expectError(bad, 404, "not_found")).requestId).toBe(id)
  })

  it.each([
    ["65 characters", "x".repeat(65)],
    ["spaces", "abc def"],
    ["unicode", "café-123"],
    ["punctuation", "abc.def"],
    ["a slash", "a/b"]
  ])("replaces an invalid id (%s) with a generated one", async (_, id) => {
    // Headers must be ByteStrings: send unicode as its UTF-8 bytes read as latin1.
    const wire = Buffer.from(id, "utf8").toString("latin1")
    const res = await app.fetch("/v1/api/contacts/nope", { headers: { ...auth, "x-request-id": wire } })
    const error = await expectError(res, 404, "not_found")
    expect(error.requestId).not.toBe(wire)
    expect(error.requestId).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    const ok = await app.fetch("/v1/api/contacts", { headers: { ...auth, "x-request-id": wire } })
    expect(ok.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    expect(ok.headers.get("x-request-id")).not.toBe(wire)
  })

  it("generates a distinct id per request when none is sent", async () => {
    const ids = new Set<string>()
    for (let i = 0; i < 5; i++) {
      const res = await app.fetch("/v1/api/contacts", { headers: auth })
      const id = res.headers.get("x-request-id")
      expect(id).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      ids.add(id!)
    }
    expect(ids.size).toBe(5)
  })

  it("is on every kind of response", async () => {
    const responses = [
      await app.fetch("/v1/api/contacts", { headers: auth }),
      await app.fetch("/v1/api/contacts", { method: "POST", headers: auth, json: { firstName: "Ada" } }),
      await app.fetch("/v1/api/contacts"),
      await app.fetch("/v1/api/nope"),
      await app.fetch("/v1/api/openapi.json"),
      await app.fetch("/v1/api/contacts", {
        method: "OPTIONS",
        headers: { origin: "https://example.com", "access-control-request-method": "POST" }
      })
    ]
    for (const res of responses) {
      expect(res.headers.get("x-request-id"), `${res.status}`).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    }
  })
})

describe("defects", () => {
  let broken: App
  beforeAll(async () => {
    // The memory stores, with a ContactStore whose reads die.
    const dying = Layer.effect(
      ContactStore,
      Effect.map(ContactStore, (store) =>
        ContactStore.of({
          ...store,
          get: () => Effect.die(new Error("secret-connection-string: store exploded")),
          list: () => Effect.dieMessage("store exploded in list")
        }))
    )
    broken = await makeTestApp({ stores: Layer.provideMerge(dying, MemoryStores.layer) })
  })
  afterAll(() => broken.close())

  it("answers 500 internal with a request id and no stack trace or defect detail", async () => {
    for (const path of ["/v1/api/contacts", `/v1/api/contacts/${crypto.randomUUID()}`]) {
      const res = await broken.fetch(path, { headers: { ...bearer(broken.testKey), "x-request-id": "defect-1" } })
      const error = await expectError(res, 500, "internal")
      expect(error.requestId).toBe("defect-1")
      expect(error.message).toContain("defect-1")
      expect(error.message).not.toMatch(/exploded|secret|Error:/)
      expectRateHeaders(res)
    }
  })

  it("keeps serving the routes that still work", async () => {
    const res = await broken.fetch("/v1/api/contacts", {
      method: "POST",
      headers: bearer(broken.testKey),
      json: { firstName: "Ada" }
    })
    expect(res.status).toBe(201)
  })
})
