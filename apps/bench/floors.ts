/**
 * The library floors of `GET /v1/api/contacts/{id}`: what the layers the service is built on cost
 * before any of its own work, each one step up from the bare server (baseline.ts). `npm run bench`
 * runs them beside the service and the baseline, so the reads target can be read against them.
 * Each answers the baseline's body for the same SQL (floor.ts `detail`), or 404; nothing else.
 *
 * FLOOR=
 * - `effect`: node:http, and the statement run through an Effect runtime on `@effect/sql-pg`
 *   (`runCallback`); the row written with JSON.stringify.
 * - `platform`: the service's Node server (adapters/http/nodeServer.ts: a fiber per request,
 *   HttpServerRequest and HttpServerResponse) with one hand-written route: path and success
 *   decoded and encoded with the service's schemas, synchronously.
 * - `httpapi`: the same server under HttpApiBuilder, with one HttpApi endpoint declared with the
 *   service's schemas (IdParam, getContact's output, NotFound): the router, the group, the handler.
 * - `contract`: not a library floor but the other way round: the service's read with the HTTP
 *   model taken out. node:http, and the contract's work done in plain functions (request id, the
 *   bearer key, authentication, the per-key rate limit and the route's scope, CORS and RateLimit
 *   headers, the request metrics, the access log line through the server's logger), the use case
 *   (`getContact.run`) on the service's own core services and stores. No HttpServerRequest or
 *   HttpServerResponse, router, HttpApi or middleware: what a handler compiled from the endpoint
 *   could reach at best. It answers the service's body (the benchmark checks it equals the bare
 *   server's), and its failures as the service does (platform.ts's causeToResponse), except that a
 *   keyless request is not billed to the caller's address. It needs the service's environment and
 *   key. The service's process also runs its background workers (webhooks, registry poller), which
 *   idle during the benchmark.
 *
 * Env: DATABASE_URL, WORKSPACE_ID, PORT, HOST (default 127.0.0.1), FLOOR; `contract` reads the
 * service's configuration (apps/server/config.ts) too.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpServer,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, FiberRef, Layer, LogLevel, ManagedRuntime, Option, Redacted, Schema } from "effect"
import { createServer, type ServerResponse } from "node:http"
import { accessLog, routeMatcher } from "../../adapters/http/accessLog.ts"
import { Api } from "../../adapters/http/api.ts"
import { NotFound as NotFoundError } from "../../adapters/http/api/errors.ts"
import { IdParam } from "../../adapters/http/api/shared.ts"
import { unauthenticated } from "../../adapters/http/auth.ts"
import * as NodeServer from "../../adapters/http/nodeServer.ts"
import {
  bearerToken,
  causeToResponse,
  CORS_HEADERS,
  errorBody,
  requestIdFor,
  type RequestState
} from "../../adapters/http/platform.ts"
import { httpRecorder } from "../../adapters/telemetry/http.ts"
import { parseToken } from "../../core/auth/apiKey.ts"
import type { Contacts } from "../../core/contacts/service.ts"
import { type DomainError, NotFound, PermissionDenied, ResourceExhausted } from "../../core/kernel/errors.ts"
import { type Decision, RateLimiter } from "../../core/ratelimit/bucket.ts"
import { getContact } from "../../core/tools/contacts.ts"
import { Workspaces } from "../../core/workspaces/service.ts"
import { ServerConfig } from "../server/config.ts"
import * as Logging from "../server/logging.ts"
import { ServicesLive } from "../server/main.ts"
import { detail, error, type Row, send } from "./floor.ts"
import { getStatement } from "./sql.ts"

const url = process.env["DATABASE_URL"]
const workspaceId = process.env["WORKSPACE_ID"]
const floor = process.env["FLOOR"]
if (!url || !workspaceId || !floor) throw new Error("DATABASE_URL, WORKSPACE_ID and FLOOR are required")
const port = Number(process.env["PORT"] ?? 8091)
const host = process.env["HOST"] ?? "127.0.0.1"

const Sql = PgClient.layer({ url: Redacted.make(url), maxConnections: 20 })
const CONTACT_PATH = /^\/v1\/api\/contacts\/([^/?]+)$/
const notFound = new NotFound({ message: "No such contact" })

/** The statement and the row as the answer's value, or NotFound. */
const getRow = (sql: PgClient.PgClient, id: string) => {
  const st = getStatement(workspaceId, id)
  return Effect.flatMap(
    Effect.orDie(sql.unsafe<Row>(st.text, [...st.values])),
    (rows) =>
      rows[0] === undefined
        ? Effect.fail(notFound)
        : Effect.succeed({ contact: detail(rows[0]) } as typeof getContact.output.Type)
  )
}

