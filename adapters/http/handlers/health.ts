/** The probes of api/health.ts. Answers are never cached: a probe wants the state now. */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { readiness } from "../../../core/health/readiness.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

const NO_STORE = { "cache-control": "no-store" }

export const HealthLive = group(Api, "health", (handlers) =>
  handlers
    .handle("live", () => Effect.succeed(HttpServerResponse.unsafeJson({ status: "ok" }, { headers: NO_STORE })))
    .handle("ready", () =>
      Effect.map(readiness, ({ ready, checks }) =>
        HttpServerResponse.unsafeJson({ status: ready ? "ok" : "unavailable", checks }, {
          status: ready ? 200 : 503,
          headers: NO_STORE
        }))))
