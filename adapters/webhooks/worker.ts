/**
 * The outbox worker, for the life of the server: one fiber fans new outbox events out to deliveries;
 * another keeps up to `concurrency` attempts in flight, claiming more as soon as any finishes, so a
 * slow receiver holds one slot, not a whole batch. Several processes may run it against one
 * Postgres: claims skip rows another worker holds. Failures are logged and retried, never fatal;
 * deliveries leased by a process that dies are retried when the lease ends.
 *
 * Idle, both fibers wait for a wake-up or `pollMs`. Events committed in this process wake the
 * fan-out at once (OutboxSignal), and new deliveries wake the delivery fiber, so the poll only
 * picks up what this process cannot see: other processes' events, retries coming due, expired
 * leases. Each poll is a database round trip, so the default is a second, not a few milliseconds.
 */
import { Clock, Duration, Effect, Layer, Metric, Queue, Schedule } from "effect"
import { OutboxSignal } from "../../core/events/signal.ts"
import type { DeliveryRecord } from "../../core/webhooks/model.ts"
import { WorkerLiveness } from "../../core/health.ts"
import { Webhooks } from "../../core/webhooks/service.ts"
import { WebhookStore } from "../../core/webhooks/store.ts"
import { webhookDeliveries, webhookOldestPendingAge, webhookQueueDepth } from "../telemetry/metrics.ts"

export interface WorkerOptions {
  readonly pollMs?: number
  readonly batch?: number
  readonly concurrency?: number
  /** How often the queue gauges (depth, oldest pending age) are read from the store. */
  readonly gaugeMs?: number
}

export const DEFAULT_GAUGE_MS = 15_000

const outcomes = {
  succeeded: webhookDeliveries.pipe(Metric.tagged("outcome", "success")),
  pending: webhookDeliveries.pipe(Metric.tagged("outcome", "failure")),
  failed: webhookDeliveries.pipe(Metric.tagged("outcome", "gave_up"))
} as const

/** Counts an attempt by what it left: delivered, to be retried, or out of retries. */
const countOutcome = (attempted: DeliveryRecord) => Metric.increment(outcomes[attempted.status])

/** Sets the queue gauges from one cheap query; a failed read is logged and the gauges kept. */
const readQueue = Effect.gen(function* () {
  const { count, oldestCreatedAt } = yield* Effect.flatMap(WebhookStore, (store) => store.pendingDeliveries())
  const now = yield* Clock.currentTimeMillis
  yield* Metric.set(webhookQueueDepth, count)
  yield* Metric.set(webhookOldestPendingAge, oldestCreatedAt === null ? 0 : Math.max(0, (now - Date.parse(oldestCreatedAt)) / 1000))
}).pipe(Effect.catchAllCause((cause) => Effect.logWarning("webhook queue gauges could not be read", cause)))

/** One fan-out and one delivery round, awaited; handy for tests and one-shot draining. */
export const round = (options: WorkerOptions = {}) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const fanned = yield* webhooks.fanOut(options.batch ?? 500)
    const attempted = yield* webhooks.deliverDue(options.batch ?? 200, options.concurrency ?? 64)
    return fanned + attempted
  })

export const DEFAULT_POLL_MS = 1000

/** Runs `step` forever: again at once while it finds work, else after `idle` or an earlier `wake`. */
const forever = <R>(step: Effect.Effect<number, never, R>, idle: Duration.Duration, label: string, wake: Effect.Effect<void>) =>
  step.pipe(
    Effect.catchAllCause((cause) => Effect.logError(`webhook ${label} failed`, cause).pipe(Effect.as(0))),
    Effect.flatMap((n) => (n > 0 ? Effect.void : Effect.race(Effect.sleep(idle), wake))),
    Effect.repeat(Schedule.forever)
  )

export const layer = (options: WorkerOptions = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const webhooks = yield* Webhooks
      const signal = yield* OutboxSignal
      const liveness = yield* WorkerLiveness
      const idle = Duration.millis(options.pollMs ?? DEFAULT_POLL_MS)
      const concurrency = options.concurrency ?? 64
      const slots = yield* Effect.makeSemaphore(concurrency)
      let inFlight = 0

      const deliver = Effect.gen(function* () {
        const free = concurrency - inFlight
        if (free === 0) {
          // Every slot busy: wait for one to free up rather than spin.
          yield* slots.withPermits(1)(Effect.void)
          return 1
        }
        const claimed = yield* webhooks.claimDue(Math.min(free, options.batch ?? 200))
        for (const { delivery, endpoint } of claimed) {
          inFlight++
          yield* slots.take(1)
          yield* Effect.forkScoped(
            webhooks.attempt(delivery, endpoint).pipe(
              Effect.tap(countOutcome),
              Effect.ensuring(Effect.zipRight(slots.release(1), Effect.sync(() => inFlight--)))
            )
          )
        }
        return claimed.length
      })

      // New deliveries wake the delivery loop at once instead of waiting out its poll interval.
      const deliveriesReady = yield* Queue.sliding<void>(1)
      const fanOut = webhooks.fanOut(options.batch ?? 500).pipe(Effect.tap((n) => (n > 0 ? Queue.offer(deliveriesReady, undefined) : Effect.void)))
      // Running until either loop ends (they only end when interrupted): /readyz reads the flag.
      const stopped = Effect.sync(() => {
        liveness.state = "stopped"
      })
      liveness.state = "ok"
      yield* Effect.forkScoped(Effect.ensuring(forever(fanOut, idle, "fan-out", signal.wait), stopped))
      yield* Effect.forkScoped(Effect.ensuring(forever(deliver, idle, "delivery", Queue.take(deliveriesReady)), stopped))
      yield* Effect.forkScoped(Effect.repeat(readQueue, Schedule.spaced(Duration.millis(options.gaugeMs ?? DEFAULT_GAUGE_MS))))
    })
  )
