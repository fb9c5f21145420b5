/** The HTTP app in-process over the in-memory adapters, as a fetch-style handler. */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as RateLimit from "../../adapters/ratelimit/memory.ts"
import { HttpAppLive } from "../../adapters/http/app.ts"
import { withBodyLimit } from "../../adapters/http/web.ts"
import { CoreLive } from "../../core/layer.ts"
import { layerCursorCodec } from "../../core/pagination.ts"
import { Workspaces } from "../../core/workspaces/service.ts"

export const ADMIN_TOKEN = "admin-secret-for-tests"

export interface TestAppOptions {
  readonly rateLimitPerMinute?: number
  readonly adminToken?: string | null
  readonly stores?: Layer.Layer<any, any, never>
}

export const makeTestApp = async (options: TestAppOptions = {}) => {
  const base = Layer.mergeAll(
    CoreLive,
    RateLimit.layer(options.rateLimitPerMinute ?? 100_000)
  ).pipe(
    Layer.provideMerge(layerCursorCodec(crypto.getRandomValues(new Uint8Array(32)))),
    Layer.provideMerge(options.stores ?? MemoryStores.layer)
  )
  const adminToken = options.adminToken === null ? Option.none() : Option.some(Redacted.make(options.adminToken ?? ADMIN_TOKEN))
  const runtime = ManagedRuntime.make(base)
  const context = await runtime.runtime()
  const { handler: raw, dispose } = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(HttpAppLive({ adminToken }), HttpServer.layerContext).pipe(Layer.provide(Layer.succeedContext(context.context)))
  )
  const handler = withBodyLimit(raw)
  const fetch = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers)
    let body = init.body
    if (init.json !== undefined) {
      body = JSON.stringify(init.json)
      if (!headers.has("content-type")) headers.set("content-type", "application/json")
    }
    return handler(new Request(`http://test.local${path}`, { ...init, headers, body: body ?? null }))
  }
  const bootstrap = await runtime.runPromise(Effect.flatMap(Workspaces, (w) => w.bootstrap))
  return {
    fetch,
    runtime,
    testKey: Option.getOrThrow(bootstrap).key.token,
    workspaceId: Option.getOrThrow(bootstrap).workspace.id,
    close: async () => {
      await dispose()
      await runtime.dispose()
    }
  }
}
