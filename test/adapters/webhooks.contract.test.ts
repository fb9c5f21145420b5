/**
 * The WebhookStore contract, run unchanged against memory, PGlite (in-memory, migrated) and a real
 * Postgres (a fresh database, migrated): endpoint CRUD with tenant isolation, idempotent delivery
 * inserts, delivery history order, the outbox claim, the due-delivery claim with leases, attempts
 * and endpoint health. On Postgres also: two workers with separate pools deliver each event once.
 * Without a Postgres URL the Postgres suites are skipped, except under CI=true where that fails.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Either, Layer, ManagedRuntime, Option, Redacted } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { HostResolver, layerOutboundGuard } from "../../core/egress/guard.ts"
import { event } from "../../core/events/catalog.ts"
import { EventOutbox, type OutboxEvent } from "../../core/events/outbox.ts"
import { OutboxSignal } from "../../core/events/signal.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import type { DeliveryRecord, EndpointRecord } from "../../core/webhooks/model.ts"
import { layer as WebhooksLayer, MAX_ENDPOINTS_PER_WORKSPACE, Webhooks } from "../../core/webhooks/service.ts"
import { eventIdOf, generateSecret } from "../../core/webhooks/signing.ts"
import { WebhookSender, WebhookStore } from "../../core/webhooks/store.ts"
import { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { endpointRecord } from "../support/webhooks.ts"

type Ports = WebhookStore | EventOutbox | Transactor | WorkspaceClock | OutboxSignal

const uuid = () => crypto.randomUUID()
/** Distinct, ordered timestamps with millisecond detail. */
const ts = (seconds: number) => new Date(Date.UTC(2024, 0, 1) + seconds * 1000 + 123).toISOString()

/** Every endpoint a suite made, so claim tests can start from an empty delivery queue. */
const made: Array<{ workspaceId: string; id: string }> = []

const endpoint = (workspaceId: string, patch: Partial<EndpointRecord> = {}): EndpointRecord => {
  const e = endpointRecord(workspaceId, { events: ["contact.updated", "contact.deleted"], createdAt: ts(0), ...patch })
  made.push({ workspaceId: e.workspaceId, id: e.id })
  return e
}

const delivery = (e: EndpointRecord, patch: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  id: uuid(),
  workspaceId: e.workspaceId,
  endpointId: e.id,
  eventId: eventIdOf(uuid()),
  eventType: "contact.updated",
  payload: JSON.stringify({ type: "contact.updated", timestamp: ts(0), data: { contactId: uuid() } }),
  status: "pending",
  attempts: 0,
  responseStatus: null,
  error: null,
  createdAt: ts(0),
  lastAttemptAt: null,
  nextAttemptAt: ts(0),
  ...patch
})

/** A delivery that used all its attempts, the last one answered 503. */
const failedDelivery = (e: EndpointRecord, patch: Partial<DeliveryRecord> = {}): DeliveryRecord =>
  delivery(e, {
    status: "failed",
    attempts: 8,
    responseStatus: 503,
    error: "HTTP 503",
    lastAttemptAt: ts(5),
    nextAttemptAt: null,
    ...patch
  })

const insert = (...es: ReadonlyArray<EndpointRecord>) =>
  Effect.flatMap(WebhookStore, (s) => Effect.forEach(es, s.insertEndpoint, { discard: true }))

/** Deletes every endpoint made so far (and, with them, their deliveries). */
const clearQueue = Effect.gen(function*() {
  const store = yield* WebhookStore
  for (const e of made.splice(0)) yield* store.deleteEndpoint(e.workspaceId, e.id)
})

/** Marks every outbox event not yet dispatched as dispatched. */
const drainOutbox = Effect.gen(function*() {
  const store = yield* WebhookStore
  const tx = yield* Transactor
  for (;;) {
    const n = yield* tx.withTransaction(
      Effect.gen(function*() {
        const es = yield* store.claimOutbox(500)
        yield* store.markDispatched(es.map((e) => e.id), ts(0))
        return es.length
      })
    )
    if (n === 0) return
  }
})

