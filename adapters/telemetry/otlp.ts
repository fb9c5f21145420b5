/**
 * OpenTelemetry export by OTLP/HTTP (JSON), on when `OTEL_EXPORTER_OTLP_ENDPOINT` is set: spans
 * (HTTP server spans, @effect/sql's `sql.execute` spans under them) through a batch processor, and
 * Effect's metric registry read by a periodic reader. The exporters read the rest of the standard
 * `OTEL_EXPORTER_OTLP_*` variables themselves (per-signal endpoints, headers, timeouts).
 *
 * Unset, tracing is turned off: a span would only cost time on every request, and the Node server
 * adds its HTTP server span only while tracing is on (nodeServer.ts). Metrics are still kept for
 * `GET /metrics`.
 */
import { NodeSdk } from "@effect/opentelemetry"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Layer, Option } from "effect"

export interface OtlpConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT, e.g. `http://collector:4318`: `/v1/traces` and `/v1/metrics` are appended. */
  readonly endpoint: Option.Option<string>
  /** OTEL_SERVICE_NAME. */
  readonly serviceName: string
  /** OTEL_METRIC_EXPORT_INTERVAL: how often metrics are pushed. */
  readonly metricExportIntervalMs: number
}

export const layer = (config: OtlpConfig): Layer.Layer<never> =>
  Option.match(config.endpoint, {
    onNone: () => Layer.setTracerEnabled(false),
    // The exporters take the endpoint from the environment, as the OTLP exporter specification says.
    onSome: () =>
      NodeSdk.layer(() => ({
        resource: { serviceName: config.serviceName },
        spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()),
        metricReader: new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter(),
          exportIntervalMillis: config.metricExportIntervalMs,
          exportTimeoutMillis: Math.min(30_000, config.metricExportIntervalMs)
        })
      })).pipe(Layer.discard)
  })
