/**
 * The server's fiber scheduler (apps/server/scheduler.ts): fibers that keep each other busy (as a
 * burst of requests on the embedded database does, each statement run synchronously) still let the
 * event loop run its timers and I/O every few milliseconds. Effect's default scheduler does not.
 *
 * Counted, not timed: how many times a 1 ms timer ran while the fibers worked. A loaded machine
 * slows both runs alike and changes neither count much.
 */
import { Effect, Scheduler } from "effect"
import { describe, expect, it } from "vitest"
import { timeSliced } from "../../apps/server/scheduler.ts"

/** 8 busy fibers of 50 steps, each ~1 ms of CPU then a promise; how often a 1 ms timer ran meanwhile. */
const timerRunsWhileBusy = async (scheduler: Scheduler.Scheduler) => {
  const busy = Effect.gen(function*() {
    for (let step = 0; step < 50; step++) {
      const end = performance.now() + 1
      while (performance.now() < end) {
        // CPU work, as PGlite's statement
      }
      yield* Effect.promise(() => Promise.resolve())
    }
  })
  let runs = 0
  const timer = setInterval(() => runs++, 1)
  await Effect.runPromise(
    Effect.all(Array.from({ length: 8 }, () => busy), { concurrency: "unbounded", discard: true }).pipe(
      Effect.withScheduler(scheduler)
    )
  )
  const during = runs
  clearInterval(timer)
  return during
}

describe("time-sliced scheduler", () => {
  it("lets timers run every few milliseconds while fibers keep the thread busy", async () => {
    // Sliced: the timer runs at each slice's end (every 10 ms of the ~400 ms of work). Unsliced: not once.
    expect(await timerRunsWhileBusy(timeSliced())).toBeGreaterThanOrEqual(10)
    expect(await timerRunsWhileBusy(Scheduler.defaultScheduler)).toBeLessThanOrEqual(1)
  })
})
