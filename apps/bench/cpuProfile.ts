/**
 * Summaries of a V8 `.cpuprofile` (written by `node --cpu-prof`): the functions with the most self
 * time, and the regions (functions and packages) with the most inclusive time, each as a share of
 * the sampled time that was not idle.
 */
import { readFileSync } from "node:fs"
import type { CpuProfile, ProfileNode } from "./profileWindow.ts"

export interface Share {
  readonly name: string
  readonly percent: number
}

export interface ProfileSummary {
  /** Sampled milliseconds, idle and GC included. */
  readonly sampledMs: number
  readonly idlePercent: number
  readonly gcPercent: number
  /** Self time by function, of the busy (non-idle) time. */
  readonly self: ReadonlyArray<Share>
  /** Inclusive time by function, of the busy time: each sample counts once per function on its stack. */
  readonly inclusive: ReadonlyArray<Share>
  /** Self time by package (`effect`, `@effect/sql`, `pg`, node internals, the app's own files). */
  readonly packages: ReadonlyArray<Share>
}

const packageOf = (url: string) => {
  if (url === "") return "(native/V8)"
  if (url.startsWith("node:")) return "node internals"
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  const app = /\/(core|adapters|apps)\/(.*)$/.exec(url)
  return app ? `app: ${app[1]}/${app[2]}` : url
}

const short = (url: string) => {
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) return url.slice(nm + "node_modules/".length)
  const app = /\/((core|adapters|apps)\/.*)$/.exec(url)
  return app ? app[1]! : url.replace(/^file:\/\//, "")
}

export const summarizeProfile = (file: string, top = 25): ProfileSummary => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const label = (n: ProfileNode) =>
    `${n.callFrame.functionName || "(anonymous)"} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`

  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const packages = new Map<string, number>()
  let total = 0
  let idle = 0
  let gc = 0
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000
    total += dt
    const node = byId.get(id)!
    const name = node.callFrame.functionName
    if (name === "(idle)" || name === "(program)") {
      idle += name === "(idle)" ? dt : 0
      if (name === "(idle)") return
    }
    if (name === "(garbage collector)") gc += dt
    self.set(label(node), (self.get(label(node)) ?? 0) + dt)
    packages.set(packageOf(node.callFrame.url), (packages.get(packageOf(node.callFrame.url)) ?? 0) + dt)
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = label(byId.get(at)!)
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt)
    }
  })
  const busy = total - idle
  const shares = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, ms]) => ({ name, percent: (100 * ms) / busy }))
  return {
    sampledMs: total,
    idlePercent: (100 * idle) / total,
    gcPercent: (100 * gc) / busy,
    self: shares(self, top),
    inclusive: shares(inclusive, top * 3).filter((s) => !/^\((root|program)\)/.test(s.name)),
    packages: shares(packages, 15)
  }
}
