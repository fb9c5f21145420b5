/**
 * adapters/http/router.ts serves the API as HttpApiBuilder would: the same requests, sent to the
 * app served both ways over the same stores, get the same status, headers and body. The groups are
 * router.ts's in both (HttpApiBuilder's serving then merges each group's context per request).
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HttpAppLive } from "../../adapters/http/app.ts"
import { withBodyLimit } from "../../adapters/http/web.ts"
import { ADMIN_TOKEN, makeTestApp } from "../support/app.ts"

let app: Awaited<ReturnType<typeof makeTestApp>>
let library: (request: Request) => Promise<Response>
let disposeLibrary: () => Promise<void>
let contactId = ""
let readOnlyKey = ""

beforeAll(async () => {
  app = await makeTestApp()
  const context = await app.runtime.runtime()
  const served = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(
      HttpAppLive({ adminToken: Option.some(Redacted.make(ADMIN_TOKEN)), testHelpers: true, telnyxPublicKey: Option.none() }),
      HttpServer.layerContext,
      Logger.minimumLogLevel(LogLevel.Warning),
      Layer.setTracerEnabled(false)
    ).pipe(Layer.provide(Layer.succeedContext(context.context)))
  )
  library = withBodyLimit(served.handler)
  disposeLibrary = served.dispose
  const created = await app.fetch("/v1/api/contacts", {
    method: "POST",
    headers: { authorization: `Bearer ${app.testKey}` },
    json: { firstName: "Ada", phones: [{ value: "+14155550123" }] }
  })
  contactId = ((await created.json()) as { contact: { id: string } }).contact.id
  readOnlyKey = (await app.createKey(app.workspaceId, { scopes: ["contacts:read"] })).token
})
afterAll(async () => {
  await disposeLibrary()
  await app.close()
})

/** What a client can see of an answer; the rate limit's remaining count moves with every request. */
const seen = async (res: Response) => {
  const headers: Array<string> = []
  res.headers.forEach((value, name) => {
    if (name !== "ratelimit-remaining" && name !== "ratelimit-reset") headers.push(`${name}: ${value}`)
  })
  headers.sort()
  return { status: res.status, headers, body: await res.text() }
}

const both = async (path: string, init: RequestInit & { json?: unknown } = {}) => {
  const headers = new Headers(init.headers)
  headers.set("x-request-id", "req_parity")
  let body = init.body
  if (init.json !== undefined) {
    body = JSON.stringify(init.json)
    if (!headers.has("content-type")) headers.set("content-type", "application/json")
  }
  const request = () => new Request(`http://test.local${path}`, { ...init, headers, body: body ?? null })
  const ours = await seen(await app.fetch(path, { ...init, headers, body: body ?? null }))
  const theirs = await seen(await library(request()))
  return { ours, theirs }
}

describe("router.ts against HttpApiBuilder's serving", () => {
  const key = () => ({ authorization: `Bearer ${app.testKey}` })
  const cases: ReadonlyArray<[string, () => [string, RequestInit & { json?: unknown }]]> = [
    ["a read", () => [`/v1/api/contacts/${contactId}`, { headers: key() }]],
    ["an unknown id", () => ["/v1/api/contacts/01a21198-c398-7000-b35f-2897e71eb2d8", { headers: key() }]],
    ["a malformed id", () => ["/v1/api/contacts/not-a-uuid", { headers: key() }]],
    ["a list with its query", () => ["/v1/api/contacts?limit=5&q=ada", { headers: key() }]],
    ["a query outside its bounds", () => ["/v1/api/contacts?limit=0", { headers: key() }]],
    ["an unknown query parameter", () => ["/v1/api/contacts?nope=1", { headers: key() }]],
    ["a body its schema refuses", () => ["/v1/api/contacts", { method: "POST", headers: key(), json: { firstName: 7 } }]],
    ["malformed JSON", () => ["/v1/api/contacts", { method: "POST", headers: { ...key(), "content-type": "application/json" }, body: "{" }]],
    ["a header its schema refuses", () => ["/v1/api/messages", { method: "POST", headers: { ...key(), "idempotency-key": "x".repeat(300) }, json: { to: "+14155550123", body: "hi" } }]],
    ["an unknown route", () => ["/v1/api/nothing-here", { headers: key() }]],
    ["a method the route lacks", () => [`/v1/api/contacts/${contactId}`, { method: "PUT", headers: key(), json: {} }]],
    ["HEAD of a read", () => [`/v1/api/contacts/${contactId}`, { method: "HEAD", headers: key() }]],
    ["a preflight", () => ["/v1/api/contacts", { method: "OPTIONS", headers: { origin: "https://example.com", "access-control-request-method": "POST" } }]],
    ["no key", () => ["/v1/api/contacts", {}]],
    ["a key without the route's scope", () => ["/v1/api/webhooks", { headers: { authorization: `Bearer ${readOnlyKey}` } }]],
    ["the admin API", () => ["/v1/admin/workspaces", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }]],
    ["the admin API with a wrong token", () => ["/v1/admin/workspaces", { headers: { authorization: "Bearer wrong" } }]],
    ["the OpenAPI document", () => ["/v1/api/openapi.json", {}]],
    ["a probe", () => ["/healthz", {}]]
  ]
  for (const [name, make] of cases) {
    it(`${name}: the same status, headers and body`, async () => {
      const [path, init] = make()
      const { ours, theirs } = await both(path, init)
      expect(ours).toEqual(theirs)
    })
  }
})
