/**
 * The server's fiber scheduler (apps/server/scheduler.ts): fibers that keep each other busy (as a
 * burst of requests on the embedded database does, each statement run synchronously) still let the
 * event loop run its timers and I/O every few milliseconds. Effect's default scheduler does not.
 */
import { Effect, Scheduler } from "effect"
import { describe, expect, it } from "vitest"
import { timeSliced } from "../../apps/server/scheduler.ts"

/** Busy fibers for `ms`, each step ~1 ms of CPU then a promise; the longest a 1 ms timer waited meanwhile. */
const longestTimerWait = async (scheduler: Scheduler.Scheduler, ms: number) => {
  const until = performance.now() + ms
  const busy = Effect.gen(function*() {
    while (performance.now() < until) {
      const end = performance.now() + 1
      while (performance.now() < end) {
        // CPU work, as PGlite's statement
      }
      yield* Effect.promise(() => Promise.resolve())
    }
  })
  let longest = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 1)
  await Effect.runPromise(
    Effect.all(Array.from({ length: 8 }, () => busy), { concurrency: "unbounded", discard: true }).pipe(
      Effect.withScheduler(scheduler)
    )
  )
  clearInterval(timer)
  return Math.max(longest, performance.now() - last)
}

describe("time-sliced scheduler", () => {
  it("lets timers run every few milliseconds while fibers keep the thread busy", async () => {
    const sliced = await longestTimerWait(timeSliced(), 400)
    const unsliced = await longestTimerWait(Scheduler.defaultScheduler, 400)
    // Sliced: a slice (10 ms) and a step or two; a loaded machine may add a few more. Unsliced: the whole run.
    expect(sliced).toBeLessThan(100)
    expect(unsliced).toBeGreaterThan(300)
  })
})
