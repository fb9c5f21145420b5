/** Implementations of the security middleware declared in security.ts. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { ResourceExhausted, NotFound, Unauthenticated } from "../../core/errors.ts"
import { RateLimiter } from "../../core/ratelimit.ts"
import { Workspaces } from "../../core/workspaces/service.ts"
import { bearerToken, CurrentRequest } from "./platform.ts"
import { AdminAuthorization, Authorization } from "./security.ts"

const unauthenticated = new Unauthenticated({ message: "Missing, malformed, unknown or revoked API key" })

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const limiter = yield* RateLimiter
    return Authorization.of({
      // HttpApiSecurity.bearer accepts any header and slices it blindly; read the header ourselves.
      apiKey: () =>
        Effect.gen(function* () {
          const req = yield* HttpServerRequest.HttpServerRequest
          const state = yield* CurrentRequest
          const token = bearerToken(req.headers["authorization"])
          if (token === undefined) return yield* unauthenticated
          const principal = yield* workspaces.authenticate(token).pipe(
            Effect.catchAll((error) =>
              Effect.gen(function* () {
                // An unknown key is billed to the caller's address, so guessing keys is rate limited
                // too. A malformed one was already billed by the platform middleware: count it once.
                state.rate ??= yield* limiter.consume(`ip:${Option.getOrElse(req.remoteAddress, () => "unknown")}`)
                if (!state.rate.allowed) {
                  return yield* new ResourceExhausted({
                    message: "Rate limit exceeded",
                    retryAfterSeconds: state.rate.retryAfterSeconds
                  })
                }
                return yield* error
              })
            )
          )
          const decision = yield* limiter.consume(`key:${principal.keyId}`)
          state.rate = decision
          if (!decision.allowed) {
            return yield* new ResourceExhausted({
              message: "Rate limit exceeded",
              retryAfterSeconds: decision.retryAfterSeconds
            })
          }
          return principal
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
