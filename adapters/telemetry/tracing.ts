/**
 * The HTTP server span of a request, for the Node server (nodeServer.ts) while tracing is on: what
 * HttpApp.toHandled's tracer gives NodeHttpServer and the web handler (that middleware is internal
 * to @effect/platform). It continues a caller's W3C/B3 trace, and the router names the route on it
 * (`http.route`); @effect/sql's `sql.execute` spans become its children. No headers are recorded:
 * they carry API keys.
 */
import { HttpServerRequest, type HttpServerResponse, HttpTraceContext } from "@effect/platform"
import { Effect, Exit, Option } from "effect"

export const serverSpan = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.useSpan(
      `http.server ${request.method}`,
      {
        parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers)),
        kind: "server",
        captureStackTrace: false
      },
      (span) => {
        span.attribute("http.request.method", request.method)
        const q = request.url.indexOf("?")
        span.attribute("url.path", q === -1 ? request.url : request.url.slice(0, q))
        if (Option.isSome(request.remoteAddress)) span.attribute("client.address", request.remoteAddress.value)
        return Effect.onExit(Effect.withParentSpan(app, span), (exit) =>
          Effect.sync(() => {
            // The platform middleware answers every failure, so a failed exit is a defect or an interruption.
            span.attribute("http.response.status_code", Exit.isSuccess(exit) ? exit.value.status : 500)
          }))
      }
    ))
