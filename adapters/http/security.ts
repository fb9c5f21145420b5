/** Security middleware tags of the contract; their implementations live in auth.ts. */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { CurrentPrincipal } from "../../core/auth/principal.ts"
import { NotFound, ResourceExhausted, Unauthenticated } from "../../core/errors.ts"

/** API keys: `Authorization: Bearer svc_live_...`; provides the Principal; also enforces the rate limit. */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("Authorization", {
  failure: Schema.Union(Unauthenticated, ResourceExhausted),
  provides: CurrentPrincipal,
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

/** The operator token (`ADMIN_TOKEN`). With no token configured the admin API answers 404. */
export class AdminAuthorization extends HttpApiMiddleware.Tag<AdminAuthorization>()("AdminAuthorization", {
  failure: Schema.Union(Unauthenticated, NotFound),
  security: { adminToken: HttpApiSecurity.bearer }
}) {}
