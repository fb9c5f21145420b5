/**
 * The service's metrics, as Effect metrics in Effect's global registry: `GET /metrics` renders them
 * as Prometheus text (prometheus.ts) and, when OTLP is configured, @effect/opentelemetry exports
 * them (otlp.ts). The idempotency replay counter lives beside its runner in core/idempotency.
 *
 * Hot paths update through `unsafeUpdate` with one cached label array per label set: Effect caches
 * the registry hook per label array, so an update is a map lookup and an add, with no fiber steps.
 */
import { type Clock, Metric, MetricBoundaries, MetricLabel } from "effect"

/** Seconds, from 1 ms to 10 s: an API answer, a SQL statement. */
const SECONDS = MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

export const httpRequests = Metric.counter("http_server_requests_total", {
  description: "HTTP requests answered, by route template, method and status",
  incremental: true
})

export const httpDuration = Metric.histogram(
  "http_server_request_duration_seconds",
  SECONDS,
  "Time from the request reaching the app to its response being ready, by route template, method and status"
)

export const sqlDuration = Metric.histogram(
  "db_client_statement_duration_seconds",
  SECONDS,
  "Time of one SQL statement, from sending it to its rows"
)

const NO_LABELS: ReadonlyArray<MetricLabel.MetricLabel> = []

/** One statement's time, from `started` (the clock's nanoseconds) to now. */
export const recordStatement = (clock: Clock.Clock, started: bigint): void =>
  sqlDuration.unsafeUpdate(Number(clock.unsafeCurrentTimeNanos() - started) / 1e9, NO_LABELS)

export const rateLimitRefusals = Metric.counter("rate_limit_refusals_total", {
  description: "Requests refused with 429, by bucket kind (ip, key, admin)",
  incremental: true
})

export const webhookDeliveries = Metric.counter("webhook_deliveries_total", {
  description: "Webhook delivery attempts, by outcome: success, failure (retried later), gave_up (no retry left)",
  incremental: true
})

export const scheduledSends = Metric.counter("scheduled_sends_total", {
  description: "Scheduled messages and broadcast recipients this process settled: sent, failed or skipped",
  incremental: true
})

export const webhookQueueDepth = Metric.gauge("webhook_queue_depth", {
  description: "Webhook deliveries pending (due now or retrying later)"
})

export const webhookOldestPendingAge = Metric.gauge("webhook_oldest_pending_age_seconds", {
  description: "Age of the oldest pending webhook delivery; 0 when none"
})

/** One label array per label set, kept for the life of the process (label sets are bounded). */
export const labelCache = () => {
  const cache = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
  return (key: string, make: () => ReadonlyArray<MetricLabel.MetricLabel>): ReadonlyArray<MetricLabel.MetricLabel> => {
    let labels = cache.get(key)
    if (labels === undefined) {
      labels = make()
      cache.set(key, labels)
    }
    return labels
  }
}

const refusalLabels = labelCache()

/** A 429 answered, billed to a bucket of this kind. */
export const recordRefusal = (kind: "ip" | "key" | "admin"): void =>
  rateLimitRefusals.unsafeUpdate(1, refusalLabels(kind, () => [MetricLabel.make("bucket", kind)]))
