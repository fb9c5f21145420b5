/** Security middleware tags of the contract; their implementations live in auth.ts. */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import type { Scope } from "../../core/auth/scopes.ts"
import { InvalidArgument, NotFound, PermissionDenied, ResourceExhausted, Unauthenticated } from "./api/errors.ts"

/**
 * API keys: `Authorization: Bearer svc_live_...`; also enforces the rate limit and the scopes the
 * endpoint declares (`RequiredScopes`), before the body is read. The resolved Principal goes into
 * the request state (read with `CurrentPrincipal` from platform.ts) rather than `provides`: a
 * provided service would cost every authenticated request one more fiber-ref region
 * (docs/architecture.md, "The Principal travels in the request state").
 */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("Authorization", {
  failure: Schema.Union(Unauthenticated, ResourceExhausted, PermissionDenied),
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

/** The scopes a key needs for an endpoint behind `Authorization` (SPEC "Authentication"); set with `requires` (api/shared.ts). */
export class RequiredScopes extends Context.Tag("switchboard/RequiredScopes")<RequiredScopes, ReadonlyArray<Scope>>() {}

/** The operator token (`ADMIN_TOKEN`). With no token configured the admin API answers 404. */
export class AdminAuthorization extends HttpApiMiddleware.Tag<AdminAuthorization>()("AdminAuthorization", {
  failure: Schema.Union(Unauthenticated, NotFound, ResourceExhausted),
  security: { adminToken: HttpApiSecurity.bearer }
}) {}

/**
 * A JSON body within the input bounds of core/kernel/input.ts, checked before any Schema decodes it.
 * Groups list it before their security middleware: a group's middlewares run last-listed first, so
 * the caller is authenticated (and its scope checked) before the body is read.
 */
export class BoundedBody extends HttpApiMiddleware.Tag<BoundedBody>()("BoundedBody", {
  failure: InvalidArgument
}) {}
