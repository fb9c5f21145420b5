/**
 * HTTP request metrics, recorded by the platform middleware (adapters/http/platform.ts) once per
 * request with synchronous updates: no fiber steps or fiber-ref regions on the hot path.
 * Requests are labelled by route template (`/v1/api/contacts/:id`), never by raw path, so the
 * label sets stay bounded; a path no route matches is `unmatched`.
 */
import { type Clock, MetricLabel } from "effect"
import { httpDuration, httpRequests, labelCache } from "./metrics.ts"

export interface Route {
  readonly method: string
  readonly path: string
}

export const UNMATCHED = "unmatched"

/**
 * The template of the route a request path takes, or `unmatched`. Static segments win over
 * parameters (`/contacts/search` before `/contacts/:id`), as in the router.
 */
export const routeMatcher = (routes: Iterable<Route>): ((method: string, url: string) => string) => {
  const byMethod = new Map<string, Array<{ readonly segments: ReadonlyArray<string>; readonly path: string }>>()
  for (const { method, path } of routes) {
    const list = byMethod.get(method) ?? []
    list.push({ segments: path.split("/"), path })
    byMethod.set(method, list)
  }
  const params = (segments: ReadonlyArray<string>) => segments.filter((s) => s.startsWith(":")).length
  for (const list of byMethod.values()) list.sort((a, b) => params(a.segments) - params(b.segments))
  return (method, url) => {
    const q = url.indexOf("?")
    const parts = (q === -1 ? url : url.slice(0, q)).split("/")
    for (const route of byMethod.get(method === "HEAD" ? "GET" : method) ?? []) {
      const { segments } = route
      if (segments.length !== parts.length) continue
      let i = 0
      while (i < segments.length && (segments[i] === parts[i] || (segments[i]!.startsWith(":") && parts[i] !== ""))) i++
      if (i === segments.length) return route.path
    }
    return UNMATCHED
  }
}

/** Times a request and records its count and duration under its route, method and status. */
export const httpRecorder = (routes: Iterable<Route>, clock: Clock.Clock) => {
  const match = routeMatcher(routes)
  const labels = labelCache()
  return {
    /** The request's start, in the clock's nanoseconds. */
    start: (): bigint => clock.unsafeCurrentTimeNanos(),
    record: <R extends { readonly status: number }>(method: string, url: string, started: bigint, response: R): R => {
      const route = match(method, url)
      const tags = labels(`${method} ${route} ${response.status}`, () => [
        MetricLabel.make("route", route),
        MetricLabel.make("method", method),
        MetricLabel.make("status", String(response.status))
      ])
      httpRequests.unsafeUpdate(1, tags)
      httpDuration.unsafeUpdate(Number(clock.unsafeCurrentTimeNanos() - started) / 1e9, tags)
      return response
    }
  }
}
