/**
 * The one shape every benchmark reports its headline figures in, so `npm run bench` can print them as
 * one table (and regenerate the one in docs/benchmarks.md) whichever benchmarks ran. Each benchmark
 * writes its rows to `apps/bench/results/figures-<name>.json` beside its own detailed results
 * file, keeping the run before as `previous`: the table shows each figure's last two runs, as a
 * single run can mislead.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { benchDir } from "./harness.ts"

export interface Figure {
  /** What was measured, e.g. "POST /v1/api/messages (Postgres, test key)". */
  readonly figure: string
  readonly value: number
  /** "req/s", "ms", "deliveries/s", "MB"... */
  readonly unit: string
  /** The same quantity measured for the floor it is compared with, in the same run. */
  readonly baseline?: { readonly label: string; readonly value: number }
  /** value / baseline.value (or the inverse for lower-is-better units), when there is a baseline. */
  readonly ratio?: number
  /** The target, in words: ">= 0.5 of the floor", "p95 < 20 ms". */
  readonly target?: string
  /** Whether the target holds in this run; absent when there is no target. */
  readonly met?: boolean
}

export interface FigureSet {
  readonly benchmark: string
  readonly startedAt: string
  readonly host: string
  readonly figures: ReadonlyArray<Figure>
}

/** A benchmark's file: its last run, and the one before. */
interface FiguresFile extends FigureSet {
  readonly previous?: FigureSet
}

const resultsDir = join(benchDir, "results")

const readFile = (file: string): FiguresFile | undefined => {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as FiguresFile
  } catch {
    return undefined
  }
}

export const writeFigures = (set: FigureSet): string => {
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, `figures-${set.benchmark}.json`)
  const before = readFile(file)
  const previous = before &&
    { benchmark: before.benchmark, startedAt: before.startedAt, host: before.host, figures: before.figures }
  writeFileSync(file, JSON.stringify(previous ? { ...set, previous } : set, null, 2) + "\n")
  return file
}

/** Each benchmark's last run and the run before it (when there was one). */
export const readFigures = (): ReadonlyArray<{ readonly last: FigureSet; readonly previous?: FigureSet }> =>
  readdirSync(resultsDir)
    .filter((name) => /^figures-.+\.json$/.test(name))
    .sort()
    .map((name) => {
      const { previous, ...last } = readFile(join(resultsDir, name))!
      return previous ? { last, previous } : { last }
    })
