/**
 * The one global HTTP middleware. It sees every request and every failure, so it is where the
 * cross-cutting contract of SPEC lives:
 * - `X-Request-Id`: a valid client id is echoed, otherwise one is generated;
 * - `RateLimit-*` on every response; requests without a well-formed API key are limited per client
 *   address here (keys are limited per key id by the Authorization middleware, the admin API by
 *   AdminAuthorization);
 * - a 1 MiB request body limit, and text in the URL checked like body text (core/kernel/input.ts);
 * - CORS for any origin (keys, not cookies, authenticate: no credentials), except the console's same-origin paths;
 * - the error envelope `{error: {code, message, requestId}}` for EVERY failure: decode errors,
 *   malformed JSON, unknown routes, domain errors, and defects (logged with the request id).
 */
import {
  FileSystem,
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Context, Effect, FiberRef, LogLevel, Option } from "effect"
import { type ParsedKey, parseToken } from "../../core/auth/apiKey.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { decodeMessage } from "../../core/kernel/decodeMessage.ts"
import { type DomainError, type ErrorCode, errorStatus, isDomainError } from "../../core/kernel/errors.ts"
import { textProblem } from "../../core/kernel/input.ts"
import { type Decision, RateLimiter } from "../../core/ratelimit/bucket.ts"
import { databaseUnavailable, UNAVAILABLE_RETRY_SECONDS } from "../sql/unavailable.ts"
import { httpRecorder } from "../telemetry/http.ts"
import { recordRefusal } from "../telemetry/metrics.ts"
import { accessLog, routeMatcher } from "./accessLog.ts"
import { PROBE_PATHS } from "./api/health.ts"
import { clientAddress, TrustedProxies } from "./clientAddress.ts"

export const MAX_BODY_BYTES = 1024 * 1024
const BODY_LIMIT = Option.some(FileSystem.Size(MAX_BODY_BYTES))

/**
 * How long a client may take to send a request. Node's defaults (300 s for a request, 60 s for its
 * headers) let a slow client hold a connection for minutes. The request bound includes the body: a
 * 1 MiB body (the largest accepted) needs about 280 kbit/s to arrive within 30 s, which a slow 3G
 * uplink (400 kbit/s: 21 s) still gives. Headers are at most 16 KB and need far less than 15 s.
 */
export interface Timeouts {
  /** The whole request, headers and body. */
  readonly requestMs: number
  /** The request line and headers. */
  readonly headersMs: number
  /** An idle keep-alive connection between two requests (closed silently). */
  readonly keepAliveMs: number
}

export const DEFAULT_TIMEOUTS: Timeouts = { requestMs: 30_000, headersMs: 15_000, keepAliveMs: 5_000 }

/** Per-request state shared between the global middleware, key authentication, handlers and the idempotency wrapper. */
export interface RequestState {
  readonly requestId: string
  rate: Decision | undefined
  /** Set by the Authorization middleware (auth.ts) once the key is resolved and within its limit. */
  principal: Principal | undefined
  /** The bearer API key, parsed on first read by `requestKey`. */
  key: Option.Option<ParsedKey> | undefined
}

/**
 * Keyed by the raw request (Node's IncomingMessage, the web Request), which every derived
 * HttpServerRequest shares. A side table rather than a provided service, which would cost every
 * request a fiber-ref region on the hottest path of the app (docs/architecture.md, "The Principal
 * travels in the request state").
 */
const states = new WeakMap<object, RequestState>()

/** Starts the state of a request (the global middleware; tests driving a handler directly). */
export const beginRequest = (req: HttpServerRequest.HttpServerRequest, requestId: string): RequestState => {
  const state: RequestState = { requestId, rate: undefined, principal: undefined, key: undefined }
  states.set(req.source as object, state)
  return state
}

export const requestState = (req: HttpServerRequest.HttpServerRequest): RequestState =>
  states.get(req.source as object) ?? beginRequest(req, newRequestId())

