/**
 * The outbox worker: a fiber for the life of the server that fans new events out to deliveries and
 * attempts due deliveries. Idle, it polls every `pollMs`. Several processes may run it against one
 * Postgres: claims skip rows another worker holds. A failure of one round is logged, never fatal.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { Webhooks } from "../../core/webhooks/service.ts"

export interface WorkerOptions {
  readonly pollMs?: number
  readonly batch?: number
  readonly concurrency?: number
}

export const round = (options: WorkerOptions = {}) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const fanned = yield* webhooks.fanOut(options.batch ?? 500)
    const attempted = yield* webhooks.deliverDue(options.batch ?? 200, options.concurrency ?? 64)
    return fanned + attempted
  })

export const layer = (options: WorkerOptions = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const idle = Duration.millis(options.pollMs ?? 100)
      const loop = round(options).pipe(
        Effect.catchAllCause((cause) => Effect.logError("webhook worker round failed", cause).pipe(Effect.as(0))),
        // Busy: go again at once; idle: wait a poll interval.
        Effect.flatMap((n) => (n > 0 ? Effect.void : Effect.sleep(idle))),
        Effect.repeat(Schedule.forever)
      )
      yield* Effect.forkScoped(loop)
    })
  )
