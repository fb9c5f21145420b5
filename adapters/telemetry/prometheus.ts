/**
 * Effect's metric registry as the Prometheus text exposition format (version 0.0.4), served by
 * `GET /metrics`. Pure: a snapshot in, text out. Written here rather than through
 * @opentelemetry/exporter-prometheus, whose serializer needs an OTel MeterProvider and reader in every
 * process; this needs nothing and runs the same on Node and Deno.
 */
import { MetricState, Option } from "effect"
import type { MetricLabel, MetricPair } from "effect"

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** A metric or label name as Prometheus allows it: anything else becomes `_`. */
export const metricName = (name: string): string => {
  const clean = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[0-9]/.test(clean) ? `_${clean}` : clean
}

const labelName = (name: string): string => metricName(name).replace(/:/g, "_")

/** Label values escape backslash, double quote and newline; HELP text backslash and newline. */
export const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")
const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const number = (n: number | bigint): string =>
  typeof n === "bigint"
    ? n.toString()
    : Number.isNaN(n)
    ? "NaN"
    : n === Infinity
    ? "+Inf"
    : n === -Infinity
    ? "-Inf"
    : String(n)

const labels = (tags: ReadonlyArray<MetricLabel.MetricLabel>, extra?: readonly [string, string]): string => {
  const all = tags.map((t) => `${labelName(t.key)}="${escapeLabelValue(t.value)}"`)
  if (extra !== undefined) all.push(`${extra[0]}="${escapeLabelValue(extra[1])}"`)
  return all.length === 0 ? "" : `{${all.join(",")}}`
}

type Family = { type: string; help: string | undefined; lines: Array<string> }

/** The snapshot (`Metric.snapshot`) as exposition text: one `# HELP`/`# TYPE` per metric name, names sorted. */
export const render = (snapshot: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  const family = (name: string, type: string, help: Option.Option<string>): Family => {
    let f = families.get(name)
    if (f === undefined) {
      f = { type, help: Option.getOrUndefined(help), lines: [] }
      families.set(name, f)
    }
    return f
  }
  for (const { metricKey, metricState: state } of snapshot) {
    const name = metricName(metricKey.name)
    const tags = metricKey.tags
    if (MetricState.isCounterState(state)) {
      family(name, "counter", metricKey.description).lines.push(`${name}${labels(tags)} ${number(state.count)}`)
    } else if (MetricState.isGaugeState(state)) {
      family(name, "gauge", metricKey.description).lines.push(`${name}${labels(tags)} ${number(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      const f = family(name, "histogram", metricKey.description)
      // Effect's buckets are cumulative and end with +Inf, as Prometheus wants them.
      for (const [bound, count] of state.buckets) {
        f.lines.push(`${name}_bucket${labels(tags, ["le", number(bound)])} ${count}`)
      }
      f.lines.push(`${name}_sum${labels(tags)} ${number(state.sum)}`, `${name}_count${labels(tags)} ${state.count}`)
    } else if (MetricState.isSummaryState(state)) {
      const f = family(name, "summary", metricKey.description)
      for (const [q, value] of state.quantiles) {
        f.lines.push(
          `${name}${labels(tags, ["quantile", String(q)])} ${
            Option.match(value, { onNone: () => "NaN", onSome: number })
          }`
        )
      }
      f.lines.push(`${name}_sum${labels(tags)} ${number(state.sum)}`, `${name}_count${labels(tags)} ${state.count}`)
    } else if (MetricState.isFrequencyState(state)) {
      // A frequency counts occurrences of each value: a counter with the value as a label.
      const f = family(name, "counter", metricKey.description)
      for (const [key, count] of state.occurrences) f.lines.push(`${name}${labels(tags, ["key", key])} ${count}`)
    }
  }
  const out: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const f = families.get(name)!
    if (f.help !== undefined) out.push(`# HELP ${name} ${escapeHelp(f.help)}`)
    out.push(`# TYPE ${name} ${f.type}`, ...f.lines)
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}
