/** `GET /metrics`: the service's metrics for Prometheus scrapers, bearer `ADMIN_TOKEN` (adapters/telemetry). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { CONTENT_TYPE } from "../../telemetry/prometheus.ts"
import { AdminAuthorization } from "../security.ts"

const Exposition = HttpApiSchema.Text({ contentType: CONTENT_TYPE }).annotations({
  description: "Prometheus text exposition format 0.0.4",
  examples: [
    "# HELP http_server_requests_total HTTP requests answered, by route template, method and status\n# TYPE http_server_requests_total counter\nhttp_server_requests_total{route=\"/v1/api/contacts/:id\",method=\"GET\",status=\"200\"} 42\n"
  ]
})

export class MetricsGroup extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(Exposition)
      .annotate(OpenApi.Summary, "Metrics for Prometheus")
      .annotate(
        OpenApi.Description,
        "Request counts and durations by route template, method and status; SQL statement time; webhook queue depth, oldest pending age and delivery outcomes; idempotency replays; rate-limit refusals. Counters count from the start of this process."
      )
  )
  .middleware(AdminAuthorization)
  .annotate(OpenApi.Title, "Metrics")
  .annotate(
    OpenApi.Description,
    "Operator metrics for scrapers, outside the versioned API. Bearer `ADMIN_TOKEN`; absent (404) when unset."
  )
{}
