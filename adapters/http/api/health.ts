/**
 * Probes for load balancers and orchestrators: `GET /healthz` (the process is up) and `GET /readyz`
 * (it can serve: database, migrations, webhook worker). No key, no secrets in the answer, and not
 * counted against the per-address rate limit (platform.ts), so a probe is never refused with 429.
 * Served by handlers/health.ts.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export const Live = Schema.Struct({ status: Schema.Literal("ok") })

const Checks = Schema.Struct({
  database: Schema.Literal("ok", "unreachable", "read_only").annotations({
    description:
      "`ok` when the database answers a trivial query within 2 s and takes writes; `read_only` when it answers but takes none (a standby not yet promoted)"
  }),
  migrations: Schema.Literal("ok", "pending", "unknown").annotations({
    description: "`ok` when every migration of this version is applied; `unknown` when the database did not answer"
  }),
  webhookWorker: Schema.Literal("ok", "disabled", "stopped").annotations({
    description: "`ok` running, `disabled` by `WEBHOOK_WORKER=false` (still ready), `stopped` after having run"
  })
})

export const Ready = Schema.Struct({ status: Schema.Literal("ok"), checks: Checks }).annotations({
  identifier: "Ready"
})

export const Unavailable = Schema.Struct({ status: Schema.Literal("unavailable"), checks: Checks }).annotations(
  HttpApiSchema.annotations({
    status: 503,
    identifier: "Unavailable",
    description: "Not ready: `checks` names the check that failed"
  })
)

/** Paths the platform middleware serves without a per-address rate limit. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz"])

export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("live", "/healthz")
      .addSuccess(Live)
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(OpenApi.Description, "The process is up and answering. No key; not rate limited.")
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .addSuccess(Ready)
      .addError(Unavailable)
      .annotate(OpenApi.Summary, "Readiness")
      .annotate(
        OpenApi.Description,
        "200 when this process can serve: the database answers, every migration is applied, and the webhook worker runs where enabled; otherwise 503 naming the failed check. No key; not rate limited."
      )
  )
  .annotate(OpenApi.Description, "Liveness and readiness probes for load balancers and orchestrators")
{}
