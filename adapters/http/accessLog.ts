/**
 * The access log: one Info line per request the app answers, written by the platform middleware
 * once the response is ready.
 * It names the route by its template (`/v1/api/contacts/:id`), never the raw path or query string
 * (a signed media URL's query is a credential), and never a header: the Authorization header and
 * keys stay out. Authenticated requests carry their workspace and key ids.
 */
import { HttpApi, type HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { type Clock, Effect, FiberRef, HashMap } from "effect"
import type { RequestState } from "./platform.ts"

/** A route template as segments; `undefined` stands for a path parameter. */
interface Template {
  readonly path: string
  readonly segments: ReadonlyArray<string | undefined>
}

/** Templates that match one static segment before those that take a parameter there (`/contacts/search` before `/contacts/:id`). */
const specificFirst = (a: Template, b: Template): number => {
  for (let i = 0; i < a.segments.length; i++) {
    const sa = a.segments[i] === undefined ? 1 : 0
    const sb = b.segments[i] === undefined ? 1 : 0
    if (sa !== sb) return sa - sb
  }
  return 0
}

/**
 * Finds the template of a request among the API's endpoints (and `extra` routes served beside
 * them, such as the OpenAPI document), the way the router does: method, then segment by segment.
 */
export const routeMatcher = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<readonly [method: string, path: string]> = []
) => {
  const routes: Array<readonly [string, string]> = [...extra]
  HttpApi.reflect(api as any, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push([endpoint.method, endpoint.path])
    }
  })
  // Keyed by method and segment count: a request compares only against templates of its shape.
  const table = new Map<string, Array<Template>>()
  for (const [method, path] of routes) {
    const segments = path.split("/").map((s) => (s.startsWith(":") ? undefined : s))
    const key = `${method} ${segments.length}`
    const list = table.get(key) ?? []
    list.push({ path, segments })
    table.set(key, list)
  }
  for (const list of table.values()) list.sort(specificFirst)

  const find = (method: string, segments: ReadonlyArray<string>): string | undefined => {
    const list = table.get(`${method} ${segments.length}`)
    if (list === undefined) return undefined
    for (const t of list) {
      let i = 0
      while (
        i < segments.length && (t.segments[i] === undefined ? segments[i] !== "" : t.segments[i] === segments[i])
      ) i++
      if (i === segments.length) return t.path
    }
    return undefined
  }
  const template = (method: string, url: string): string | undefined => {
    const q = url.indexOf("?")
    const path = q === -1 ? url : url.slice(0, q)
    const segments = path.split("/")
    const found = find(method, segments)
    if (found !== undefined) return found
    if (method === "HEAD") return find("GET", segments)
    // A CORS preflight is logged under the route it asks about.
    if (method === "OPTIONS") {
      return find("GET", segments) ?? find("POST", segments) ?? find("PATCH", segments) ?? find("DELETE", segments)
    }
    return undefined
  }
  // The access log and the request metrics ask in turn about the same request: remember the last answer.
  let last = { method: "", url: "", route: undefined as string | undefined }
  return (method: string, url: string): string | undefined => {
    if (url !== last.url || method !== last.method) last = { method, url, route: template(method, url) }
    return last.route
  }
}

/** What an unknown route is logged as: its raw path may hold anything a client typed. */
export const UNMATCHED = "(unmatched)"

/**
 * Builds the per-request log call. `started` is the clock's nanoseconds when the request arrived;
 * the clock is the one the layer was built with, read synchronously (no effect per request).
 */
export const accessLog = (route: (method: string, url: string) => string | undefined, clock: Clock.Clock) =>
(
  req: HttpServerRequest.HttpServerRequest,
  state: RequestState,
  res: HttpServerResponse.HttpServerResponse,
  started: bigint
) => {
  const durationMs = Math.round(Number(clock.unsafeCurrentTimeNanos() - started) / 1e4) / 100
  const template = route(req.method, req.url) ?? UNMATCHED
  const annotations: Record<string, unknown> = {
    method: req.method,
    route: template,
    status: res.status,
    durationMs,
    requestId: state.requestId
  }
  const principal = state.principal
  if (principal !== undefined) {
    annotations["workspaceId"] = principal.workspaceId
    annotations["keyId"] = principal.keyId
  }
  // Annotated by setting the fiber's annotations rather than with Effect.annotateLogs, whose
  // region (set, run, restore: fiber steps of its own) is paid on every request: this is the
  // request fiber's last line (a failure while sending the response, logged after it, carries the
  // same annotations), and the fiber ends with the request.
  return Effect.zipRight(
    FiberRef.update(FiberRef.currentLogAnnotations, (current) => {
      let merged = current
      for (const key in annotations) merged = HashMap.set(merged, key, annotations[key])
      return merged
    }),
    Effect.logInfo(`${req.method} ${template} ${res.status} ${durationMs}ms`)
  )
}
