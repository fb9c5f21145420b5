/** Security middleware tags of the contract; their implementations live in auth.ts. */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { NotFound, ResourceExhausted, Unauthenticated } from "./api/errors.ts"

/**
 * API keys: `Authorization: Bearer svc_live_...`; also enforces the rate limit. The resolved
 * Principal goes into the request state (read with `CurrentPrincipal` from platform.ts) rather than
 * `provides`: a provided service would cost every authenticated request one more fiber-ref region
 * (docs/performance.md).
 */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("Authorization", {
  failure: Schema.Union(Unauthenticated, ResourceExhausted),
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

/** The operator token (`ADMIN_TOKEN`). With no token configured the admin API answers 404. */
export class AdminAuthorization extends HttpApiMiddleware.Tag<AdminAuthorization>()("AdminAuthorization", {
  failure: Schema.Union(Unauthenticated, NotFound),
  security: { adminToken: HttpApiSecurity.bearer }
}) {}