const ids = (rows: ReadonlyArray<{ readonly delivery: DeliveryRecord }>) => rows.map((r) => r.delivery.id)

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "60 seconds" })(name, (it) => {
    it.effect("endpoints: insert, get, list oldest first, update, delete; every call scoped to its workspace", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = uuid()
        const other = uuid()
        const a = endpoint(ws, { createdAt: ts(2), label: "A ✓", apiVersion: "2026-08-17", events: ["*"] })
        const b = endpoint(ws, { createdAt: ts(1), url: "https://hooks.example.com/b?x=1" })
        const c = endpoint(other, { createdAt: ts(0) })
        yield* insert(a, b, c)
        assert.deepStrictEqual(yield* store.getEndpoint(ws, a.id), Option.some(a))
        assert.isTrue(Option.isNone(yield* store.getEndpoint(other, a.id)), "another workspace cannot read it")
        assert.isTrue(Option.isNone(yield* store.getEndpoint(ws, uuid())))
        assert.deepStrictEqual((yield* store.listEndpoints(ws)).map((e) => e.id), [b.id, a.id])
        assert.deepStrictEqual((yield* store.listEndpoints(other)).map((e) => e.id), [c.id])

        const updated: EndpointRecord = {
          ...a,
          url: "https://hooks.example.com/new",
          events: ["contact.deleted"],
          label: null,
          status: "disabled",
          apiVersion: null,
          secret: generateSecret(),
          previousSecrets: [
            { secret: a.secret, expiresAt: ts(86_400) },
            { secret: generateSecret(), expiresAt: ts(3_600) }
          ],
          failingSince: ts(5)
        }
        yield* store.updateEndpoint(updated)
        assert.deepStrictEqual(yield* store.getEndpoint(ws, a.id), Option.some(updated))
        // an update naming another workspace changes nothing
        yield* store.updateEndpoint({ ...updated, workspaceId: other, url: "https://evil.example.com/" })
        assert.deepStrictEqual(yield* store.getEndpoint(ws, a.id), Option.some(updated))
        assert.isTrue(Option.isNone(yield* store.getEndpoint(other, a.id)))

        // deleting from another workspace fails and keeps it
        assert.isFalse(yield* store.deleteEndpoint(other, a.id))
        assert.isTrue(Option.isSome(yield* store.getEndpoint(ws, a.id)))
        const d = delivery(a)
        yield* store.insertDeliveries([d])
        assert.isTrue(yield* store.deleteEndpoint(ws, a.id))
        assert.isTrue(Option.isNone(yield* store.getEndpoint(ws, a.id)))
        assert.isTrue(Option.isNone(yield* store.getDelivery(ws, d.id)), "its deliveries go with it")
        assert.isFalse(yield* store.deleteEndpoint(ws, a.id))
        assert.deepStrictEqual((yield* store.listEndpoints(ws)).map((e) => e.id), [b.id])
      }))

    it.effect("enabledEndpoints: only enabled endpoints of the workspaces asked for", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const [w1, w2, w3] = [uuid(), uuid(), uuid()]
        const on1 = endpoint(w1)
        const off1 = endpoint(w1, { status: "disabled" })
        const on2 = endpoint(w2)
        const on3 = endpoint(w3)
        yield* insert(on1, off1, on2, on3)
        assert.deepStrictEqual(
          (yield* store.enabledEndpoints([w1, w2])).map((e) => e.id).sort(),
          [on1.id, on2.id].sort()
        )
        assert.deepStrictEqual(yield* store.enabledEndpoints([]), [])
        assert.deepStrictEqual(yield* store.enabledEndpoints([uuid()]), [])
      }))

    it.effect("deliveries: one per (endpoint, event), idempotent across and within inserts; reads are tenant-scoped", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = uuid()
        const e1 = endpoint(ws)
        const e2 = endpoint(ws)
        yield* insert(e1, e2)
        const first = delivery(e1, {
          error: "x",
          responseStatus: 503,
          attempts: 2,
          lastAttemptAt: ts(3),
          nextAttemptAt: ts(9)
        })
        yield* store.insertDeliveries([first])
        assert.deepStrictEqual(yield* store.getDelivery(ws, first.id), Option.some(first))
        assert.isTrue(Option.isNone(yield* store.getDelivery(uuid(), first.id)), "another workspace cannot read it")

        const again = delivery(e1, { eventId: first.eventId })
        const sameEventOtherEndpoint = delivery(e2, { eventId: first.eventId })
        const twin = delivery(e2)
        const twinDup = delivery(e2, { eventId: twin.eventId })
        yield* store.insertDeliveries([again, sameEventOtherEndpoint, twin, twinDup])
        yield* store.insertDeliveries([])
        assert.isTrue(
          Option.isNone(yield* store.getDelivery(ws, again.id)),
          "a second delivery of an event to one endpoint is ignored"
        )
        assert.deepStrictEqual(yield* store.getDelivery(ws, first.id), Option.some(first), "the first one is untouched")
        assert.isTrue(Option.isSome(yield* store.getDelivery(ws, sameEventOtherEndpoint.id)))
        assert.strictEqual((yield* store.listDeliveries(ws, e1.id, 100)).length, 1)
        assert.deepStrictEqual(
          (yield* store.listDeliveries(ws, e2.id, 100)).map((d) => d.eventId).sort(),
          [first.eventId, twin.eventId].sort()
        )
      }))

    it.effect("listDeliveries: newest first (ties by id), limited, for one endpoint of one workspace", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = uuid()
        const e = endpoint(ws)
        const other = endpoint(ws)
        yield* insert(e, other)
        const ds = [3, 1, 4, 2, 5].map((s) => delivery(e, { createdAt: ts(s) }))
        const [tieA, tieB] = [delivery(e, { createdAt: ts(6) }), delivery(e, { createdAt: ts(6) })]
        yield* store.insertDeliveries([...ds, tieA!, tieB!, delivery(other, { createdAt: ts(100) })])
        const expected = [
          ...[tieA!, tieB!].sort((x, y) => (x.id < y.id ? 1 : -1)),
          ...[...ds].sort((x, y) => (x.createdAt < y.createdAt ? 1 : -1))
        ]
        assert.deepStrictEqual((yield* store.listDeliveries(ws, e.id, 200)).map((d) => d.id), expected.map((d) => d.id))
        assert.deepStrictEqual(
          (yield* store.listDeliveries(ws, e.id, 3)).map((d) => d.id),
          expected.slice(0, 3).map((d) => d.id)
        )
        assert.deepStrictEqual((yield* store.listDeliveries(ws, e.id, 1)).map((d) => d.id), [expected[0]!.id])
        assert.deepStrictEqual(yield* store.listDeliveries(uuid(), e.id, 200), [], "another workspace sees none")
      }))

    it.effect("claimOutbox takes undispatched events oldest first up to the limit; markDispatched retires them", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const outbox = yield* EventOutbox
        const tx = yield* Transactor
        yield* drainOutbox
        const ws = uuid()
        const other = uuid()
        const contactId = uuid()
        yield* insert(endpoint(ws), endpoint(other))
        yield* outbox.append(ws, [
          event("contact.updated", { contactId, change: "updated", fields: ["firstName", "tags"] }),
          event("contact.deleted", { contactId })
        ])
        yield* outbox.append(other, [event("contact.updated", { contactId: uuid(), change: "created" })])
        yield* outbox.append(ws, [event("contact.deleted", { contactId: uuid() })])
        const all = [...(yield* outbox.list(ws)), ...(yield* outbox.list(other))]

        const first = yield* tx.withTransaction(store.claimOutbox(2))
        assert.deepStrictEqual(first.map((e) => e.type), ["contact.updated", "contact.deleted"])
        assert.deepStrictEqual(first[0], {
          ...all[0]!,
          data: { contactId, change: "updated", fields: ["firstName", "tags"] }
        })
        assert.strictEqual(first[0]!.workspaceId, ws)
        // not dispatched yet: claimed again
        assert.deepStrictEqual(
          (yield* tx.withTransaction(store.claimOutbox(2))).map((e) => e.id),
          first.map((e) => e.id)
        )
        yield* store.markDispatched(first.map((e) => e.id), ts(10))
        const rest = yield* tx.withTransaction(store.claimOutbox(10))
        assert.deepStrictEqual(rest.map((e) => e.workspaceId), [other, ws])
        assert.deepStrictEqual(new Set([...first, ...rest].map((e) => e.id)), new Set(all.map((e) => e.id)))
        yield* store.markDispatched(rest.map((e) => e.id), ts(10))
        yield* store.markDispatched([], ts(10))
        assert.deepStrictEqual(yield* tx.withTransaction(store.claimOutbox(10)), [])
        assert.strictEqual((yield* outbox.list(ws)).length, 3, "dispatched events stay in the log")
      }))

    it.effect("an event appended while its workspace has no enabled endpoint is stored dispatched: logged, never claimed, no wake-up", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const outbox = yield* EventOutbox
        const tx = yield* Transactor
        const signal = yield* OutboxSignal
        yield* drainOutbox
        const [none, disabled, enabled] = [uuid(), uuid(), uuid()]
        yield* insert(endpoint(disabled, { status: "disabled" }), endpoint(enabled))
        /** Appends one event to `ws` in a transaction; whether the commit woke the worker. */
        const append = (ws: string) =>
          Effect.gen(function*() {
            yield* signal.clear
            yield* tx.withTransaction(outbox.append(ws, [event("contact.deleted", { contactId: uuid() })]))
            return Option.isSome(yield* Effect.timeoutOption(signal.wait, "50 millis"))
          })
        assert.deepStrictEqual([yield* append(none), yield* append(disabled), yield* append(enabled)], [
          false,
          false,
          true
        ])
        assert.deepStrictEqual((yield* tx.withTransaction(store.claimOutbox(10))).map((e) => e.workspaceId), [enabled])
        for (const ws of [none, disabled, enabled]) {
          assert.strictEqual((yield* outbox.list(ws)).length, 1, "every event stays in the log")
        }
        // An endpoint enabled later receives what is appended from then on.
        yield* insert(endpoint(none))
        assert.isTrue(yield* append(none))
        assert.deepStrictEqual(
          new Set((yield* tx.withTransaction(store.claimOutbox(10))).map((e) => e.workspaceId)),
          new Set([enabled, none])
        )
      }))

    it.effect("concurrent claim-and-dispatch transactions never take the same outbox event", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const outbox = yield* EventOutbox
        const tx = yield* Transactor
        yield* drainOutbox
        const ws = uuid()
        yield* insert(endpoint(ws))
        yield* outbox.append(ws, Array.from({ length: 40 }, () => event("contact.deleted", { contactId: uuid() })))
        const taken: Array<OutboxEvent> = []
        const worker = Effect.gen(function*() {
          for (;;) {
            const n = yield* tx.withTransaction(
              Effect.gen(function*() {
                const es = yield* store.claimOutbox(5)
                yield* Effect.sleep("20 millis")
                taken.push(...es)
                yield* store.markDispatched(es.map((e) => e.id), ts(0))
                return es.length
              })
            )
            if (n === 0) return
          }
        })
        yield* Effect.all([worker, worker, worker], { concurrency: "unbounded" })
        assert.strictEqual(taken.length, 40)
        assert.strictEqual(new Set(taken.map((e) => e.id)).size, 40)
      }))

    it.effect("claimDue: a retry comes due on its workspace's clock (the clock test helper's offset)", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const [moved, still] = [uuid(), uuid()]
        const onMoved = endpoint(moved)
        const onStill = endpoint(still)
        yield* insert(onMoved, onStill)
        const later = delivery(onMoved, { nextAttemptAt: ts(400) })
        const otherLater = delivery(onStill, { nextAttemptAt: ts(400) })
        yield* store.insertDeliveries([later, otherLater])
        assert.deepStrictEqual(yield* store.claimDue(ts(100), ts(160), 10), [])
        yield* (yield* WorkspaceClock).advance(moved, 300_000)
        assert.deepStrictEqual(
          ids(yield* store.claimDue(ts(100), ts(160), 10)),
          [later.id],
          "only the moved workspace's retry"
        )
        yield* clearQueue
      }))

    it.effect("claimDue: pending, due, unleased, enabled endpoint; oldest due first; limit; lease until", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const ws = uuid()
        const on = endpoint(ws)
        const off = endpoint(ws, { status: "disabled" })
        yield* insert(on, off)
        const now = ts(100)
        const dueLater = delivery(on, { nextAttemptAt: ts(90) })
        const dueEarly = delivery(on, { nextAttemptAt: ts(10) })
        const dueExactly = delivery(on, { nextAttemptAt: now })
        const future = delivery(on, { nextAttemptAt: ts(101) })
        const succeeded = delivery(on, { status: "succeeded", nextAttemptAt: ts(1) })
        const failed = delivery(on, { status: "failed", nextAttemptAt: ts(1) })
        const unscheduled = delivery(on, { nextAttemptAt: null })
        const disabled = delivery(off, { nextAttemptAt: ts(1) })
        yield* store.insertDeliveries([
          dueLater,
          dueEarly,
          dueExactly,
          future,
          succeeded,
          failed,
          unscheduled,
          disabled
        ])

        const two = yield* store.claimDue(now, ts(160), 2)
        assert.deepStrictEqual(ids(two), [dueEarly.id, dueLater.id])
        assert.deepStrictEqual(two[0]!.endpoint, on)
        assert.deepStrictEqual(two[0]!.delivery, dueEarly)
        const rest = yield* store.claimDue(now, ts(160), 10)
        assert.deepStrictEqual(
          ids(rest),
          [dueExactly.id],
          "leased ones are skipped; the rest is not due, done or disabled"
        )
        // later, the future one is due; the leased ones are still leased
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(159), ts(300), 10)), [future.id], "still leased")
        // the lease expires (its worker died): claimable again, with the new lease
        const again = yield* store.claimDue(ts(161), ts(300), 10)
        assert.deepStrictEqual(ids(again), [dueEarly.id, dueLater.id, dueExactly.id])
        assert.deepStrictEqual(yield* store.claimDue(ts(299), ts(400), 10), [])
        // enabling the endpoint makes its due delivery claimable
        yield* store.updateEndpoint({ ...off, status: "enabled" })
        const enabled = yield* store.claimDue(ts(299), ts(400), 10)
        assert.deepStrictEqual(ids(enabled), [disabled.id])
        assert.strictEqual(enabled[0]!.endpoint.status, "enabled")
        yield* clearQueue
      }))

    it.effect("releaseLeases ends every lease at once (a sole worker's start): claimable again before the lease ends", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const on = endpoint(uuid())
        yield* insert(on)
        const a = delivery(on, { nextAttemptAt: ts(1) })
        const b = delivery(on, { nextAttemptAt: ts(2) })
        yield* store.insertDeliveries([a, b])
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(10), ts(70), 10)), [a.id, b.id])
        assert.deepStrictEqual(yield* store.claimDue(ts(11), ts(71), 10), [], "leased")
        assert.strictEqual(yield* store.releaseLeases(), 2)
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(11), ts(71), 10)), [a.id, b.id])
        yield* clearQueue
      }))

    it.effect("recordAttempts of one attempt stores the outcome and ends the lease; tenant-scoped", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const ws = uuid()
        const e = endpoint(ws)
        yield* insert(e)
        const d = delivery(e, { nextAttemptAt: ts(10) })
        yield* store.insertDeliveries([d])
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(10), ts(70), 10)), [d.id])
        // a retry scheduled at once is claimable before the old lease would have ended
        yield* store.recordAttempts([{
          workspaceId: ws,
          deliveryId: d.id,
          status: "pending",
          attempts: 1,
          responseStatus: 503,
          error: "HTTP 503",
          lastAttemptAt: ts(11),
          nextAttemptAt: ts(12)
        }])
        assert.deepStrictEqual(
          yield* store.getDelivery(ws, d.id),
          Option.some({
            ...d,
            attempts: 1,
            responseStatus: 503,
            error: "HTTP 503",
            lastAttemptAt: ts(11),
            nextAttemptAt: ts(12)
          })
        )
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(12), ts(72), 10)), [d.id])
        // another workspace's attempt record changes nothing
        yield* store.recordAttempts([{
          workspaceId: uuid(),
          deliveryId: d.id,
          status: "failed",
          attempts: 9,
          responseStatus: 1,
          error: "no",
          lastAttemptAt: ts(13),
          nextAttemptAt: null
        }])
        assert.strictEqual(Option.getOrThrow(yield* store.getDelivery(ws, d.id)).attempts, 1)
        yield* store.recordAttempts([{
          workspaceId: ws,
          deliveryId: d.id,
          status: "succeeded",
          attempts: 2,
          responseStatus: 204,
          error: null,
          lastAttemptAt: ts(14),
          nextAttemptAt: null
        }])
        const done = Option.getOrThrow(yield* store.getDelivery(ws, d.id))
        assert.deepStrictEqual(
          {
            status: done.status,
            attempts: done.attempts,
            responseStatus: done.responseStatus,
            error: done.error,
            lastAttemptAt: done.lastAttemptAt,
            nextAttemptAt: done.nextAttemptAt
          },
          {
            status: "succeeded",
            attempts: 2,
            responseStatus: 204,
            error: null,
            lastAttemptAt: ts(14),
            nextAttemptAt: null
          }
        )
        assert.deepStrictEqual(yield* store.claimDue(ts(10_000), ts(10_060), 10), [])
        yield* clearQueue
      }))

    it.effect("recordAttempts stores many outcomes at once, each on its own delivery, and ends their leases; tenant-scoped", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const ws = uuid()
        const e = endpoint(ws)
        yield* insert(e)
        const [a, b, c] = [
          delivery(e, { nextAttemptAt: ts(10) }),
          delivery(e, { nextAttemptAt: ts(10) }),
          delivery(e, { nextAttemptAt: ts(10) })
        ]
        yield* store.insertDeliveries([a!, b!, c!])
        assert.sameMembers(ids(yield* store.claimDue(ts(10), ts(70), 10)), [a!.id, b!.id, c!.id])
        yield* store.recordAttempts([])
        yield* store.recordAttempts([
          {
            workspaceId: ws,
            deliveryId: a!.id,
            status: "succeeded",
            attempts: 1,
            responseStatus: 200,
            error: null,
            lastAttemptAt: ts(11),
            nextAttemptAt: null
          },
          {
            workspaceId: ws,
            deliveryId: b!.id,
            status: "pending",
            attempts: 1,
            responseStatus: null,
            error: "ECONNREFUSED 'quoted' \"x\"",
            lastAttemptAt: ts(11),
            nextAttemptAt: ts(16)
          },
          // another workspace's record for c changes nothing
          {
            workspaceId: uuid(),
            deliveryId: c!.id,
            status: "failed",
            attempts: 9,
            responseStatus: 1,
            error: "no",
            lastAttemptAt: ts(11),
            nextAttemptAt: null
          }
        ])
        assert.deepStrictEqual(
          yield* store.getDelivery(ws, a!.id),
          Option.some({
            ...a!,
            status: "succeeded" as const,
            attempts: 1,
            responseStatus: 200,
            lastAttemptAt: ts(11),
            nextAttemptAt: null
          })
        )
        assert.deepStrictEqual(
          yield* store.getDelivery(ws, b!.id),
          Option.some({
            ...b!,
            attempts: 1,
            error: "ECONNREFUSED 'quoted' \"x\"",
            lastAttemptAt: ts(11),
            nextAttemptAt: ts(16)
          })
        )
        assert.deepStrictEqual(yield* store.getDelivery(ws, c!.id), Option.some(c!))
        // b's lease ended with its record: due again at 16 s; c is still leased until 70 s
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(16), ts(76), 10)), [b!.id])
        yield* clearQueue
      }))

    it.effect("a late record of an attempt already recorded changes nothing: status never moves back", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const ws = uuid()
        const e = endpoint(ws)
        yield* insert(e)
        const d = delivery(e, { nextAttemptAt: ts(10) })
        yield* store.insertDeliveries([d])
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(10), ts(70), 10)), [d.id])
        // A worker whose recording fell behind past the lease: the delivery was claimed and sent again,
        // and that second send's success is recorded first.
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(71), ts(131), 10)), [d.id])
        const succeeded = {
          workspaceId: ws,
          deliveryId: d.id,
          status: "succeeded" as const,
          attempts: 1,
          responseStatus: 200,
          error: null,
          lastAttemptAt: ts(72),
          nextAttemptAt: null
        }
        yield* store.recordAttempts([succeeded])
        // The first send's late "retry later" must not make it pending (and sent) again.
        yield* store.recordAttempts([{
          ...succeeded,
          status: "pending",
          responseStatus: 503,
          error: "HTTP 503",
          lastAttemptAt: ts(73),
          nextAttemptAt: ts(74)
        }])
        yield* store.recordAttempts([{
          ...succeeded,
          status: "failed",
          responseStatus: 500,
          error: "HTTP 500",
          lastAttemptAt: ts(75)
        }])
        const stored = Option.getOrThrow(yield* store.getDelivery(ws, d.id))
        assert.deepStrictEqual([stored.status, stored.attempts, stored.responseStatus, stored.lastAttemptAt], [
          "succeeded",
          1,
          200,
          ts(72)
        ])
        assert.deepStrictEqual(yield* store.claimDue(ts(10_000), ts(10_060), 10), [])
        yield* clearQueue
      }))

    it.effect("leaseDelivery: any status becomes pending, due now and leased; refused while a lease holds it; scoped to workspace and endpoint", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const ws = uuid()
        const e = endpoint(ws)
        const sibling = endpoint(ws)
        yield* insert(e, sibling)
        const failed = failedDelivery(e)
        const succeeded = delivery(e, { status: "succeeded", attempts: 1, responseStatus: 200, nextAttemptAt: null })
        yield* store.insertDeliveries([failed, succeeded])
        const at = (s: number, lease = 30) => ({ now: ts(s), leaseUntil: ts(s + lease) })

        for (
          const [ws2, endpointId, id] of [[uuid(), e.id, failed.id], [ws, sibling.id, failed.id], [ws, e.id, uuid()]]
        ) {
          assert.isTrue(Option.isNone(yield* store.leaseDelivery(ws2!, endpointId!, id!, at(100))))
        }
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getDelivery(ws, failed.id)), failed, "untouched by those")

        const leased = { ...failed, status: "pending" as const, nextAttemptAt: ts(100) }
        assert.deepStrictEqual(Option.getOrThrow(yield* store.leaseDelivery(ws, e.id, failed.id, at(100))), leased)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.getDelivery(ws, failed.id)), leased)
        assert.deepStrictEqual(yield* store.claimDue(ts(101), ts(161), 10), [], "no worker takes it while leased")
        assert.isTrue(Option.isNone(yield* store.leaseDelivery(ws, e.id, failed.id, at(129))), "an attempt in flight")
        // Its caller died: the lease runs out and a worker makes the attempt.
        assert.deepStrictEqual(ids(yield* store.claimDue(ts(131), ts(191), 10)), [failed.id])
        yield* store.recordAttempts([{
          workspaceId: ws,
          deliveryId: failed.id,
          status: "succeeded",
          attempts: 9,
          responseStatus: 200,
          error: null,
          lastAttemptAt: ts(132),
          nextAttemptAt: null
        }])
        // Recorded: the lease is over, so it may be leased (retried) again at once.
        const again = Option.getOrThrow(yield* store.leaseDelivery(ws, e.id, failed.id, at(133)))
        assert.deepStrictEqual([again.status, again.attempts, again.responseStatus, again.nextAttemptAt], [
          "pending",
          9,
          200,
          ts(133)
        ])
        const resent = Option.getOrThrow(yield* store.leaseDelivery(ws, e.id, succeeded.id, at(140)))
        assert.deepStrictEqual([resent.status, resent.attempts], ["pending", 1], "a succeeded delivery too")
        yield* clearQueue
      }))

    it.effect("requeueFailed: an endpoint's failed and retrying deliveries since `since`, of the given types, due now; oldest first up to the limit; scoped", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const ws = uuid()
        const e = endpoint(ws)
        const sibling = endpoint(ws)
        const theirs = endpoint(uuid())
        yield* insert(e, sibling, theirs)
        const failed = failedDelivery
        const atSince = failed(e, { createdAt: ts(10) })
        const later = failed(e, { createdAt: ts(20) })
        const retrying = delivery(e, { createdAt: ts(15), attempts: 3, error: "HTTP 502", nextAttemptAt: ts(5_000) })
        const skipped = [
          failed(e, { createdAt: ts(9) }), // before since
          failed(e, { createdAt: ts(30), eventType: "contact.deleted" }), // a type not asked for
          delivery(e, { createdAt: ts(31), attempts: 2, nextAttemptAt: ts(50) }), // its retry is already due
          delivery(e, { createdAt: ts(32), nextAttemptAt: ts(40) }), // never attempted
          delivery(e, { createdAt: ts(33), status: "succeeded", attempts: 1, nextAttemptAt: null }),
          failed(sibling, { createdAt: ts(34) }),
          failed(theirs, { createdAt: ts(35) })
        ]
        yield* store.insertDeliveries([atSince, later, retrying, ...skipped])
        const requeue = (workspaceId: string, endpointId: string, limit = 100) =>
          store.requeueFailed(workspaceId, endpointId, {
            since: ts(10),
            now: ts(100),
            types: ["contact.updated"],
            limit
          })

        assert.strictEqual(yield* requeue(theirs.workspaceId, e.id), 0, "another workspace's call queues nothing")
        assert.strictEqual(yield* requeue(ws, e.id), 3)
        for (const d of [atSince, later, retrying]) {
          assert.deepStrictEqual(
            Option.getOrThrow(yield* store.getDelivery(ws, d.id)),
            { ...d, status: "pending" as const, nextAttemptAt: ts(100) },
            "pending and due now, its attempts and last outcome kept"
          )
        }
        for (const d of skipped) {
          assert.deepStrictEqual(Option.getOrThrow(yield* store.getDelivery(d.workspaceId, d.id)), d)
        }
        assert.strictEqual(yield* requeue(ws, e.id), 0, "queued already: a repeat queues nothing more")
        assert.sameMembers(ids(yield* store.claimDue(ts(100), ts(160), 100)), [
          atSince.id,
          later.id,
          retrying.id,
          skipped[2]!.id,
          skipped[3]!.id
        ])
        yield* clearQueue

        // Oldest first, `limit` at a time: each repeat queues the next.
        const many = endpoint(ws)
        yield* insert(many)
        const backlog = Array.from({ length: 5 }, (_, i) => failed(many, { createdAt: ts(60 + i) }))
        yield* store.insertDeliveries([...backlog].reverse())
        const statuses = Effect.forEach(
          backlog,
          (d) => Effect.map(store.getDelivery(ws, d.id), (found) => Option.getOrThrow(found).status)
        )
        assert.strictEqual(yield* requeue(ws, many.id, 2), 2)
        assert.deepStrictEqual(yield* statuses, ["pending", "pending", "failed", "failed", "failed"], "the oldest two")
        assert.deepStrictEqual([yield* requeue(ws, many.id, 2), yield* requeue(ws, many.id, 2)], [2, 1])
        assert.deepStrictEqual(yield* statuses, ["pending", "pending", "pending", "pending", "pending"])
        assert.strictEqual(yield* requeue(ws, many.id, 2), 0)
        yield* clearQueue
      }))

    it.effect("requeueFailed queues thousands in one call", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        const ws = uuid()
        const e = endpoint(ws)
        yield* insert(e)
        const N = 2_500
        yield* store.insertDeliveries(
          Array.from({ length: N }, (_, i) => failedDelivery(e, { createdAt: ts(i) }))
        )
        const queued = yield* store.requeueFailed(ws, e.id, {
          since: ts(0),
          now: ts(10_000),
          types: ["contact.updated"],
          limit: 10_000
        })
        assert.strictEqual(queued, N)
        assert.strictEqual((yield* store.pendingDeliveries()).count, N)
        yield* clearQueue
      }))

    it.effect("pendingDeliveries: counts pending deliveries of every workspace and names the oldest one's creation", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        yield* clearQueue
        assert.deepStrictEqual(yield* store.pendingDeliveries(), { count: 0, oldestCreatedAt: null })
        const a = endpoint(uuid())
        const b = endpoint(uuid())
        yield* insert(a, b)
        yield* store.insertDeliveries([
          delivery(a, { createdAt: ts(5) }),
          delivery(b, { createdAt: ts(3), nextAttemptAt: ts(3_600) }),
          delivery(a, { createdAt: ts(1), status: "succeeded", nextAttemptAt: null }),
          delivery(b, { createdAt: ts(2), status: "failed", nextAttemptAt: null })
        ])
        assert.deepStrictEqual(yield* store.pendingDeliveries(), { count: 2, oldestCreatedAt: ts(3) })
        yield* clearQueue
      }))

    it.effect("setEndpointHealth: records the failing run, disables, never re-enables; tenant-scoped", () =>
      Effect.gen(function*() {
        const store = yield* WebhookStore
        const ws = uuid()
        const e = endpoint(ws)
        yield* insert(e)
        yield* store.setEndpointHealth(ws, e.id, { failingSince: ts(5), disable: false })
        assert.deepStrictEqual(yield* store.getEndpoint(ws, e.id), Option.some({ ...e, failingSince: ts(5) }))
        yield* store.setEndpointHealth(uuid(), e.id, { failingSince: null, disable: true })
        assert.deepStrictEqual(yield* store.getEndpoint(ws, e.id), Option.some({ ...e, failingSince: ts(5) }))
        yield* store.setEndpointHealth(ws, e.id, { failingSince: ts(5), disable: true })
        assert.strictEqual(Option.getOrThrow(yield* store.getEndpoint(ws, e.id)).status, "disabled")
        yield* store.setEndpointHealth(ws, e.id, { failingSince: null, disable: false })
        assert.deepStrictEqual(
          yield* store.getEndpoint(ws, e.id),
          Option.some({ ...e, status: "disabled", failingSince: null })
        )
      }))
  })

