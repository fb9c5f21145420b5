/**
 * Where a server's CPU went during one phase of a benchmark: a V8 `.cpuprofile` (node --cpu-prof)
 * cut to a window of the monotonic clock. V8 stamps samples in microseconds of the same clock as
 * `process.hrtime` (CLOCK_MONOTONIC), so the benchmark process can mark the phase it drove.
 */
import { readFileSync } from "node:fs"

/** A V8 `.cpuprofile`, as `node --cpu-prof` writes it (also read by cpuProfile.ts). */
export interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}

export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface Share {
  readonly name: string
  readonly ms: number
  readonly percent: number
}

export interface WindowSummary {
  /** Milliseconds of samples inside the window, idle included. */
  readonly sampledMs: number
  /** The process's busy share of the window (one core = 100). */
  readonly busyPercent: number
  /** Self time by region (a package, node internals, GC, one of the app's folders), of the busy time. */
  readonly regions: ReadonlyArray<Share>
  /** Self time by function, of the busy time. */
  readonly functions: ReadonlyArray<Share>
}

/** Microseconds of the monotonic clock, as V8 stamps profile samples. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n)

const regionOf = (node: ProfileNode) => {
  const { functionName, url } = node.callFrame
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)"
  if (url.startsWith("node:")) return "node internals"
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) {
    const [scope, name] = url.slice(nm + "node_modules/".length).split("/")
    return scope!.startsWith("@") ? `${scope}/${name}` : scope!
  }
  const app = /\/(core|adapters|apps)\/([^/]+)/.exec(url)
  return app ? `app ${app[1]}/${app[2]}` : url
}

const where = (url: string) => {
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) return url.slice(nm + "node_modules/".length)
  const app = /\/((core|adapters|apps)\/.*)$/.exec(url)
  return app ? app[1]! : url.replace(/^file:\/\//, "")
}

export const summarizeWindow = (file: string, fromMicros: number, toMicros: number, top = 15): WindowSummary => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const regions = new Map<string, number>()
  const functions = new Map<string, number>()
  const add = (m: Map<string, number>, k: string, ms: number) => m.set(k, (m.get(k) ?? 0) + ms)
  let at = profile.startTime
  let sampled = 0
  let idle = 0
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0
    if (at < fromMicros || at > toMicros) return
    const ms = (profile.timeDeltas[i] ?? 0) / 1000
    sampled += ms
    const node = byId.get(id)!
    if (node.callFrame.functionName === "(idle)") {
      idle += ms
      return
    }
    add(regions, regionOf(node), ms)
    add(
      functions,
      `${node.callFrame.functionName || "(anonymous)"} ${where(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`,
      ms
    )
  })
  const busy = sampled - idle
  const shares = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, ms]) => ({ name, ms, percent: (100 * ms) / busy }))
  return {
    sampledMs: sampled,
    busyPercent: (100 * busy) / ((toMicros - fromMicros) / 1000),
    regions: shares(regions),
    functions: shares(functions)
  }
}
