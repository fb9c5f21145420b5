/**
 * The outbox worker, for the life of the server: one fiber fans new outbox events out to deliveries;
 * another keeps up to `concurrency` attempts in flight, claiming more in batches as slots free up, so
 * a slow receiver holds one slot, not a whole batch; a third records finished attempts together
 * (one statement per batch, ahead of other work waiting for the embedded database: see `Urgent`).
 * Several processes may run it against one Postgres: claims skip rows another worker holds.
 * Failures are logged and retried, never fatal; deliveries leased by a process that dies before
 * recording their attempt are retried when the lease ends (at least once), or at the next start
 * on the embedded database, where no other process can hold a lease (`soleWorker`).
 *
 * Idle, the fan-out and delivery fibers wait for a wake-up or `pollMs`. Events committed in this
 * process wake the fan-out at once (OutboxSignal); so do other processes' commits on Postgres (their
 * NOTIFY, adapters/sql/outboxNotices.ts); new deliveries wake the delivery fiber. The poll is the
 * safety net (a missed notice, retries coming due, expired leases). Each poll is a database round
 * trip, so the default is a second, not a few milliseconds.
 */
import { Chunk, Clock, Duration, Effect, Exit, Layer, Metric, Queue, Schedule } from "effect"
import { OutboxSignal } from "../../core/events/signal.ts"
import { WorkerLiveness } from "../../core/health/readiness.ts"
import { forever } from "../../core/kernel/forever.ts"
import type { DeliveryRecord } from "../../core/webhooks/model.ts"
import { type Attempted, Webhooks } from "../../core/webhooks/service.ts"
import { WebhookStore } from "../../core/webhooks/store.ts"
import { webhookDeliveries, webhookOldestPendingAge, webhookQueueDepth } from "../telemetry/metrics.ts"

export interface WorkerOptions {
  readonly pollMs?: number
  readonly batch?: number
  readonly concurrency?: number
  /** How often the queue gauges (depth, oldest pending age) are read from the store. */
  readonly gaugeMs?: number
  /**
   * No other worker can be running on this database (the embedded one: one process per data
   * directory). Leases found at the start were then left by a process that died, and are ended at
   * once rather than waited out. Never on a shared Postgres, where they may be another live worker's.
   */
  readonly soleWorker?: boolean
}

export const DEFAULT_GAUGE_MS = 15_000
/** Most finished attempts recorded in one statement. */
const RECORD_BATCH = 500

const outcomes = {
  succeeded: webhookDeliveries.pipe(Metric.tagged("outcome", "success")),
  pending: webhookDeliveries.pipe(Metric.tagged("outcome", "failure")),
  failed: webhookDeliveries.pipe(Metric.tagged("outcome", "gave_up"))
} as const

/** Counts an attempt by what it left: delivered, to be retried, or out of retries. */
const countOutcome = (attempted: DeliveryRecord) => Metric.increment(outcomes[attempted.status])

/** Sets the queue gauges from one cheap query; a failed read is logged and the gauges kept. */
const readQueue = Effect.gen(function*() {
  const { count, oldestCreatedAt } = yield* Effect.flatMap(WebhookStore, (store) => store.pendingDeliveries())
  const now = yield* Clock.currentTimeMillis
  yield* Metric.set(webhookQueueDepth, count)
  yield* Metric.set(
    webhookOldestPendingAge,
    oldestCreatedAt === null ? 0 : Math.max(0, (now - Date.parse(oldestCreatedAt)) / 1000)
  )
}).pipe(Effect.catchAllCause((cause) => Effect.logWarning("webhook queue gauges could not be read", cause)))

/** One fan-out and one delivery round, awaited; handy for tests and one-shot draining. */
export const round = (options: WorkerOptions = {}) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const fanned = yield* webhooks.fanOut(options.batch ?? 500)
    const attempted = yield* webhooks.deliverDue(options.batch ?? 200, options.concurrency ?? DEFAULT_CONCURRENCY)
    return fanned.events + attempted
  })

export const DEFAULT_POLL_MS = 1000
/** Attempts in flight per process (WEBHOOK_CONCURRENCY). */
export const DEFAULT_CONCURRENCY = 256