/** SQL stores over a client, migrated first. */
const sqlAdapter = sqlStores

contract("WebhookStore: memory", MemoryStores.layer)

/**
 * Two workers, each with its own pool on one database, run the service's fanOut + deliverDue rounds
 * at once while 300 events arrive; a fake sender counts each webhook-id. Every event is delivered
 * exactly once (all succeed, so no retry may duplicate one).
 */
const twoWorkers = (databaseUrl: string) =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => freshDatabase(databaseUrl, "webhooks_workers")),
      (db) => Effect.promise(() => db.drop())
    )
    const counts = new Map<string, number>()
    const byWorker = [0, 0]
    const TOTAL = 300
    const resolver = Layer.succeed(HostResolver, HostResolver.of({ resolve: () => Effect.succeed(["93.184.216.34"]) }))
    const runtimeFor = (worker: number) =>
      ManagedRuntime.make(
        WebhooksLayer.pipe(
          Layer.provideMerge(
            Layer.merge(
              layerOutboundGuard(false).pipe(Layer.provide(resolver)),
              Layer.succeed(
                WebhookSender,
                WebhookSender.of({
                  send: ({ headers }) =>
                    Effect.sync(() => {
                      const id = headers["webhook-id"]!
                      counts.set(id, (counts.get(id) ?? 0) + 1)
                      byWorker[worker]!++
                    }).pipe(
                      Effect.zipRight(Effect.sleep(`${Math.floor(Math.random() * 4)} millis`)),
                      Effect.as({ status: 200 })
                    )
                })
              )
            )
          ),
          Layer.provideMerge(sqlAdapter(Postgres.layer({ url: Redacted.make(db.url), maxConnections: 8 })))
        )
      )
    const one = runtimeFor(0)
    const two = runtimeFor(1)
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([one.dispose(), two.dispose()])))

    const ws = uuid()
    const setup = Effect.gen(function*() {
      const store = yield* WebhookStore
      yield* store.insertEndpoint(endpoint(ws, { events: ["*"] }))
      // an endpoint of another workspace must not receive anything
      yield* store.insertEndpoint(endpoint(uuid(), { events: ["*"] }))
    })
    yield* Effect.promise(() => one.runPromise(setup))
    // the second pool's layer must be up (migrations ran once already) before the race starts
    yield* Effect.promise(() => two.runPromise(Effect.void))

    let appended = false
    const producer = Effect.gen(function*() {
      const outbox = yield* EventOutbox
      for (let i = 0; i < TOTAL / 10; i++) {
        yield* outbox.append(ws, Array.from({ length: 10 }, () => event("contact.deleted", { contactId: uuid() })))
        yield* Effect.sleep("2 millis")
      }
      appended = true
    })
    const rounds = Effect.gen(function*() {
      const webhooks = yield* Webhooks
      let idle = 0
      while (idle < 5) {
        const n = (yield* webhooks.fanOut(20)).events + (yield* webhooks.deliverDue(20, 8))
        idle = n === 0 && appended ? idle + 1 : 0
        if (n === 0) yield* Effect.sleep("5 millis")
      }
    })
    const started = Date.now()
    yield* Effect.promise(() => Promise.all([one.runPromise(producer), one.runPromise(rounds), two.runPromise(rounds)]))
    const outboxIds = yield* Effect.promise(() => one.runPromise(Effect.flatMap(EventOutbox, (o) => o.list(ws))))
    const expected = outboxIds.map((e) => eventIdOf(e.id))
    assert.strictEqual(expected.length, TOTAL)
    const duplicates = [...counts].filter(([, n]) => n > 1)
    console.log(
      `two workers: ${counts.size} events, ${duplicates.length} duplicates, worker split ${byWorker.join("/")}, ${
        Date.now() - started
      } ms`
    )
    assert.deepStrictEqual(duplicates, [], "no event delivered twice")
    assert.deepStrictEqual(
      [...counts.keys()].sort(),
      [...expected].sort(),
      "every event delivered, to the right endpoint only"
    )
    assert.isAbove(byWorker[0]!, 0, "worker 1 delivered some")
    assert.isAbove(byWorker[1]!, 0, "worker 2 delivered some")
    const states = yield* Effect.promise(() =>
      one.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<
          { status: string; attempts: number; n: string }
        >`SELECT status, attempts, count(*) AS n FROM webhook_deliveries GROUP BY 1, 2`))
    )
    assert.deepStrictEqual(states.map((r) => ({ ...r, n: Number(r.n) })), [{
      status: "succeeded",
      attempts: 1,
      n: TOTAL
    }])
  })

