/**
 * The whole HTTP application as one layer, independent of the server that runs it (nodeServer.ts on
 * Node, Deno's web handler, or in-process tests). Needs the core services and ports.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Layer, type Option, type Redacted } from "effect"
import { Api } from "./api.ts"
import { AdminAuthorizationLive, AuthorizationLive, BoundedBodyLive } from "./auth.ts"
import { TrustedProxies } from "./clientAddress.ts"
import { ConsoleLive } from "./console.ts"
import { AdminLive } from "./handlers/admin.ts"
import { AppLive, ConsoleOriginCheckLive, MemberSessionLive } from "./handlers/app.ts"
import { CarrierLive } from "./handlers/carrier.ts"
import { HealthLive } from "./handlers/health.ts"
import { McpLive, McpStreamLive } from "./handlers/mcp.ts"
import { MediaLive } from "./handlers/media.ts"
import { MetricsLive } from "./handlers/metrics.ts"
import { PaymentsLive } from "./handlers/payments.ts"
import { ReferenceLive } from "./handlers/reference.ts"
import { TestHelpersLive } from "./handlers/testHelpers.ts"
import * as Platform from "./platform.ts"

import { CapabilitiesLive } from "./capabilities.ts"

export { type CapabilityEndpoint, capabilityEndpoints } from "./capabilities.ts"

export interface HttpOptions {
  readonly adminToken: Option.Option<Redacted.Redacted<string>>
  /** Serve /v1/api/test-helpers (TEST_HELPERS). */
  readonly testHelpers: boolean
  /** Browser origins allowed to use `POST /v1/mcp` (MCP_ALLOWED_ORIGINS); requests without `Origin` always are. */
  readonly mcpAllowedOrigins?: ReadonlyArray<string>
  /** How many reverse proxies to trust for the client's address in `X-Forwarded-For` (TRUST_PROXY); default 0, the header ignored. */
  readonly trustProxy?: number
}

export const ApiLive = (options: HttpOptions) =>
  HttpApiBuilder.api(Api).pipe(
    Layer.provide([
      CapabilitiesLive,
      TestHelpersLive(options.testHelpers),
      McpLive({ allowedOrigins: options.mcpAllowedOrigins ?? [] }),
      McpStreamLive,
      MediaLive,
      CarrierLive,
      PaymentsLive,
      AdminLive,
      AppLive,
      MetricsLive,
      HealthLive,
      ReferenceLive,
      ConsoleLive(Api)
    ]),
    Layer.provide([
      AuthorizationLive,
      AdminAuthorizationLive(options.adminToken),
      BoundedBodyLive,
      MemberSessionLive,
      ConsoleOriginCheckLive
    ])
  )

/** Routes and the platform middleware; provide it the core services. */
export const HttpAppLive = (options: HttpOptions) =>
  Platform.layer.pipe(
    Layer.provideMerge(ApiLive(options)),
    Layer.provide(Layer.succeed(TrustedProxies, options.trustProxy ?? 0))
  )

/** Serves HttpAppLive: our router's serve and toWebHandler with the fast path on, HttpApiBuilder's own with it off (router.ts, adapters/fastPath.ts). */
export { serve, toWebHandler } from "./router.ts"
