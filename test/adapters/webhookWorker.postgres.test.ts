/**
 * The webhook worker (adapters/webhooks/worker.ts) on a real Postgres, each "process" a runtime with
 * its own pool: an event committed by another pool wakes the worker through LISTEN/NOTIFY long
 * before its poll; two workers claiming and recording in batches never send one event twice to one
 * endpoint. Without a Postgres URL the suite is skipped, except under CI=true where that fails.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { inject } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import * as OutboxNotices from "../../adapters/sql/outboxNotices.ts"
import * as WebhookWorker from "../../adapters/webhooks/worker.ts"
import { HostResolver, layerOutboundGuard } from "../../core/egress/guard.ts"
import { event } from "../../core/events/catalog.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { layerWorkerLiveness } from "../../core/health/readiness.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { layer as WebhooksLayer } from "../../core/webhooks/service.ts"
import { WebhookSender, WebhookStore } from "../../core/webhooks/store.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { endpointRecord } from "../support/webhooks.ts"

const url = inject("postgresUrl")
const uuid = () => crypto.randomUUID()

/** What one fake receiver got: each (endpoint URL, webhook-id) pair with its count, and when each id first arrived. */
interface Received {
  readonly counts: Map<string, number>
  readonly firstAt: Map<string, number>
  readonly byWorker: Array<number>
  /** Sends under way now, and the most at once. */
  inFlight: number
  maxInFlight: number
  /** How long each send waits for its answer; unset: 0-3 ms. */
  readonly answerMs?: number
}

const resolver = Layer.succeed(HostResolver, HostResolver.of({ resolve: () => Effect.succeed(["93.184.216.34"]) }))

/** One process: the stores on its own pool, the webhook service with a fake sender, and optionally the worker with its LISTEN. */
const processOn = (databaseUrl: string, received: Received, worker: number, options?: WebhookWorker.WorkerOptions) => {
  const sender = Layer.succeed(
    WebhookSender,
    WebhookSender.of({
      send: ({ url, headers }) =>
        Effect.sync(() => {
          const key = `${url} ${headers["webhook-id"]}`
          received.counts.set(key, (received.counts.get(key) ?? 0) + 1)
          if (!received.firstAt.has(headers["webhook-id"]!)) received.firstAt.set(headers["webhook-id"]!, Date.now())
          received.byWorker[worker]!++
          received.maxInFlight = Math.max(received.maxInFlight, ++received.inFlight)
        }).pipe(
          Effect.zipRight(Effect.sleep(Duration.millis(received.answerMs ?? Math.floor(Math.random() * 4)))),
          Effect.ensuring(Effect.sync(() => received.inFlight--)),
          Effect.as({ status: 200 })
        )
    })
  )
  const pool = Postgres.layer({ url: Redacted.make(databaseUrl), maxConnections: 6 })
  const services = WebhooksLayer.pipe(
    Layer.provideMerge(Layer.merge(layerOutboundGuard(false).pipe(Layer.provide(resolver)), sender)),
    Layer.provideMerge(sqlStores(pool)),
    Layer.provideMerge(pool)
  )
  const running = options === undefined
    ? Layer.empty
    : Layer.merge(WebhookWorker.layer(options), OutboxNotices.layer).pipe(Layer.provide(layerWorkerLiveness))
  return ManagedRuntime.make(running.pipe(Layer.provideMerge(services)))
}

const database = (prefix: string) =>
  Effect.acquireRelease(
    Effect.promise(() => freshDatabase(url!, prefix)),
    (db) => Effect.promise(() => db.drop())
  )

const using = <R, E>(runtime: ManagedRuntime.ManagedRuntime<R, E>) =>
  Effect.acquireRelease(Effect.succeed(runtime), (r) => Effect.promise(() => r.dispose()))

const newReceived = (answerMs?: number): Received => ({
  counts: new Map(),
  firstAt: new Map(),
  byWorker: [0, 0, 0],
  inFlight: 0,
  maxInFlight: 0,
  ...(answerMs === undefined ? {} : { answerMs })
})

const addEndpoint = (ws: string, n: number) =>
  Effect.flatMap(
    WebhookStore,
    (store) => store.insertEndpoint(endpointRecord(ws, { url: `https://hooks.example.com/${n}` }))
  )

/** Appends events in one committed transaction, as any process's use case does. */
const commit = (ws: string, count: number) =>
  Effect.flatMap(
    Transactor,
    (tx) =>
      tx.withTransaction(Effect.flatMap(EventOutbox, (outbox) =>
        outbox.append(
          ws,
          Array.from({ length: count }, () => event("contact.deleted", { contactId: uuid() }))
        )))
  )

const waitUntil = (done: () => boolean, timeoutMs: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (!done() && Date.now() < deadline) yield* Effect.sleep("10 millis")
  })