/** The state of the request being handled. */
export const CurrentRequest: Effect.Effect<RequestState, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  HttpServerRequest.HttpServerRequest,
  requestState
)

/**
 * The caller, as the Authorization middleware resolved it. Only routes behind that middleware have
 * one; reading it elsewhere is a programming error (a defect, answered 500).
 */
export const CurrentPrincipal: Effect.Effect<Principal, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (req) => {
    const principal = requestState(req).principal
    if (principal === undefined) {
      throw new Error("CurrentPrincipal read on a route without the Authorization middleware")
    }
    return principal
  }
)

const REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/

const newRequestId = () => `req_${crypto.randomUUID().replace(/-/g, "")}`

/** The request id of SPEC's rule: the client's own `X-Request-Id` when valid, else a new one. */
export const requestIdFor = (given: string | null | undefined): string =>
  given !== undefined && given !== null && REQUEST_ID.test(given) ? given : newRequestId()

export const bearerToken = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  const m = /^Bearer ([^\s]+)$/i.exec(authorization.trim())
  return m?.[1]
}

/**
 * The request's API key from `Authorization: Bearer <key>`, parsed once and shared by the rate limit
 * below and key authentication (auth.ts). None for a missing or malformed header or key.
 */
export const requestKey = (req: HttpServerRequest.HttpServerRequest, state: RequestState): Option.Option<ParsedKey> => {
  if (state.key === undefined) {
    const token = bearerToken(req.headers["authorization"])
    state.key = token === undefined ? Option.none() : parseToken(token)
  }
  return state.key
}

/** The body of every error answer, including those written outside the app (nodeServer.ts, web.ts). */
export const errorBody = (code: ErrorCode, message: string, requestId: string) => ({
  error: { code, message, requestId }
})

export const envelope = (status: number, code: ErrorCode, message: string, requestId: string) =>
  HttpServerResponse.unsafeJson(errorBody(code, message, requestId), { status })

const fromDomain = (e: DomainError, requestId: string) => {
  const { status, code } = errorStatus[e._tag]
  const res = envelope(status, code, e.message, requestId)
  if (e._tag === "ResourceExhausted") {
    return HttpServerResponse.setHeader(res, "retry-after", String(Math.max(1, Math.ceil(e.retryAfterSeconds))))
  }
  // RFC 6750: a 401 names the scheme the caller must use (MCP clients read it too).
  if (e._tag === "Unauthenticated") return HttpServerResponse.setHeader(res, "www-authenticate", "Bearer")
  return res
}

/** Why a body read failed: malformed JSON, a body over the limit, a client that went away mid-upload. */
export const bodyReadMessage = (error: HttpServerError.RequestError): string => {
  const tooLarge = String(error.cause ?? "").includes("maxBytes") ||
    String(error.description ?? "").includes("maxBytes")
  return tooLarge ? "Request body exceeds 1 MiB" : "Request body is not valid JSON"
}

/**
 * Requests (by their `source`) the server answered itself while the app still had them: Node's
 * 408 for a body that did not arrive in time (nodeServer.ts). The app's own answer is never sent,
 * so the access log and metrics record the server's.
 */
export const answeredByServer = new WeakMap<object, { readonly status: number; readonly message: string }>()

/** The status of a request whose client went away before its answer. */
export const CLIENT_CLOSED_REQUEST = 499

