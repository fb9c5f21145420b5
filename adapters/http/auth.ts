/** Implementations of the security middleware declared in security.ts. */
import { HttpApi, type HttpApiMiddleware, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { Scope } from "../../core/auth/scopes.ts"
import {
  InvalidArgument,
  NotFound,
  PermissionDenied,
  ResourceExhausted,
  Unauthenticated
} from "../../core/kernel/errors.ts"
import { jsonTextProblem } from "../../core/kernel/input.ts"
import { type Decision, RateLimiter, requestCost } from "../../core/ratelimit/bucket.ts"
import { Workspaces } from "../../core/workspaces/service.ts"
import { recordRefusal } from "../telemetry/metrics.ts"
import { Api } from "./api.ts"
import { TrustedProxies } from "./clientAddress.ts"
import { addressBucket, bearerToken, BODY_METHODS, bodyReadMessage, requestKey, requestState } from "./platform.ts"
import { AdminAuthorization, Authorization, BoundedBody, RequiredScopes } from "./security.ts"

export const unauthenticated = new Unauthenticated({ message: "Missing, malformed, unknown or revoked API key" })

/**
 * The scopes of each route behind an API key, as the router names it (`POST /v1/api/contacts`).
 * A route that declares none is a programming error, refused when the server is built.
 */
const scopesByRoute = (): ReadonlyMap<string, ReadonlyArray<Scope>> => {
  const scopes = new Map<string, ReadonlyArray<Scope>>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations, middleware }) => {
      if (!middleware.has(Authorization as unknown as HttpApiMiddleware.TagClassAny)) return
      const required = Context.getOption(mergedAnnotations, RequiredScopes)
      if (Option.isNone(required)) {
        throw new Error(`${endpoint.method} ${endpoint.path} declares no scope (requires, api/shared.ts)`)
      }
      scopes.set(`${endpoint.method} ${endpoint.path}`, required.value)
    }
  })
  return scopes
}

/**
 * The body's size in bytes, for its cost: the declared length (platform.ts has refused one over
 * 1 MiB), else the body read (chunked; the route reads the same cached text). A body that cannot be
 * read costs nothing here: its route answers the error.
 */
const bodyBytes = (req: HttpServerRequest.HttpServerRequest): Effect.Effect<number> => {
  const declared = req.headers["content-length"]
  if (declared !== undefined) return Effect.succeed(Number(declared) || 0)
  if (!BODY_METHODS.has(req.method)) return Effect.succeed(0)
  return req.text.pipe(
    Effect.map((text) => new TextEncoder().encode(text).length),
    Effect.orElseSucceed(() => 0)
  )
}

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const limiter = yield* RateLimiter
    const trusted = yield* TrustedProxies
    const exhausted = (rate: Decision, bucket: "ip" | "key") => {
      recordRefusal(bucket)
      return new ResourceExhausted({ message: "Rate limit exceeded", retryAfterSeconds: rate.retryAfterSeconds })
    }
    const scopes = scopesByRoute()
    const checkScopes = (granted: ReadonlySet<Scope>): Effect.Effect<void, PermissionDenied, HttpRouter.RouteContext> =>
      Effect.flatMap(HttpRouter.RouteContext, ({ route }) => {
        for (const scope of scopes.get(`${route.method} ${route.path}`) ?? []) {
          if (!granted.has(scope)) {
            return Effect.fail(new PermissionDenied({ message: `This key lacks the scope ${scope}` }))
          }
        }
        return Effect.void
      })
    return Authorization.of({
      // HttpApiSecurity.bearer accepts any header and slices it blindly: use the key the platform
      // middleware parsed from the header instead. Plain flatMaps, no generators: this runs on
      // every authenticated request.
      apiKey: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
          const state = requestState(req)
          // An unknown key is billed to the caller's address, so guessing keys is rate limited
          // too. A missing or malformed one was already billed by the platform middleware: count it once.
          const reject = (error: Unauthenticated) =>
            Effect.flatMap(
              state.rate === undefined
                ? limiter.consume(addressBucket("ip", req, trusted))
                : Effect.succeed(state.rate),
              (rate) => {
                state.rate = rate
                return Effect.fail(rate.allowed ? error : exhausted(rate, "ip"))
              }
            )
          const key = requestKey(req, state)
          if (Option.isNone(key)) return reject(unauthenticated)
          return workspaces.authenticate(key.value).pipe(
            Effect.catchAll(reject),
            Effect.flatMap((principal) =>
              Effect.flatMap(
                Effect.flatMap(
                  bodyBytes(req),
                  (bytes) => limiter.consume(`key:${principal.keyId}`, requestCost(bytes))
                ),
                (rate): Effect.Effect<void, ResourceExhausted | PermissionDenied, HttpRouter.RouteContext> => {
                  state.rate = rate
                  if (!rate.allowed) return Effect.fail(exhausted(rate, "key"))
                  state.principal = principal
                  return checkScopes(principal.scopes)
                }
              )
            )
          )
        })
    })
  })
)

/**
 * `adminToken` unset disables the admin API: every admin route then answers 404. The operator's
 * requests are limited in a bucket of their own, and wrong tokens per address in another, so no
 * keyless traffic (limited per address by platform.ts) can lock the operator out.
 */
export const AdminAuthorizationLive = (adminToken: Option.Option<Redacted.Redacted<string>>) =>
  Layer.effect(
    AdminAuthorization,
    Effect.zipWith(RateLimiter, TrustedProxies, (limiter, trusted) =>
      AdminAuthorization.of({
        adminToken: () =>
          Effect.gen(function*() {
            if (Option.isNone(adminToken)) return yield* new NotFound({ message: "No such route" })
            const req = yield* HttpServerRequest.HttpServerRequest
            const given = bearerToken(req.headers["authorization"])
            const valid = given !== undefined && constantTimeEqual(given, Redacted.value(adminToken.value))
            const state = requestState(req)
            state.rate = yield* limiter.consume(valid ? "admin" : addressBucket("admin-ip", req, trusted))
            if (!state.rate.allowed) {
              recordRefusal(valid ? "admin" : "ip")
              return yield* new ResourceExhausted({
                message: "Rate limit exceeded",
                retryAfterSeconds: state.rate.retryAfterSeconds
              })
            }
            if (!valid) return yield* new Unauthenticated({ message: "Missing or wrong admin token" })
          })
      }))
  )

const constantTimeEqual = (a: string, b: string) => {
  const x = new TextEncoder().encode(a)
  const y = new TextEncoder().encode(b)
  let diff = x.length ^ y.length
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0)
  return diff === 0
}

/** core/kernel/input.ts's bounds on a JSON body, scanned as text (the route's decode parses the same cached text). */
export const BoundedBodyLive = Layer.succeed(
  BoundedBody,
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
    if (!BODY_METHODS.has(req.method)) return Effect.void
    return Effect.flatMap(
      Effect.mapError(req.text, (e) => new InvalidArgument({ message: bodyReadMessage(e) })),
      (text) => {
        const problem = jsonTextProblem(text)
        return problem === undefined ? Effect.void : Effect.fail(new InvalidArgument({ message: problem }))
      }
    )
  })
)