const effectFloor = async () => {
  const runtime = ManagedRuntime.make(Sql)
  const sql = await runtime.runPromise(PgClient.PgClient)
  createServer((req, res) => {
    const m = CONTACT_PATH.exec(req.url ?? "")
    if (m === null) return error(res, 404, "not_found", "No such route")
    runtime.runCallback(getRow(sql, decodeURIComponent(m[1]!)), {
      onExit: (
        exit
      ) => (Exit.isSuccess(exit) ? send(res, 200, exit.value) : error(res, 404, "not_found", "No such contact"))
    })
  }).listen(port, host)
}

const platformFloor = () => {
  const decodePath = Schema.decodeUnknownSync(IdParam)
  const encode = Schema.encodeSync(getContact.output)
  const App = Layer.unwrapEffect(
    Effect.map(PgClient.PgClient, (sql) =>
      HttpServer.serve(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
          const m = CONTACT_PATH.exec(req.url)
          if (m === null) {
            return Effect.succeed(HttpServerResponse.unsafeJson({ error: { code: "not_found" } }, { status: 404 }))
          }
          return Effect.match(getRow(sql, decodePath({ id: decodeURIComponent(m[1]!) }).id), {
            onFailure: () => HttpServerResponse.unsafeJson({ error: { code: "not_found" } }, { status: 404 }),
            onSuccess: (answer) => HttpServerResponse.unsafeJson(encode(answer))
          })
        })
      ))
  )
  return App
}

const httpApiFloor = () => {
  class Contacts extends HttpApiGroup.make("contacts").add(
    HttpApiEndpoint.get("get", "/v1/api/contacts/:id").setPath(IdParam).addSuccess(getContact.output).addError(
      NotFoundError
    )
  ) {}
  class FloorApi extends HttpApi.make("floor").add(Contacts) {}
  const ContactsLive = HttpApiBuilder.group(
    FloorApi,
    "contacts",
    (handlers) => Effect.map(PgClient.PgClient, (sql) => handlers.handle("get", ({ path }) => getRow(sql, path.id)))
  )
  return HttpApiBuilder.serve().pipe(Layer.provide(HttpApiBuilder.api(FloorApi).pipe(Layer.provide(ContactsLive))))
}

/** The contract's answer on Node's response: the headers the platform middleware sets, then the JSON body. */
const answer = (res: ServerResponse, a: Answer, requestId: string, rate: Decision | undefined) => {
  res.statusCode = a.status
  res.setHeader("content-type", "application/json")
  res.setHeader("content-length", Buffer.byteLength(a.body))
  for (const name of ["retry-after", "www-authenticate"]) {
    if (a.headers?.[name] !== undefined) res.setHeader(name, a.headers[name])
  }
  res.setHeader("access-control-allow-origin", CORS_HEADERS["access-control-allow-origin"])
  res.setHeader("access-control-expose-headers", CORS_HEADERS["access-control-expose-headers"])
  res.setHeader("x-request-id", requestId)
  if (rate !== undefined) {
    res.setHeader("ratelimit-limit", String(rate.limit))
    res.setHeader("ratelimit-remaining", String(rate.remaining))
    res.setHeader("ratelimit-reset", String(rate.resetSeconds))
  }
  res.end(a.body)
}

interface Answer {
  readonly status: number
  readonly body: string | Uint8Array
  readonly headers?: Readonly<Record<string, string>> | undefined
}