/** Turns any failure cause into the documented envelope (or, for a client gone, an empty 499). */
export const causeToResponse = (cause: Cause.Cause<unknown>, requestId: string) => {
  const failure = Cause.failureOption(cause)
  const error = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  if (isDomainError(error)) return Effect.succeed(fromDomain(error, requestId))
  if (error instanceof HttpApiError.HttpApiDecodeError) {
    return Effect.succeed(envelope(400, "invalid_argument", decodeMessage(error), requestId))
  }
  if (error instanceof HttpServerError.RouteNotFound) {
    return Effect.succeed(envelope(404, "not_found", "No such route", requestId))
  }
  if (error instanceof HttpServerError.RequestError) {
    return Effect.succeed(envelope(400, "invalid_argument", bodyReadMessage(error), requestId))
  }
  if (databaseUnavailable(error)) {
    // The database is away (a restart, a failover) or cancelled a statement past its time limit: a retry may succeed.
    return Effect.logWarning("Database unavailable", error).pipe(
      Effect.annotateLogs({ requestId }),
      Effect.as(HttpServerResponse.setHeader(
        envelope(
          503,
          "unavailable",
          "The database is unavailable or too slow for a moment; retry after Retry-After seconds",
          requestId
        ),
        "retry-after",
        String(UNAVAILABLE_RETRY_SECONDS)
      ))
    )
  }
  if (Cause.isInterruptedOnly(cause)) {
    // The client went away before the answer: nobody reads it, and it is no server error. Logged and
    // counted as 499 (nginx's "client closed request", the status @effect/platform gives a client abort).
    return Effect.succeed(HttpServerResponse.empty({ status: CLIENT_CLOSED_REQUEST }))
  }
  return Effect.logError("Unhandled failure", cause).pipe(
    Effect.annotateLogs({ requestId }),
    Effect.as(envelope(500, "internal", `Internal error; quote request id ${requestId}`, requestId))
  )
}

/**
 * CORS for any origin, without credentials (keys, not cookies, authenticate): static headers on every
 * answer and a 204 for every preflight. Written here rather than with HttpMiddleware.cors, which adds
 * a pre-response handler to every request (docs/architecture.md, "CORS written in the platform
 * middleware").
 */
export const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers":
    "X-Request-Id,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,Retry-After,Idempotency-Replayed,WWW-Authenticate"
}

/**
 * The console's pages and API (`/app`, `/v1/app`) are same-origin only: they answer no CORS header
 * and no preflight, so a browser never lets another site read them, cookie or not.
 */
const isConsolePath = (url: string) =>
  url.startsWith("/v1/app/") || url === "/app" || url.startsWith("/app/") || url.startsWith("/app?")

const preflight = (req: HttpServerRequest.HttpServerRequest) => {
  if (isConsolePath(req.url)) return HttpServerResponse.empty({ status: 204 })
  const requested = req.headers["access-control-request-headers"]
  return HttpServerResponse.empty({
    status: 204,
    headers: {
      ...CORS_HEADERS,
      "access-control-allow-methods": "GET, POST, PATCH, DELETE, OPTIONS",
      "access-control-max-age": "600",
      ...(requested ? { "access-control-allow-headers": requested, vary: "Access-Control-Request-Headers" } : {})
    }
  })
}

const ADMIN_PREFIX = "/v1/admin/"
/** The scrapers' route (api/metrics.ts): limited like the admin API, by AdminAuthorization. */
export const METRICS_PATH = "/metrics"

/**
 * Text in the URL is checked once, here, like body text (core/kernel/input.ts): a path that does not
 * decode, or holds NUL or a lone surrogate, names no resource (404, as SPEC answers a malformed
 * id); such a query parameter is a 400, named only when its name is plain.
 */
const urlProblem = (url: string): { status: 400 | 404; code: ErrorCode; message: string } | undefined => {
  // The router would take `/contacts/` as `/contacts` (and `/contacts/:id/` as the record): a
  // trailing slash names no documented route, so it is not guessed at.
  const pathEnd = url.indexOf("?") === -1 ? url.length : url.indexOf("?")
  if (pathEnd > 1 && url.charCodeAt(pathEnd - 1) === 47) {
    return { status: 404, code: "not_found", message: "No such route" }
  }
  if (!url.includes("%") && !url.includes("\u0000")) return undefined
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  let decoded: string | undefined
  try {
    decoded = decodeURIComponent(path)
  } catch {
    decoded = undefined
  }
  if (decoded === undefined || textProblem(decoded) !== undefined) {
    return { status: 404, code: "not_found", message: "No such resource: the path is malformed" }
  }
  if (q !== -1) {
    for (const [name, value] of new URLSearchParams(url.slice(q + 1))) {
      const problem = textProblem(value) ?? textProblem(name)
      if (problem !== undefined) {
        const label = /^[A-Za-z0-9_.-]{1,64}$/.test(name) ? name : "a query parameter"
        return { status: 400, code: "invalid_argument", message: `${label}: ${problem}` }
      }
    }
  }
  return undefined
}

