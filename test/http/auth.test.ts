/** SPEC "Authentication": 401 for every bad key, 403 naming the scope, 404 across workspaces. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeTestApp } from "../support/app.ts"
import { bearer, expectError, tick } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let app: App
beforeAll(async () => {
  app = await makeTestApp()
})
afterAll(() => app.close())

const createContact = async (token: string, json: unknown) => {
  const res = await app.fetch("/v1/api/contacts", { method: "POST", headers: bearer(token), json })
  expect(res.status).toBe(201)
  return ((await res.json()) as any).contact
}

describe("authentication", () => {
  const wellFormedUnknown = `svc_test_${"A1b2C3d4E5".repeat(4)}`
  const cases: Array<[string, Record<string, string>]> = [
    ["a missing header", {}],
    ["a Basic header", { authorization: "Basic dXNlcjpwYXNz" }],
    ["Bearer with garbage", { authorization: "Bearer not-a-key" }],
    ["Bearer with nothing", { authorization: "Bearer " }],
    ["a well-formed but unknown key", { authorization: `Bearer ${wellFormedUnknown}` }],
    ["a well-formed unknown live key", { authorization: `Bearer svc_live_${"z".repeat(40)}` }],
    ["a key with the wrong prefix", { authorization: `Bearer sk_test_${"A".repeat(40)}` }]
  ]

  it.each(cases)("answers 401 unauthenticated for %s, with the same envelope", async (_, headers) => {
    const error = await expectError(await app.fetch("/v1/api/contacts", { headers }), 401, "unauthenticated")
    expect(error.message).toBe("Missing, malformed, unknown or revoked API key")
  })

  it("answers 401 on every contacts route, before validating the body or the id", async () => {
    await expectError(
      await app.fetch("/v1/api/contacts", { method: "POST", json: { nope: 1 } }),
      401,
      "unauthenticated"
    )
    await expectError(await app.fetch("/v1/api/contacts/not-a-uuid"), 401, "unauthenticated")
    await expectError(
      await app.fetch(`/v1/api/contacts/${crypto.randomUUID()}`, { method: "PATCH", json: { firstName: "x" } }),
      401,
      "unauthenticated"
    )
    await expectError(
      await app.fetch(`/v1/api/contacts/${crypto.randomUUID()}`, { method: "DELETE" }),
      401,
      "unauthenticated"
    )
  })

  it("accepts the valid key, and the bearer scheme case-insensitively", async () => {
    expect((await app.fetch("/v1/api/contacts", { headers: bearer(app.testKey) })).status).toBe(200)
    expect((await app.fetch("/v1/api/contacts", { headers: { authorization: `bearer ${app.testKey}` } })).status).toBe(
      200
    )
  })

  it("does not accept a key in the query string", async () => {
    for (const param of ["api_key", "access_token", "key", "token", "authorization"]) {
      await expectError(
        await app.fetch(`/v1/api/contacts?${param}=${encodeURIComponent(app.testKey)}`),
        401,
        "unauthenticated"
      )
    }
  })

  it("answers 401 for a revoked key from the moment it is revoked", async () => {
    const key = await app.createKey(app.workspaceId, { kind: "live" })
    expect((await app.fetch("/v1/api/contacts", { headers: bearer(key.token) })).status).toBe(200)
    const revoke = await app.admin(`/keys/${key.id}`, { method: "DELETE" })
    expect(revoke.status).toBe(200)
    expect(await revoke.json()).toEqual({ revoked: true })
    const error = await expectError(
      await app.fetch("/v1/api/contacts", { headers: bearer(key.token) }),
      401,
      "unauthenticated"
    )
    expect(error.message).toBe("Missing, malformed, unknown or revoked API key")
    // Other keys of the workspace keep working.
    expect((await app.fetch("/v1/api/contacts", { headers: bearer(app.testKey) })).status).toBe(200)
  })
})

describe("scopes", () => {
  let readOnly: string
  let contactId: string
  beforeAll(async () => {
    readOnly = (await app.createKey(app.workspaceId, { kind: "live", scopes: ["contacts:read"] })).token
    contactId = (await createContact(app.testKey, { firstName: "Scoped" })).id
  })

  it("lets a contacts:read key list and get", async () => {
    const list = await app.fetch("/v1/api/contacts", { headers: bearer(readOnly) })
    expect(list.status).toBe(200)
    expect(((await list.json()) as any).contacts.map((c: any) => c.id)).toContain(contactId)
    const get = await app.fetch(`/v1/api/contacts/${contactId}`, { headers: bearer(readOnly) })
    expect(get.status).toBe(200)
    expect(((await get.json()) as any).contact.firstName).toBe("Scoped")
  })

  it("answers 403 permission_denied naming contacts:write on every write", async () => {
    const writes: Array<[string, RequestInit & { json?: unknown }]> = [
      ["/v1/api/contacts", { method: "POST", json: { firstName: "Nope" } }],
      [`/v1/api/contacts/${contactId}`, { method: "PATCH", json: { firstName: "Nope" } }],
      [`/v1/api/contacts/${contactId}`, { method: "DELETE" }]
    ]
    for (const [path, init] of writes) {
      const error = await expectError(
        await app.fetch(path, { ...init, headers: bearer(readOnly) }),
        403,
        "permission_denied"
      )
      expect(error.message).toContain("contacts:write")
    }
    // Nothing changed.
    const get = await app.fetch(`/v1/api/contacts/${contactId}`, { headers: bearer(app.testKey) })
    expect(((await get.json()) as any).contact.firstName).toBe("Scoped")
  })

  it("answers 403 naming contacts:read to a key with only contacts:write", async () => {
    const writeOnly = (await app.createKey(app.workspaceId, { scopes: ["contacts:write"] })).token
    const error = await expectError(
      await app.fetch("/v1/api/contacts", { headers: bearer(writeOnly) }),
      403,
      "permission_denied"
    )
    expect(error.message).toContain("contacts:read")
    const get = await app.fetch(`/v1/api/contacts/${contactId}`, { headers: bearer(writeOnly) })
    expect((await expectError(get, 403, "permission_denied")).message).toContain("contacts:read")
  })

  it("answers 403 to a key with unrelated scopes", async () => {
    const other = (await app.createKey(app.workspaceId, { scopes: ["webhooks:manage", "numbers:read"] })).token
    const error = await expectError(
      await app.fetch("/v1/api/contacts", { headers: bearer(other) }),
      403,
      "permission_denied"
    )
    expect(error.message).toContain("contacts:read")
  })
})

describe("workspace isolation", () => {
  let keyB: string
  let contactA: any
  beforeAll(async () => {
    keyB = (await app.createWorkspace("Workspace B")).key
    contactA = await createContact(app.testKey, { firstName: "Alice", company: "Isolated Inc", phone: "+14155550111" })
  })

  it("answers 404 to another workspace's key for GET, PATCH and DELETE", async () => {
    const path = `/v1/api/contacts/${contactA.id}`
    const get = await expectError(await app.fetch(path, { headers: bearer(keyB) }), 404, "not_found")
    await expectError(
      await app.fetch(path, { method: "PATCH", headers: bearer(keyB), json: { firstName: "Mallory" } }),
      404,
      "not_found"
    )
    await expectError(await app.fetch(path, { method: "DELETE", headers: bearer(keyB) }), 404, "not_found")
    // The same answer as for an id that exists nowhere.
    const unknown = await expectError(
      await app.fetch(`/v1/api/contacts/${crypto.randomUUID()}`, { headers: bearer(keyB) }),
      404,
      "not_found"
    )
    expect(get.message).toBe(unknown.message)
    // A's contact is untouched.
    const res = await app.fetch(path, { headers: bearer(app.testKey) })
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).contact).toEqual(contactA)
  })

  it("never lists another workspace's contacts, with or without a search", async () => {
    await tick()
    const mine = await createContact(keyB, { firstName: "Bob", company: "Isolated Inc" })
    for (const query of ["", "?q=isolated", "?q=alice", "?q=4155550111", "?limit=200"]) {
      const res = await app.fetch(`/v1/api/contacts${query}`, { headers: bearer(keyB) })
      expect(res.status).toBe(200)
      const ids = ((await res.json()) as any).contacts.map((c: any) => c.id)
      expect(ids).not.toContain(contactA.id)
      if (query === "" || query === "?q=isolated") expect(ids).toEqual([mine.id])
    }
    const resA = await app.fetch("/v1/api/contacts?q=isolated", { headers: bearer(app.testKey) })
    expect(((await resA.json()) as any).contacts.map((c: any) => c.id)).toEqual([contactA.id])
  })

  it("does not adopt another workspace's contact by phone", async () => {
    const created = await createContact(keyB, { phone: "+14155550111" })
    expect(created.id).not.toBe(contactA.id)
  })

  it("answers 404 for malformed ids, like unknown ones", async () => {
    for (const id of ["not-a-uuid", "123", `${contactA.id}x`, contactA.id.toUpperCase().replace(/-/g, ""), "%20"]) {
      const path = `/v1/api/contacts/${id}`
      await expectError(await app.fetch(path, { headers: bearer(app.testKey) }), 404, "not_found")
      await expectError(
        await app.fetch(path, { method: "PATCH", headers: bearer(app.testKey), json: { firstName: "x" } }),
        404,
        "not_found"
      )
      await expectError(await app.fetch(path, { method: "DELETE", headers: bearer(app.testKey) }), 404, "not_found")
    }
  })
})