const contractFloor = async () => {
  const config = await Effect.runPromise(ServerConfig)
  const logFormat = Logging.formatFor(Option.getOrUndefined(config.logFormat), process.stdout.isTTY === true)
  const runtime = ManagedRuntime.make(Layer.provide(ServicesLive(config), Logging.layer(logFormat, config.logLevel)))
  const { workspaces, limiter, clock } = await runtime.runPromise(
    Effect.all({ workspaces: Workspaces, limiter: RateLimiter, clock: Effect.clock })
  )
  const route = routeMatcher(Api)
  const logRequest = accessLog(route, clock)
  // As the service: a minimum level above info leaves the access log out (adapters/http/platform.ts).
  const logging = LogLevel.greaterThanEqual(
    LogLevel.Info,
    runtime.runSync(FiberRef.get(FiberRef.currentMinimumLogLevel))
  )
  const metrics = httpRecorder(route, clock)
  const encode = Schema.encodeSync(getContact.output)
  const malformed = new NotFound({ message: "No such resource: the path is malformed" })
  createServer((req, res) => {
    const started = clock.unsafeCurrentTimeNanos()
    const state: RequestState = {
      requestId: requestIdFor(req.headers["x-request-id"] as string | undefined),
      rate: undefined,
      principal: undefined,
      key: undefined
    }
    const url = req.url ?? "/"
    const m = req.method === "GET" ? CONTACT_PATH.exec(url) : null
    if (m === null) {
      return answer(
        res,
        { status: 404, body: JSON.stringify(errorBody("not_found", "No such route", state.requestId)) },
        state.requestId,
        undefined
      )
    }
    const token = bearerToken(req.headers["authorization"])
    const key = token === undefined ? Option.none() : parseToken(token)
    // A keyless request is answered 401 here; the service also bills it to the caller's address.
    const read: Effect.Effect<typeof getContact.output.Type, DomainError, Contacts> = Option.isNone(key)
      ? Effect.fail(unauthenticated)
      : Effect.flatMap(
        workspaces.authenticate(key.value),
        (principal) =>
          Effect.flatMap(
            limiter.consume(`key:${principal.keyId}`),
            (rate): Effect.Effect<typeof getContact.output.Type, DomainError, Contacts> => {
              state.rate = rate
              if (!rate.allowed) {
                return Effect.fail(
                  new ResourceExhausted({ message: "Rate limit exceeded", retryAfterSeconds: rate.retryAfterSeconds })
                )
              }
              state.principal = principal
              if (!principal.scopes.has(getContact.scope)) {
                return Effect.fail(new PermissionDenied({ message: `This key lacks the scope ${getContact.scope}` }))
              }
              return Effect.flatMap(
                Effect.try({ try: () => decodeURIComponent(m[1]!), catch: () => malformed }),
                (id) => getContact.run(principal, { id })
              )
            }
          )
      )
    // Failures as the service answers and logs them (platform.ts's causeToResponse).
    const answered = Effect.matchCauseEffect(read, {
      onSuccess: (out): Effect.Effect<Answer> => Effect.succeed({ status: 200, body: JSON.stringify(encode(out)) }),
      onFailure: (cause) =>
        Effect.map(
          causeToResponse(cause, state.requestId),
          (r): Answer => ({
            status: r.status,
            body: r.body._tag === "Uint8Array" ? r.body.body : "",
            headers: r.headers
          })
        )
    })
    // The access log reads only the method, url and status of the request and answer it is given.
    const logged = (a: Answer) =>
      logRequest(
        { method: "GET", url } as HttpServerRequest.HttpServerRequest,
        state,
        a as unknown as HttpServerResponse.HttpServerResponse,
        started
      )
    runtime.runCallback(logging ? Effect.tap(answered, logged) : answered, {
      onExit: (exit) => {
        const a: Answer = Exit.isSuccess(exit)
          ? exit.value
          : { status: 500, body: JSON.stringify(errorBody("internal", "Internal error", state.requestId)) }
        answer(res, a, state.requestId, state.rate)
        metrics.record("GET", url, started, a)
      }
    })
  }).listen(port, host)
}

if (floor === "effect") void effectFloor()
else if (floor === "contract") void contractFloor()
else {
  const app = floor === "platform" ? platformFloor() : floor === "httpapi" ? httpApiFloor() : undefined
  if (app === undefined) throw new Error(`FLOOR: expected effect, platform, httpapi or contract, got ${floor}`)
  const served = app.pipe(Layer.provide(NodeServer.layer({ port, host })), Layer.provide(Sql))
  NodeRuntime.runMain(Layer.launch(served))
}
