/**
 * The Prometheus rendering of Effect's registry (adapters/telemetry/prometheus.ts), read back by the
 * test's own parser: TYPE lines, escaped label values, cumulative histogram buckets ending in +Inf,
 * names Prometheus accepts; and the embedded database's statements timed into the SQL histogram.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Metric, MetricBoundaries } from "effect"
import { describe, expect, it } from "vitest"
import { metricName, render } from "../../adapters/telemetry/prometheus.ts"
import { freshPglite } from "../support/pglite.ts"
import { parseExposition, valueOf } from "./promText.ts"

const scrape = () => parseExposition(render(Metric.unsafeSnapshot()))

describe("render", () => {
  it("writes counters, gauges and histograms with TYPE lines and escaped labels", () => {
    const hostile = "a \"quoted\" \\ back\nslash"
    Metric.counter("test_render_total", { description: "line one\nline two" }).pipe(Metric.tagged("label", hostile))
      .unsafeUpdate(3, [])
    Metric.gauge("test.render-gauge").unsafeUpdate(-1.5, [])
    const h = Metric.histogram("test_render_seconds", MetricBoundaries.fromIterable([0.1, 1]))
    for (const v of [0.05, 0.5, 5]) h.unsafeUpdate(v, [])

    const text = render(Metric.unsafeSnapshot())
    expect(text).toContain("# HELP test_render_total line one\\nline two\n")
    expect(text).toContain(`test_render_total{label="a \\"quoted\\" \\\\ back\\nslash"} 3\n`)
    const e = parseExposition(text)
    expect(e.types.get("test_render_total")).toBe("counter")
    expect(valueOf(e, "test_render_total", { label: hostile })).toBe(3)
    expect(e.types.get("test_render_gauge")).toBe("gauge")
    expect(valueOf(e, "test_render_gauge")).toBe(-1.5)
    expect(e.types.get("test_render_seconds")).toBe("histogram")
    expect(
      [0.1, 1, Infinity].map((le) =>
        valueOf(e, "test_render_seconds_bucket", { le: le === Infinity ? "+Inf" : String(le) })
      )
    ).toEqual([1, 2, 3])
    expect(valueOf(e, "test_render_seconds_count")).toBe(3)
    expect(valueOf(e, "test_render_seconds_sum")).toBeCloseTo(5.55)
    // One TYPE line per name, whatever its label sets.
    expect(text.split("\n").filter((l) => l.startsWith("# TYPE ")).length).toBe(e.types.size)
  })

  it("makes any metric name one Prometheus accepts", () => {
    expect(metricName("http.server.duration")).toBe("http_server_duration")
    expect(metricName("9lives")).toBe("_9lives")
    expect(metricName("ok_name:sub")).toBe("ok_name:sub")
  })
})

it("times every statement on the embedded database into the SQL histogram", async () => {
  const count = () => valueOf(scrape(), "db_client_statement_duration_seconds_count") ?? 0
  const before = count()
  await Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`SELECT 1`
      yield* sql`SELECT ${2}::int AS n`
    }).pipe(Effect.provide(freshPglite("empty")))
  )
  // Two statements, plus whatever the client ran while starting.
  expect(count() - before).toBeGreaterThanOrEqual(2)
  expect(valueOf(scrape(), "db_client_statement_duration_seconds_sum")).toBeGreaterThan(0)
}, 60_000)