/** An origin as browsers send it (`https://host[:port]`), so a listed `https://Console.example/` matches. */
export const originOf = (value: string) => {
  try {
    return new URL(value).origin
  } catch {
    return value.toLowerCase()
  }
}

/** The rate-limit bucket of the client's address, for requests no key is billed for (`ip`, `admin-ip`); `trusted`: TRUST_PROXY. */
export const addressBucket = (kind: string, req: HttpServerRequest.HttpServerRequest, trusted: number): string =>
  `${kind}:${Option.getOrElse(clientAddress(req, trusted), () => "unknown")}`

export const BODY_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT"])

export const layer = HttpApiBuilder.middleware(
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const trusted = yield* TrustedProxies
    const { api } = yield* HttpApi.Api
    const clock = yield* Effect.clock
    // One route table for the access log and the request metrics: templates, never raw paths.
    const route = routeMatcher(api)
    const logRequest = accessLog(route, clock)
    const metrics = httpRecorder(route, clock)
    // LOG_LEVEL above info (set before the app is built, apps/server/logging.ts): no access log to pay for.
    const logging = LogLevel.greaterThanEqual(LogLevel.Info, yield* FiberRef.get(FiberRef.currentMinimumLogLevel))

    return (app) => {
      // Built once, run per request. Written as plain flatMaps over the request: every generator,
      // provided service or fiber-ref update here is paid on every request.
      const handled = Effect.catchAllCause(
        app,
        (cause) => Effect.flatMap(CurrentRequest, (state) => causeToResponse(cause, state.requestId))
      )
      // The body limit goes into the context for the rest of the request's fiber (which ends with
      // the request), not as HttpIncomingMessage.withMaxBodySize's region (set, run, restore: fiber
      // steps paid on every request with a body).
      const limited = Effect.zipRight(
        FiberRef.update(FiberRef.currentContext, Context.add(HttpIncomingMessage.MaxBodySize, BODY_LIMIT)),
        handled
      )

      /** Request checks, then the app; every failure becomes the envelope. */
      const guarded = (req: HttpServerRequest.HttpServerRequest, state: RequestState) => {
        const refused = urlProblem(req.url)
        if (refused !== undefined) {
          return Effect.succeed(envelope(refused.status, refused.code, refused.message, state.requestId))
        }
        if (Number(req.headers["content-length"] ?? "0") > MAX_BODY_BYTES) {
          return Effect.succeed(envelope(400, "invalid_argument", "Request body exceeds 1 MiB", state.requestId))
        }
        const hasBody = BODY_METHODS.has(req.method)
        const contentType = req.headers["content-type"]
        // Only plain JSON: the router parses nothing else (a `+json` type would reach it as bytes).
        if (hasBody && contentType !== undefined && !/^application\/json\s*(;|$)/i.test(contentType)) {
          return Effect.succeed(
            envelope(
              400,
              "invalid_argument",
              "Send the body as JSON with Content-Type: application/json",
              state.requestId
            )
          )
        }
        // Keys are limited per key (auth.ts), the operator's token in its own buckets (AdminAuthorization):
        // no keyless traffic can exhaust either.
        if (Option.isSome(requestKey(req, state)) || req.url.startsWith(ADMIN_PREFIX) || req.url === METRICS_PATH) {
          return hasBody ? limited : handled
        }
        // No API key to bill this request to: limit it by client address instead.
        return Effect.flatMap(limiter.consume(addressBucket("ip", req, trusted)), (rate) => {
          state.rate = rate
          if (!rate.allowed) {
            recordRefusal("ip")
            return Effect.succeed(
              HttpServerResponse.setHeader(
                envelope(429, "resource_exhausted", "Rate limit exceeded", state.requestId),
                "retry-after",
                String(rate.retryAfterSeconds)
              )
            )
          }
          return hasBody ? limited : handled
          // The buckets live in the database on Postgres: while it is away, the failure is answered here.
        }).pipe(Effect.catchAllCause((cause) => causeToResponse(cause, state.requestId)))
      }
      // One setHeader per header: `setHeaders` merges by object spread, which takes a slow path in
      // V8 here and slows Node's writeHead too (docs/architecture.md, "Response headers set one
      // `setHeader` at a time").
      /** The answer's common headers; the RateLimit ones when a bucket decided (not while the database holding it is away). */
      const finish = (
        req: HttpServerRequest.HttpServerRequest,
        state: RequestState,
        rate: Decision | undefined,
        res: HttpServerResponse.HttpServerResponse
      ) => {
        let out = res
        if (!isConsolePath(req.url)) {
          out = HttpServerResponse.setHeader(
            out,
            "access-control-allow-origin",
            CORS_HEADERS["access-control-allow-origin"]
          )
          out = HttpServerResponse.setHeader(
            out,
            "access-control-expose-headers",
            CORS_HEADERS["access-control-expose-headers"]
          )
        }
        out = HttpServerResponse.setHeader(out, "x-request-id", state.requestId)
        if (rate === undefined) return out
        out = HttpServerResponse.setHeader(out, "ratelimit-limit", String(rate.limit))
        out = HttpServerResponse.setHeader(out, "ratelimit-remaining", String(rate.remaining))
        return HttpServerResponse.setHeader(out, "ratelimit-reset", String(rate.resetSeconds))
      }

      /** A load balancer's probes are never refused by the per-address limit (api/health.ts), so they carry no RateLimit headers. */
      const probe = (state: RequestState, res: HttpServerResponse.HttpServerResponse) => {
        const out = HttpServerResponse.setHeader(
          res,
          "access-control-allow-origin",
          CORS_HEADERS["access-control-allow-origin"]
        )
        return HttpServerResponse.setHeader(out, "x-request-id", state.requestId)
      }

      return Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
        const started = clock.unsafeCurrentTimeNanos()
        const state = beginRequest(req, requestIdFor(req.headers["x-request-id"]))
        const answered = PROBE_PATHS.has(req.url) ?
          Effect.map(handled, (res) => probe(state, res)) :
          Effect.flatMap(
            req.method === "OPTIONS" ? Effect.succeed(preflight(req)) : guarded(req, state),
            (appAnswer) => {
              const server = answeredByServer.get(req.source as object)
              const res = server === undefined
                ? appAnswer
                : envelope(server.status, "invalid_argument", server.message, state.requestId)
              return state.rate !== undefined || res.status === 503
                // A 503 is the database away (causeToResponse): so are the buckets it holds on Postgres,
                // and asking them would only hold the answer back.
                ? Effect.succeed(metrics.record(req.method, req.url, started, finish(req, state, state.rate, res)))
                // A request that never reached key authentication (an unknown route, a preflight) counts per address.
                : limiter.consume(addressBucket("ip", req, trusted)).pipe(
                  Effect.tap((rate) => (state.rate = rate)),
                  Effect.catchAllCause(() => Effect.succeed(undefined)),
                  Effect.map((rate) => metrics.record(req.method, req.url, started, finish(req, state, rate, res)))
                )
            }
          )
        return logging ? Effect.tap(answered, (res) => logRequest(req, state, res, started)) : answered
      })
    }
  })
)