describe.runIf(url !== null || process.env["CI"] === "true")("webhook worker on Postgres", () => {
  it.live(
    "an event committed through another pool is delivered within seconds, with the worker's poll at 30 s",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          assert.isNotNull(url, "CI=true requires a Postgres URL")
          const db = yield* database("worker_notify")
          const received = newReceived()
          // The other process first, so it migrates the database before the worker starts.
          const other = yield* using(processOn(db.url, received, 1))
          const ws = uuid()
          yield* Effect.promise(() => other.runPromise(addEndpoint(ws, 1)))
          const worker = yield* using(processOn(db.url, received, 0, { pollMs: 30_000 }))
          yield* Effect.promise(() => worker.runPromise(Effect.void))
          // Let the worker's first rounds pass: from here it waits on its poll or a wake-up.
          yield* Effect.sleep("500 millis")
          const latencies: Array<number> = []
          for (let i = 0; i < 3; i++) {
            const before = received.firstAt.size
            yield* Effect.promise(() => other.runPromise(commit(ws, 1)))
            const committed = Date.now()
            yield* waitUntil(() => received.firstAt.size > before, 10_000)
            assert.strictEqual(received.firstAt.size, before + 1, `event ${i + 1} was delivered`)
            latencies.push(Math.max(...received.firstAt.values()) - committed)
            yield* Effect.sleep("100 millis")
          }
          console.log(`foreign commit to send, poll at 30 s: ${latencies.join(" / ")} ms`)
          for (const ms of latencies) assert.isBelow(ms, 3_000, "woken by the notice, not the poll")
          assert.deepStrictEqual(received.byWorker, [3, 0, 0])
        })
      ),
    60_000
  )

  it.live(
    "two workers claiming and recording in batches send each event to each endpoint exactly once",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          assert.isNotNull(url, "CI=true requires a Postgres URL")
          const db = yield* database("worker_batches")
          const received = newReceived()
          const producer = yield* using(processOn(db.url, received, 2))
          const ws = uuid()
          yield* Effect.promise(() => producer.runPromise(Effect.zipRight(addEndpoint(ws, 1), addEndpoint(ws, 2))))
          // Small batches and few slots, so the two workers' claims interleave many times.
          const options = { pollMs: 50, batch: 20, concurrency: 8 }
          const one = yield* using(processOn(db.url, received, 0, options))
          const two = yield* using(processOn(db.url, received, 1, options))
          yield* Effect.promise(() => Promise.all([one.runPromise(Effect.void), two.runPromise(Effect.void)]))
          const EVENTS = 400
          yield* Effect.promise(() =>
            producer.runPromise(
              Effect.forEach(
                Array.from({ length: EVENTS / 10 }),
                () => Effect.zipRight(commit(ws, 10), Effect.sleep("3 millis")),
                { discard: true }
              )
            )
          )
          yield* waitUntil(() => received.counts.size >= 2 * EVENTS, 30_000)
          // Anything sent twice would arrive within a few more rounds.
          yield* Effect.sleep("300 millis")
          const twice = [...received.counts].filter(([, n]) => n > 1)
          console.log(
            `two batch workers: ${received.counts.size} sends, split ${
              received.byWorker.slice(0, 2).join("/")
            }, ${twice.length} duplicates`
          )
          assert.strictEqual(received.counts.size, 2 * EVENTS, "every event reached both endpoints")
          assert.deepStrictEqual(twice, [], "no event sent twice to one endpoint")
          assert.isAbove(received.byWorker[0]!, 0, "worker 1 delivered some")
          assert.isAbove(received.byWorker[1]!, 0, "worker 2 delivered some")
          // Every attempt is recorded once and every delivery settled.
          const settled = yield* Effect.promise(() =>
            producer.runPromise(
              Effect.flatMap(WebhookStore, (store) => store.pendingDeliveries())
            )
          )
          assert.strictEqual(settled.count, 0, "no delivery left pending")
        })
      ),
    90_000
  )

  it.live(
    "keeps at most `concurrency` attempts in flight, and uses them all when a receiver is slow",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          assert.isNotNull(url, "CI=true requires a Postgres URL")
          const db = yield* database("worker_concurrency")
          // Every answer takes 30 ms: 120 events can only finish quickly by sending several at once.
          const received = newReceived(30)
          const producer = yield* using(processOn(db.url, received, 1))
          const ws = uuid()
          yield* Effect.promise(() => producer.runPromise(addEndpoint(ws, 1)))
          const worker = yield* using(processOn(db.url, received, 0, { pollMs: 50, concurrency: 12 }))
          yield* Effect.promise(() => worker.runPromise(Effect.void))
          yield* Effect.promise(() => producer.runPromise(commit(ws, 120)))
          yield* waitUntil(() => received.counts.size >= 120, 30_000)
          console.log(`concurrency 12: ${received.counts.size} sends, at most ${received.maxInFlight} at once`)
          assert.strictEqual(received.counts.size, 120, "every event delivered")
          assert.strictEqual(received.maxInFlight, 12, "as many at once as allowed, never more")
        })
      ),
    60_000
  )
})