export const layer = (options: WorkerOptions = {}) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const webhooks = yield* Webhooks
      const signal = yield* OutboxSignal
      const liveness = yield* WorkerLiveness
      const idle = Duration.millis(options.pollMs ?? DEFAULT_POLL_MS)
      const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY
      const batch = options.batch ?? 200
      const slots = yield* Effect.makeSemaphore(concurrency)
      let inFlight = 0

      if (options.soleWorker === true) {
        yield* Effect.flatMap(WebhookStore, (store) => store.releaseLeases()).pipe(
          Effect.tap((n) =>
            n > 0 ? Effect.logInfo(`Webhook deliveries leased by a stopped process: ${n}, retried now`) : Effect.void
          ),
          // Not fatal: they are retried when their leases run out.
          Effect.catchAllCause((cause) => Effect.logWarning("webhook leases could not be released at start", cause))
        )
      }

      // Finished attempts wait here to be recorded together: one statement for all that finished
      // while the previous write ran. Until then their deliveries stay leased, and their slots stay
      // taken, so claims never outrun recording (a delivery whose lease ran out would be sent again).
      const finished = yield* Queue.unbounded<Attempted>()
      const release = (n: number) => Effect.zipRight(slots.release(n), Effect.sync(() => (inFlight -= n)))
      const record = Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(Queue.takeBetween(finished, 1, RECORD_BATCH)), (batch) =>
          // A batch taken from the queue is written even when shutdown interrupts.
          webhooks.settle(Chunk.toReadonlyArray(batch)).pipe(
            Effect.ensuring(release(batch.length)),
            Effect.zipRight(Effect.forEach(batch, (a) => countOutcome(a.delivery), { discard: true })),
            Effect.as(true)
          ))
      )
      // Runs after the attempt fibers are interrupted (finalizers run in reverse): what finished is still written.
      yield* Effect.addFinalizer(() =>
        Effect.flatMap(Queue.takeAll(finished), (rest) => webhooks.settle(Chunk.toReadonlyArray(rest))).pipe(
          Effect.catchAllCause((cause) => Effect.logError("webhook attempts could not be recorded at shutdown", cause))
        )
      )

      // Claims in batches: with attempts in flight, it waits until a quarter of the slots are free.
      const minClaim = Math.max(1, Math.floor(Math.min(concurrency, batch) / 4))
      const deliver = Effect.gen(function*() {
        const free = concurrency - inFlight
        if (inFlight > 0 && free < minClaim) {
          // Too few slots free: wait until enough are, rather than spin.
          yield* slots.withPermits(minClaim)(Effect.void)
          return true
        }
        const wanted = Math.min(free, batch)
        const claimed = yield* webhooks.claimDue(wanted)
        if (claimed.length === 0) return false
        const verdicts = yield* webhooks.checkUrls(claimed.map((c) => c.endpoint.url))
        for (const { delivery, endpoint } of claimed) {
          inFlight++
          yield* slots.take(1)
          yield* Effect.forkScoped(
            webhooks.send(delivery, endpoint, verdicts.get(endpoint.url)!).pipe(
              Effect.flatMap((attempted) => Queue.offer(finished, attempted)),
              // The slot is released by the recording once this attempt is written, or here if it never reaches the queue.
              Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : release(1)))
            )
          )
        }
        return claimed.length === wanted
      })

      // New deliveries wake the delivery loop at once instead of waiting out its poll interval.
      const deliveriesReady = yield* Queue.sliding<void>(1)
      // A commit's own wake-up and its NOTIFY both arrive: the second must not cost another round.
      const fanOutBatch = options.batch ?? 500
      const fanOut = Effect.zipRight(signal.clear, webhooks.fanOut(fanOutBatch)).pipe(
        Effect.tap(({ deliveries }) => (deliveries > 0 ? Queue.offer(deliveriesReady, undefined) : Effect.void)),
        Effect.map(({ events }) => events === fanOutBatch)
      )
      // Running until either loop ends (they only end when interrupted): /readyz reads the flag.
      const stopped = Effect.sync(() => {
        liveness.state = "stopped"
      })
      liveness.state = "ok"
      yield* Effect.forkScoped(Effect.ensuring(forever(fanOut, idle, "webhook fan-out", signal.wait), stopped))
      yield* Effect.forkScoped(
        Effect.ensuring(forever(deliver, idle, "webhook delivery", Queue.take(deliveriesReady)), stopped)
      )
      yield* Effect.forkScoped(
        Effect.ensuring(forever(record, Duration.zero, "webhook recording", Effect.void), stopped)
      )
      yield* Effect.forkScoped(
        Effect.repeat(readQueue, Schedule.spaced(Duration.millis(options.gaugeMs ?? DEFAULT_GAUGE_MS)))
      )
    })
  )