/**
 * The 20-endpoint cap under racing creates: with 19 endpoints, 8 creates at once on one pool admit
 * exactly one (each create counts and inserts under the workspace's lock). One race catches the
 * unlocked check about a third of the time, so it runs in 6 fresh workspaces.
 */
const capRace = (databaseUrl: string) =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => freshDatabase(databaseUrl, "webhooks_cap")),
      (db) => Effect.promise(() => db.drop())
    )
    const resolver = Layer.succeed(HostResolver, HostResolver.of({ resolve: () => Effect.succeed(["93.184.216.34"]) }))
    const runtime = ManagedRuntime.make(
      WebhooksLayer.pipe(
        Layer.provideMerge(
          Layer.merge(
            layerOutboundGuard(false).pipe(Layer.provide(resolver)),
            Layer.succeed(WebhookSender, WebhookSender.of({ send: () => Effect.succeed({ status: 200 }) }))
          )
        ),
        Layer.provideMerge(sqlAdapter(Postgres.layer({ url: Redacted.make(db.url), maxConnections: 10 })))
      )
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => runtime.dispose()))
    for (let round = 0; round < 6; round++) {
      const p: Principal = { workspaceId: uuid(), keyId: uuid(), kind: "test", scopes: new Set(["webhooks:manage"]) }
      const create = (i: number) =>
        Effect.flatMap(Webhooks, (w) => w.create(p, { url: `https://hooks.example.com/${i}`, events: ["*"] }))
      yield* Effect.promise(() =>
        runtime.runPromise(Effect.forEach(Array.from({ length: MAX_ENDPOINTS_PER_WORKSPACE - 1 }, (_, i) => i), create))
      )
      const racing = yield* Effect.promise(() =>
        runtime.runPromise(
          Effect.forEach(Array.from({ length: 8 }, (_, i) => 100 + i), (i) => Effect.either(create(i)), {
            concurrency: "unbounded"
          })
        )
      )
      assert.strictEqual(racing.filter(Either.isRight).length, 1, `round ${round}: one create fits under the cap`)
      for (const lost of racing.filter(Either.isLeft)) assert.strictEqual(lost.left._tag, "InvalidArgument")
      const stored = yield* Effect.promise(() =>
        runtime.runPromise(Effect.flatMap(WebhookStore, (s) => s.listEndpoints(p.workspaceId)))
      )
      assert.strictEqual(stored.length, MAX_ENDPOINTS_PER_WORKSPACE)
    }
  })

sqlContract({
  name: (db) => `WebhookStore: ${db}`,
  adapter: sqlAdapter,
  suite: contract,
  database: "webhooks",
  onPostgres: (url) =>
    describe("webhooks service on Postgres", () => {
      it.live("two workers with separate pools deliver each of 300 events exactly once", () =>
        Effect.scoped(twoWorkers(url)), 60_000)
      it.live("racing creates at 19 endpoints admit exactly one more", () =>
        Effect.scoped(capRace(url)), 60_000)
    })
})
