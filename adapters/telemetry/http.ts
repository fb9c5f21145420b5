/**
 * HTTP request metrics, recorded by the platform middleware (adapters/http/platform.ts) once per
 * request with synchronous updates: no fiber steps or fiber-ref regions on the hot path.
 * Requests are labelled by route template (`/v1/api/contacts/:id`), never by raw path, so the
 * label sets stay bounded; a path no route matches is `unmatched`.
 */
import { type Clock, MetricLabel } from "effect"
import { httpDuration, httpRequests, labelCache } from "./metrics.ts"

/** The label of a request no route takes: its raw path may hold anything a client typed. */
export const UNMATCHED = "unmatched"

/** `route` names a request's template (the access log's matcher, adapters/http/accessLog.ts); undefined: no route. */
export const httpRecorder = (route: (method: string, url: string) => string | undefined, clock: Clock.Clock) => {
  const match = (method: string, url: string) => route(method, url) ?? UNMATCHED
  const labels = labelCache()
  return {
    /** `started`: the request's arrival, in the clock's nanoseconds. */
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
