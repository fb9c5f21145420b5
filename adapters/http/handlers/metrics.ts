import { Effect, Metric } from "effect"
import { render } from "../../telemetry/prometheus.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

/** The registry as Prometheus text: every metric of this process, read at scrape time. */
export const MetricsLive = group(
  Api,
  "metrics",
  (handlers) => Effect.succeed(handlers.handle("metrics", () => Effect.map(Metric.snapshot, render)))
)
