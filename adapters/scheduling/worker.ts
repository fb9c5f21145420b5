/**
 * The scheduling worker, for the life of the server: claims due scheduled messages and broadcast
 * recipients in batches and sends them (core/scheduling/engine.ts), and gives up sends whose
 * process died mid-send. Any number of processes may run it on one Postgres: claims skip what
 * another holds, and the pace each workspace keeps is shared (core/pacing/pacer.ts).
 *
 * A batch's sends run apart from the loop, which claims the next batch as soon as this one is
 * booked: while they wait for their times, the next are booked behind them, so a fast pace leaves
 * no gap between batches. Slots bound the sends a process holds.
 */
import { Clock, Duration, Effect, Layer, Metric, Option } from "effect"
import { forever } from "../../core/kernel/forever.ts"
import { SchedulingEngine } from "../../core/scheduling/engine.ts"
import { scheduledSends } from "../telemetry/metrics.ts"

export interface SchedulingWorkerOptions {
  /** How long an idle worker waits before looking again (sooner when a send falls due sooner). */
  readonly pollMs?: number
  /** Most sends claimed at once. */
  readonly batch?: number
  /** Most sends claimed and not yet settled in this process. */
  readonly inFlight?: number
  /**
   * No other worker can run on this database (the embedded one): a send left `sending` at the
   * start belongs to a process that died, and is given up at once rather than when its mark runs out.
   */
  readonly soleWorker?: boolean
}

export const DEFAULT_POLL_MS = 1000
export const DEFAULT_BATCH = 25
/**
 * Three batches stay booked while a fourth is claimed: about a second of sends at the highest pace a
 * workspace may set, far longer than a claim takes.
 */
export const DEFAULT_IN_FLIGHT = 4 * DEFAULT_BATCH

export const layer = (options: SchedulingWorkerOptions = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const engine = yield* SchedulingEngine
      const pollMs = options.pollMs ?? DEFAULT_POLL_MS
      const batch = options.batch ?? DEFAULT_BATCH
      const slots = yield* Effect.makeSemaphore(Math.max(batch, options.inFlight ?? DEFAULT_IN_FLIGHT))
      if (options.soleWorker === true) {
        yield* engine.sweep(true).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning("sends in flight at the last stop could not be settled", cause)
          )
        )
      }
      const step = Effect.gen(function*() {
        yield* engine.sweep(false)
        // A batch's slots are taken before its claim, and each send's given back when it is done.
        yield* slots.take(batch)
        const { claimed, sends } = yield* Effect.onError(engine.round(batch), () => slots.release(batch))
        yield* slots.release(batch - sends.length)
        for (const send of sends) {
          yield* Effect.forkScoped(
            send.pipe(
              Effect.tap((settled) => (settled ? Metric.increment(scheduledSends) : Effect.void)),
              Effect.ensuring(slots.release(1))
            )
          )
        }
        return claimed === batch
      })
      // Idle: until the soonest send falls due, at most the poll interval.
      const idle = Effect.gen(function*() {
        const due = yield* engine.nextDue()
        const now = yield* Clock.currentTimeMillis
        const wait = Option.match(due, {
          onNone: () => pollMs,
          onSome: (at) => (at > now ? Math.min(pollMs, at - now) : pollMs)
        })
        yield* Effect.sleep(Duration.millis(wait))
      })
      yield* Effect.forkScoped(forever(step, Duration.infinity, "scheduled sends", idle))
    })
  )
