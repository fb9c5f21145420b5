/**
 * `npm run fuzz`: the fuzz property of test/fuzz/api.test.ts for longer, counting failures instead
 * of stopping at the first. FUZZ_RUNS requests (default 10000), FUZZ_SEED (default: a random seed,
 * printed so a run can be repeated). Exits 1 when anything failed, after the shortest failing
 * request of each kind on each operation.
 */
import fc from "fast-check"
import { fuzzProperty, newStats } from "./property.ts"
import { startWorld } from "./world.ts"

const runs = Number(process.env["FUZZ_RUNS"] ?? 10_000)
const seed = process.env["FUZZ_SEED"] === undefined
  ? Math.floor(Math.random() * 2 ** 31)
  : Number(process.env["FUZZ_SEED"])
console.log(`fuzz: seed ${seed}, ${runs} runs`)

const world = await startWorld()
const stats = newStats()
const started = Date.now()
try {
  await fc.check(fuzzProperty(world, stats, "count"), { seed, numRuns: runs })
} finally {
  await world.close()
}
for (const [key, failure] of [...stats.failures].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`\n=== ${key}\n${failure.reproduction}`)
}
console.log(
  `\nfuzz: seed ${seed}: ${stats.requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
    `${stats.failing} failing, ${stats.fiveXX} 5xx, ${stats.nonEnvelope} without the envelope, ${stats.failures.size} kinds of failure`
)
process.exit(stats.failing > 0 ? 1 : 0)
