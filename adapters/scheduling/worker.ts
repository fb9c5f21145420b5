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
import { PACE_HORIZON_MS, SchedulingEngine } from "../../core/scheduling/engine.ts"
import { scheduledSends } from "../telemetry/metrics.ts"

export interface SchedulingWorkerOptions {
  /** How long an idle worker waits before looking again (sooner when a send falls due sooner). */
  readonly pollMs?: number
  /** Most sends claimed at once. */
  readonly batch?: number
  /** Most sends claimed and not yet settled in this process. */
  readonly inFlight?: number
  /** How long a live send stays marked in flight before the sweep gives it up (core/scheduling/engine.ts IN_FLIGHT_MS). */
  readonly inFlightMs?: number
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
      // Sends run for the life of the worker, apart from the claim loop.
      const scope = yield* Effect.scope
      if (options.soleWorker === true) {
        yield* engine.sweep(true).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning("sends in flight at the last stop could not be settled", cause)
          )
        )
      }
      // Whether the last claim found a pace booked to its horizon.
      let paceFull = false
      const step = Effect.gen(function*() {
        yield* engine.sweep(false)
        // A batch's slots are taken before its claim; each send booked keeps one until it is done,
        // and the rest are given back once the batch is booked.
        yield* slots.take(batch)
        let running = 0
        // Counted and forked at once, so a shutdown cannot leave a slot taken; the send itself stays interruptible.
        const run = (sending: Effect.Effect<boolean>) =>
          Effect.uninterruptibleMask((restore) =>
            Effect.suspend(() => {
              running++
              return Effect.asVoid(Effect.forkIn(
                restore(Effect.tap(sending, (settled) => (settled ? Metric.increment(scheduledSends) : Effect.void)))
                  .pipe(Effect.ensuring(slots.release(1))),
                scope
              ))
            })
          )
        const { claimed, paced } = yield* Effect.ensuring(
          engine.round(batch, run, options.inFlightMs),
          Effect.suspend(() => slots.release(batch - running))
        )
        paceFull = paced > 0
        return claimed === batch && !paceFull
      })
      // Idle: until the soonest send falls due, at most the poll interval. A pace booked to its
      // horizon has room again as its sends leave: claimed from again half the horizon on.
      const idle = Effect.gen(function*() {
        if (paceFull) return yield* Effect.sleep(Duration.millis(PACE_HORIZON_MS / 2))
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
