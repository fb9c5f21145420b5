/**
 * adapters/http/router.ts serves as HttpApiBuilder would: the same requests get the same status,
 * headers and body. Each comparison is the fast path's switch (adapters/fastPath.ts) flipped: on,
 * router.ts's group and web handler; off, HttpApiBuilder.group and HttpApiBuilder's app.
 * - The app, served both ways over the same stores: this compares the groups, the routing, the
 *   contexts and the platform middleware around them.
 * - A small API whose one group is built by the same function both ways: this compares the handler
 *   path itself (decoders in their order, success encodings, raw handlers, security middleware,
 *   error encoding), and shows the switch off is the library's own group.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiError,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  HttpServer,
  HttpServerResponse
} from "@effect/platform"
import { Context, Effect, Layer, Logger, LogLevel, Option, Redacted, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FastPath from "../../adapters/fastPath.ts"
import { toWebHandler } from "../../adapters/http/app.ts"
import { HttpAppLive } from "../../adapters/http/app.ts"
import { group } from "../../adapters/http/router.ts"
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
  const served = toWebHandler(
    Layer.mergeAll(
      HttpAppLive({ adminToken: Option.some(Redacted.make(ADMIN_TOKEN)), testHelpers: true }),
      HttpServer.layerContext,
      Logger.minimumLogLevel(LogLevel.Warning),
      Layer.setTracerEnabled(false)
    ).pipe(Layer.provide(Layer.succeedContext(context.context)), Layer.provideMerge(FastPath.layer(false)))
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

describe("the app: router.ts against HttpApiBuilder's group and serving (FAST_PATH on and off)", () => {
  const key = () => ({ authorization: `Bearer ${app.testKey}` })
  const cases: ReadonlyArray<[string, () => [string, RequestInit & { json?: unknown }]]> = [
    ["a read", () => [`/v1/api/contacts/${contactId}`, { headers: key() }]],
    ["an unknown id", () => ["/v1/api/contacts/01a21198-c398-7000-b35f-2897e71eb2d8", { headers: key() }]],
    ["a malformed id", () => ["/v1/api/contacts/not-a-uuid", { headers: key() }]],
    ["a list with its query", () => ["/v1/api/contacts?limit=5&q=ada", { headers: key() }]],
    ["a query outside its bounds", () => ["/v1/api/contacts?limit=0", { headers: key() }]],
    ["an unknown query parameter", () => ["/v1/api/contacts?nope=1", { headers: key() }]],
    [
      "a body its schema refuses",
      () => ["/v1/api/contacts", { method: "POST", headers: key(), json: { firstName: 7 } }]
    ],
    [
      "malformed JSON",
      () => ["/v1/api/contacts", {
        method: "POST",
        headers: { ...key(), "content-type": "application/json" },
        body: "{"
      }]
    ],
    [
      "a header its schema refuses",
      () => ["/v1/api/messages", {
        method: "POST",
        headers: { ...key(), "idempotency-key": "x".repeat(300) },
        json: { to: "+14155550123", body: "hi" }
      }]
    ],
    ["an unknown route", () => ["/v1/api/nothing-here", { headers: key() }]],
    ["a method the route lacks", () => [`/v1/api/contacts/${contactId}`, { method: "PUT", headers: key(), json: {} }]],
    ["HEAD of a read", () => [`/v1/api/contacts/${contactId}`, { method: "HEAD", headers: key() }]],
    [
      "a preflight",
      () => ["/v1/api/contacts", {
        method: "OPTIONS",
        headers: { origin: "https://example.com", "access-control-request-method": "POST" }
      }]
    ],
    ["no key", () => ["/v1/api/contacts", {}]],
    [
      "a key without the route's scope",
      () => ["/v1/api/webhooks", { headers: { authorization: `Bearer ${readOnlyKey}` } }]
    ],
    ["the admin API", () => ["/v1/admin/workspaces", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }]],
    [
      "the admin API with a wrong token",
      () => ["/v1/admin/workspaces", { headers: { authorization: "Bearer wrong" } }]
    ],
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

// ---- the handler path, against HttpApiBuilder's own group

class Caller extends Context.Tag("test/router/Caller")<Caller, string>() {}
class Nope
  extends Schema.TaggedError<Nope>()("Nope", { why: Schema.String }, HttpApiSchema.annotations({ status: 404 }))
{}
class Guard extends HttpApiMiddleware.Tag<Guard>()("test/router/Guard", {
  security: { bearer: HttpApiSecurity.bearer },
  provides: Caller,
  failure: HttpApiError.Unauthorized
}) {}
class Items extends HttpApiGroup.make("items")
  .add(
    HttpApiEndpoint.get("read", "/items/:id")
      .setPath(Schema.Struct({ id: Schema.NumberFromString }))
      .setUrlParams(
        Schema.Struct({ tags: Schema.optional(Schema.Array(Schema.String)), q: Schema.optional(Schema.String) })
      )
      .setHeaders(Schema.Struct({ "x-n": Schema.optional(Schema.NumberFromString) }))
      .addSuccess(
        Schema.Struct({
          id: Schema.Number,
          tags: Schema.optional(Schema.Array(Schema.String)),
          q: Schema.optional(Schema.String),
          n: Schema.optional(Schema.Number),
          text: Schema.String
        })
      )
      .addError(Nope)
  )
  .add(
    HttpApiEndpoint.post("create", "/items").setPayload(Schema.Struct({ name: Schema.String })).addSuccess(
      Schema.Struct({ name: Schema.String }),
      { status: 201 }
    )
  )
  .add(HttpApiEndpoint.get("text", "/text").addSuccess(HttpApiSchema.Text()))
  .add(HttpApiEndpoint.get("bytes", "/bytes").addSuccess(HttpApiSchema.Uint8Array()))
  .add(HttpApiEndpoint.post("empty", "/empty").addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.get("unknown", "/unknown").addSuccess(Schema.Unknown))
  .add(HttpApiEndpoint.get("raw", "/raw"))
  .add(
    HttpApiEndpoint.get("guarded", "/guarded").addSuccess(Schema.Struct({ caller: Schema.String })).middleware(Guard)
  )
  .add(
    HttpApiEndpoint.get("effectful", "/effectful/:id").setPath(
      Schema.Struct({ id: Schema.String.pipe(Schema.filterEffect(() => Effect.promise(() => Promise.resolve(true)))) })
    )
  )
{}
class ItemsApi extends HttpApi.make("items").add(Items) {}

const GuardLive = Layer.succeed(
  Guard,
  Guard.of({
    bearer: (
      token
    ) => (Redacted.value(token) === "good" ? Effect.succeed("ada") : Effect.fail(new HttpApiError.Unauthorized()))
  })
)
const build = (handlers: any) =>
  handlers
    .handle("read", ({ path, urlParams, headers }: any) =>
      path.id === 404
        ? Effect.fail(new Nope({ why: "four oh four" }))
        : Effect.succeed({
          id: path.id,
          ...urlParams,
          ...(headers["x-n"] === undefined ? {} : { n: headers["x-n"] }),
          text: "Zoë ✓ 😀"
        }))
    .handle("create", ({ payload }: any) => Effect.succeed({ name: payload.name }), { uninterruptible: true })
    .handle("text", () => Effect.succeed("plain Zoë"))
    .handle("bytes", () => Effect.succeed(new TextEncoder().encode("bytes")))
    .handle("empty", () => Effect.void)
    .handle("unknown", () => Effect.succeed(undefined))
    .handleRaw("raw", ({ request }: any) => Effect.succeed(HttpServerResponse.text(`raw ${request.url}`)))
    .handle("guarded", () => Effect.map(Caller, (caller) => ({ caller })))
    .handle("effectful", () => Effect.void)

const itemsApp = (served: "library" | "ours") => {
  // `build` is typed loosely to serve both sides; the layer needs nothing once Guard is given.
  const groupLive = group(ItemsApi, "items", build) as Layer.Layer<HttpApiGroup.ApiGroup<"items", "items">>
  const layer = Layer.mergeAll(
    HttpApiBuilder.api(ItemsApi).pipe(Layer.provide(groupLive), Layer.provide(GuardLive)),
    HttpServer.layerContext
  )
  return toWebHandler(layer.pipe(Layer.provideMerge(FastPath.layer(served === "ours"))))
}

describe("router.ts's handler path against HttpApiBuilder.group (FAST_PATH on and off)", () => {
  const servers = { library: itemsApp("library"), ours: itemsApp("ours") }
  afterAll(async () => {
    await servers.library.dispose()
    await servers.ours.dispose()
  })
  const cases: ReadonlyArray<[string, string, RequestInit]> = [
    ["a read with path, query and header", "/items/7?tags=a&q=z", { headers: { "x-n": "3" } }],
    ["an array query given once and twice", "/items/7?tags=a&tags=b", {}],
    ["a path its schema refuses", "/items/seven", {}],
    ["a query its schema refuses", "/items/7?q=a&q=b", {}],
    ["a header its schema refuses", "/items/7", { headers: { "x-n": "many" } }],
    ["a declared error", "/items/404", {}],
    ["HEAD of a read", "/items/7", { method: "HEAD" }],
    ["a 201 with a body", "/items", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Zoë" })
    }],
    ["a body its schema refuses", "/items", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: 7 })
    }],
    ["a text answer", "/text", {}],
    ["a bytes answer", "/bytes", {}],
    ["no content", "/empty", { method: "POST" }],
    ["an undefined success", "/unknown", {}],
    ["a raw handler", "/raw?x=1", {}],
    ["a security middleware that provides", "/guarded", { headers: { authorization: "Bearer good" } }],
    ["a security middleware that refuses", "/guarded", { headers: { authorization: "Bearer bad" } }],
    ["an unknown route", "/nothing", {}]
  ]
  // The one place the two differ, which also shows the switch off runs HttpApiBuilder's own group.
  it("a request schema that needs asynchronous effects is a defect (500) here, not a 400 blaming the client", async () => {
    const ours = await servers.ours.handler(new Request("http://test.local/effectful/x"))
    const library = await servers.library.handler(new Request("http://test.local/effectful/x"))
    expect([ours.status, library.status]).toEqual([500, 204])
  })
  for (const [name, path, init] of cases) {
    it(`${name}: the same status, headers and body`, async () => {
      const ask = (server: { handler: (request: Request) => Promise<Response> }) =>
        server.handler(new Request(`http://test.local${path}`, init)).then(seen)
      expect(await ask(servers.ours)).toEqual(await ask(servers.library))
    })
  }
})
