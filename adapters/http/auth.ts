/** Implementations of the security middleware declared in security.ts. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { ResourceExhausted, NotFound, Unauthenticated } from "../../core/errors.ts"
import { type Decision, RateLimiter } from "../../core/ratelimit.ts"
import { Workspaces } from "../../core/workspaces/service.ts"
import { bearerToken, requestKey, requestState } from "./platform.ts"
import { AdminAuthorization, Authorization } from "./security.ts"

const unauthenticated = new Unauthenticated({ message: "Missing, malformed, unknown or revoked API key" })

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const limiter = yield* RateLimiter
    const exhausted = (rate: Decision) => new ResourceExhausted({ message: "Rate limit exceeded", retryAfterSeconds: rate.retryAfterSeconds })
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
              state.rate === undefined ? limiter.consume(`ip:${Option.getOrElse(req.remoteAddress, () => "unknown")}`) : Effect.succeed(state.rate),
              (rate) => {
                state.rate = rate
                return Effect.fail(rate.allowed ? error : exhausted(rate))
              }
            )
          const key = requestKey(req, state)
          if (Option.isNone(key)) return reject(unauthenticated)
          return workspaces.authenticate(key.value).pipe(
            Effect.catchAll(reject),
            Effect.flatMap((principal) =>
              Effect.flatMap(limiter.consume(`key:${principal.keyId}`), (rate) => {
                state.rate = rate
                if (!rate.allowed) return Effect.fail(exhausted(rate))
                state.principal = principal
                return Effect.void
              })
            )
          )
        })
    })
  })
)

/** `adminToken` unset disables the admin API: every admin route then answers 404. */
export const AdminAuthorizationLive = (adminToken: Option.Option<Redacted.Redacted<string>>) =>
  Layer.succeed(
    AdminAuthorization,
    AdminAuthorization.of({
      adminToken: () =>
        Effect.gen(function* () {
          if (Option.isNone(adminToken)) return yield* new NotFound({ message: "No such route" })
          const req = yield* HttpServerRequest.HttpServerRequest
          const given = bearerToken(req.headers["authorization"])
          if (given === undefined || !constantTimeEqual(given, Redacted.value(adminToken.value))) {
            return yield* new Unauthenticated({ message: "Missing or wrong admin token" })
          }
        })
    })
  )

const constantTimeEqual = (a: string, b: string) => {
  const x = new TextEncoder().encode(a)
  const y = new TextEncoder().encode(b)
  let diff = x.length ^ y.length
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0)
  return diff === 0
}
