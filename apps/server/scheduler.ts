/**
 * The fiber scheduler of the server process: Effect's default one, except that a run of fibers
 * yields to the event loop after `sliceMs`.
 *
 * Effect resumes fibers in microtasks (up to 2048 rounds before a timer), and the embedded database
 * (PGlite) runs each statement synchronously on this thread, so under a burst of requests one run
 * of microtasks went on for hundreds of milliseconds and the event loop never reached its I/O poll:
 * sockets went unread meanwhile. A webhook receiver's answer sat there unrecorded, and a crash in
 * that time sent the attempt again (issue 38, item 7). Here, once a run has lasted `sliceMs`, its
 * fibers continue in a macrotask (setImmediate), so the poll reads what arrived meanwhile.
 */
import { Scheduler } from "effect"
import { setImmediate } from "node:timers"

/** Longest run of fibers before the event loop gets its turn. */
export const SLICE_MS = 10
/** Microtask rounds before a timer, as Effect's default scheduler. */
const MAX_MICROTASK_ROUNDS = 2048

export const timeSliced = (sliceMs: number = SLICE_MS): Scheduler.Scheduler => {
  // Whether this run of microtasks has its end marker queued, and when the run began.
  let marked = false
  let runStart = 0
  const runner = Scheduler.SchedulerRunner.cached((depth, drain) => {
    if (!marked) {
      // A macrotask queued now runs only once the microtasks are done: it marks the run's end.
      marked = true
      runStart = performance.now()
      setImmediate(() => (marked = false))
    } else if (performance.now() - runStart >= sliceMs) {
      // Behind the marker, in the loop's check phase: the I/O poll runs before it, or before the next slice at the latest.
      return void setImmediate(() => drain(0))
    }
    if (depth >= MAX_MICROTASK_ROUNDS) setTimeout(() => drain(0), 0)
    else Promise.resolve().then(() => drain(depth + 1))
  })
  return Scheduler.make((task, priority, fiber) => runner(fiber).scheduleTask(task, priority))
}
