/**
 * Webhook endpoints (the API) and delivery (the outbox worker's steps). Delivery is at-least-once:
 * an event is fanned out to deliveries in the same transaction that marks it dispatched; a delivery
 * is leased to one worker per attempt, and an attempt whose worker dies is retried when the lease
 * ends. An event keeps its `webhook-id` across retries.
 */
import { Clock, Context, Effect, type Either, Layer, Option, Random } from "effect"
import type { Principal } from "../auth/principal.ts"
import { OutboundGuard } from "../egress/guard.ts"
import { eventTypes, isEventType, PING } from "../events/catalog.ts"
import type { OutboxEvent } from "../events/outbox.ts"
import { displayText } from "../kernel/display.ts"
import { FailedPrecondition, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids, isUuid } from "../kernel/ids.ts"
import { Transactor, Urgent } from "../kernel/transactor.ts"
import {
  type CreateEndpointInput,
  type DeliveryRecord,
  type EndpointRecord,
  toPublic,
  toPublicDelivery,
  type UpdateEndpointInput
} from "./model.ts"
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome, classify, LEASE_MS, nextAttemptAt, shouldDisable } from "./policy.ts"
import { eventIdOf, generateSecret, signatureHeaderBy, testEventId, WebhookHmac } from "./signing.ts"
import { type AttemptRecord, WebhookSender, WebhookStore } from "./store.ts"

export const MAX_ENDPOINTS_PER_WORKSPACE = 20
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000
/** Replaced secrets kept signing at once: more rotations within 24 h retire the oldest early. */
export const MAX_PREVIOUS_SECRETS = 10
/** How far back recovery reaches. */
export const RECOVER_WINDOW_MS = 14 * 24 * 60 * 60 * 1000
/** Deliveries one recovery request queues at most, oldest first: a repeat with the same `since` queues the next. */
export const MAX_RECOVER = 10_000
/** A `since` of exactly 14 days back, computed by the client before the request travelled, is still accepted. */
const RECOVER_LEEWAY_MS = 60_000

const endpointLock = (workspaceId: string, id: string) => `webhook:${workspaceId}:${id}`
/** The set of a workspace's endpoints, for the per-workspace cap. */
const endpointsLock = (workspaceId: string) => `webhooks:${workspaceId}`

const stillSigning = (e: EndpointRecord, now: number) => e.previousSecrets.filter((s) => Date.parse(s.expiresAt) > now)

const iso = (ms: number) => new Date(ms).toISOString()
const notFound = new NotFound({ message: "No such webhook endpoint" })
const deliveryNotFound = new NotFound({ message: "No such delivery of this webhook endpoint" })
/** Retry and recovery send now; a disabled endpoint receives nothing, so both ask for it to be enabled first. */
const disabled = (action: string) =>
  new FailedPrecondition({
    message: `The webhook endpoint is disabled: enable it (PATCH status "enabled") to ${action}`
  })

/** `["*"]` subscribes to every current and future type. */
export const subscribes = (events: ReadonlyArray<string>, type: string) => events.includes("*") || events.includes(type)

const validateEvents = (events: ReadonlyArray<string>) => {
  if (events.includes("*")) {
    return events.length === 1
      ? Effect.succeed(["*"])
      : Effect.fail(new InvalidArgument({ message: "events: \"*\" cannot be combined with other types" }))
  }
  const unknown = events.find((e) => !isEventType(e))
  if (unknown !== undefined) {
    const hint = unknown === PING ? " (ping is only sent by the test endpoint)" : ""
    return Effect.fail(
      new InvalidArgument({
        message: `events: unknown event type ${displayText(unknown, 64)}${hint}; see GET /v1/api/webhook-events`
      })
    )
  }
  return Effect.succeed([...new Set(events)])
}

export const eventPayload = (type: string, timestamp: string, data: unknown) =>
  JSON.stringify({ type, timestamp, data })

export const make = Effect.gen(function*() {
  const store = yield* WebhookStore
  const signatureHeader = signatureHeaderBy(yield* WebhookHmac)
  const sender = yield* WebhookSender
  const guard = yield* OutboundGuard
  const tx = yield* Transactor

  const load = (workspaceId: string, id: string) => findOr404(id, (id) => store.getEndpoint(workspaceId, id), notFound)

  // ---- API ----

  const list = (p: Principal) => Effect.map(store.listEndpoints(p.workspaceId), (es) => es.map(toPublic))

  const create = (p: Principal, input: CreateEndpointInput) =>
    Effect.gen(function*() {
      const url = yield* guard.check(input.url)
      const events = yield* validateEvents(input.events)
      const { uuid } = yield* Ids
      const record: EndpointRecord = {
        id: uuid(),
        workspaceId: p.workspaceId,
        url: url.toString(),
        events,
        label: input.label ?? null,
        status: "enabled",
        apiVersion: input.apiVersion ?? null,
        createdAt: iso(yield* Clock.currentTimeMillis),
        secret: generateSecret(),
        previousSecrets: [],
        failingSince: null
      }
      // Count and insert under the workspace's endpoint lock: creates racing at 19 endpoints must not all pass the check.
      yield* tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(endpointsLock(p.workspaceId))
          const existing = yield* store.listEndpoints(p.workspaceId)
          if (existing.length >= MAX_ENDPOINTS_PER_WORKSPACE) {
            return yield* new InvalidArgument({
              message: `A workspace may have at most ${MAX_ENDPOINTS_PER_WORKSPACE} webhook endpoints`
            })
          }
          yield* store.insertEndpoint(record)
        })
      )
      return { ...toPublic(record), secret: record.secret }
    })

  const get = (p: Principal, id: string) => Effect.map(load(p.workspaceId, id), toPublic)

  /**
   * Reads, changes and writes one endpoint under its lock: a PATCH racing a rotation must not write
   * the old secret back, nor two rotations hand out a secret that never signs.
   */
  const modify = (workspaceId: string, id: string, change: (current: EndpointRecord, now: number) => EndpointRecord) =>
    tx.withTransaction(
      Effect.gen(function*() {
        yield* tx.lock(endpointLock(workspaceId, id))
        const next = change(yield* load(workspaceId, id), yield* Clock.currentTimeMillis)
        yield* store.updateEndpoint(next)
        return next
      })
    )

  /** The worker's health updates take the endpoint's lock too, so a PATCH in flight cannot undo them. */
  const setHealth = (
    workspaceId: string,
    id: string,
    health: { readonly failingSince: string | null; readonly disable: boolean }
  ) =>
    tx.withTransaction(
      Effect.zipRight(tx.lock(endpointLock(workspaceId, id)), store.setEndpointHealth(workspaceId, id, health))
    )

  const update = (p: Principal, id: string, input: UpdateEndpointInput) =>
    Effect.gen(function*() {
      yield* load(p.workspaceId, id)
      // The DNS check runs before the lock is taken.
      const url = input.url === undefined ? undefined : (yield* guard.check(input.url)).toString()
      const events = input.events === undefined ? undefined : yield* validateEvents(input.events)
      const next = yield* modify(p.workspaceId, id, (current) => ({
        ...current,
        url: url ?? current.url,
        events: events ?? current.events,
        label: input.label === undefined ? current.label : input.label,
        apiVersion: input.apiVersion === undefined ? current.apiVersion : input.apiVersion,
        status: input.status ?? current.status,
        // Re-enabling starts a fresh health record.
        failingSince: input.status === "enabled" ? null : current.failingSince
      }))
      return toPublic(next)
    })

  const remove = (p: Principal, id: string) =>
    Effect.gen(function*() {
      if (!isUuid(id) || !(yield* store.deleteEndpoint(p.workspaceId, id))) return yield* notFound
      return { deleted: true as const }
    })

  const rotate = (p: Principal, id: string) =>
    Effect.gen(function*() {
      const next = yield* modify(p.workspaceId, id, (current, now) => ({
        ...current,
        secret: generateSecret(),
        // Expired secrets are dropped here; the cap bounds the signature header of a key rotated in a loop.
        previousSecrets: [
          { secret: current.secret, expiresAt: iso(now + ROTATION_OVERLAP_MS) },
          ...stillSigning(current, now)
        ].slice(
          0,
          MAX_PREVIOUS_SECRETS
        )
      }))
      return { ...toPublic(next), secret: next.secret }
    })

  const deliveries = (p: Principal, id: string, limit: number) =>
    Effect.gen(function*() {
      yield* load(p.workspaceId, id)
      return (yield* store.listDeliveries(p.workspaceId, id, limit)).map(toPublicDelivery)
    })

  // ---- Delivery ----

  /** Secrets that sign now: the current one, then every replaced one still inside its 24 h overlap. */
  const signingSecrets = (e: EndpointRecord, now: number) => [e.secret, ...stillSigning(e, now).map((s) => s.secret)]

  /**
   * The outbound guard's verdict on each URL, checked once per URL of a batch: at delivery time
   * again, since a host may resolve elsewhere since registration.
   */
  const checkUrls = (urls: Iterable<string>) =>
    Effect.map(
      Effect.forEach(new Set(urls), (url) =>
        Effect.map(Effect.either(guard.check(url)), (verdict) => [url, verdict] as const), {
        concurrency: "unbounded"
      }),
      (verdicts) =>
        new Map(verdicts)
    )

  /** One attempt of one delivery, not yet recorded: sign, send, classify. Never fails. */
  const send = (delivery: DeliveryRecord, endpoint: EndpointRecord, allowed: Either.Either<URL, InvalidArgument>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const outcome = allowed._tag === "Left"
        ? classify({ error: allowed.left.message })
        : yield* Effect.gen(function*() {
          const timestamp = Math.floor(now / 1000)
          const signature = yield* signatureHeader(
            signingSecrets(endpoint, now),
            delivery.eventId,
            timestamp,
            delivery.payload
          )
          const response = yield* sender.send({
            url: endpoint.url,
            body: delivery.payload,
            timeoutMs: ATTEMPT_TIMEOUT_MS,
            headers: {
              "content-type": "application/json",
              "webhook-id": delivery.eventId,
              "webhook-timestamp": String(timestamp),
              "webhook-signature": signature
            }
          })
          return classify(response)
        })
      const attempts = delivery.attempts + 1
      const next = outcome._tag === "Failed" ? nextAttemptAt(attempts, now, yield* Random.next) : null
      const status = outcome._tag === "Succeeded" ? "succeeded" : next === null ? "failed" : "pending"
      const record: AttemptRecord = {
        workspaceId: delivery.workspaceId,
        deliveryId: delivery.id,
        status,
        attempts,
        responseStatus: outcome.responseStatus,
        error: outcome._tag === "Failed"
          ? outcome.error.slice(0, 500)
          : outcome._tag === "Gone"
          ? "410 Gone: endpoint disabled"
          : null,
        lastAttemptAt: iso(now),
        nextAttemptAt: next === null ? null : iso(next)
      }
      return { delivery: { ...delivery, ...record }, endpoint, outcome, record } satisfies Attempted
    })

  /**
   * Records finished attempts (one store call for all) and then updates their endpoints' health.
   * Until recorded, a delivery stays leased: a worker that dies before this retries it (at least once).
   */
  const settle = (attempted: ReadonlyArray<Attempted>) =>
    Effect.gen(function*() {
      yield* store.recordAttempts(attempted.map((a) => a.record))
      // One health update per endpoint, from its last attempt in the batch (a Gone anywhere disables it).
      const last = new Map<string, Attempted>()
      const gone = new Set<string>()
      for (const a of attempted) {
        last.set(a.endpoint.id, a)
        if (a.outcome._tag === "Gone") gone.add(a.endpoint.id)
      }
      for (const { endpoint, outcome, record } of last.values()) {
        if (outcome._tag === "Succeeded" && !gone.has(endpoint.id)) {
          if (endpoint.failingSince !== null) {
            yield* setHealth(endpoint.workspaceId, endpoint.id, { failingSince: null, disable: false })
          }
        } else {
          const failingSince = endpoint.failingSince ?? record.lastAttemptAt
          const disable = gone.has(endpoint.id) ||
            shouldDisable(Date.parse(failingSince), Date.parse(record.lastAttemptAt))
          yield* setHealth(endpoint.workspaceId, endpoint.id, { failingSince, disable })
        }
      }
    }).pipe(
      // Ahead of other work waiting for the database: until written, a crash sends these attempts again.
      Effect.locally(Urgent, true)
    )

  /** One attempt of one delivery: guard, sign, send, record. Never fails. */
  const attempt = (delivery: DeliveryRecord, endpoint: EndpointRecord) =>
    Effect.gen(function*() {
      const verdicts = yield* checkUrls([endpoint.url])
      const attempted = yield* send(delivery, endpoint, verdicts.get(endpoint.url)!)
      yield* settle([attempted])
      return attempted.delivery
    })

  /** Fans out up to `limit` outbox events to deliveries, in one transaction. Returns how many of each. */
  const fanOut = (limit: number) =>
    tx.withTransaction(
      Effect.gen(function*() {
        const events = yield* store.claimOutbox(limit)
        if (events.length === 0) return { events: 0, deliveries: 0 }
        const endpoints = yield* store.enabledEndpoints([...new Set(events.map((e) => e.workspaceId))])
        const { uuid } = yield* Ids
        const now = iso(yield* Clock.currentTimeMillis)
        const deliveries: Array<DeliveryRecord> = []
        for (const event of events) {
          for (const endpoint of endpoints) {
            if (endpoint.workspaceId !== event.workspaceId || !subscribes(endpoint.events, event.type)) continue
            deliveries.push(newDelivery(uuid(), endpoint, event, now))
          }
        }
        yield* store.insertDeliveries(deliveries)
        yield* store.markDispatched(events.map((e) => e.id), now)
        return { events: events.length, deliveries: deliveries.length }
      })
    )

  /** Leases up to `limit` due deliveries to the caller, who must `attempt` each (at once: the lease covers one attempt). */
  const claimDue = (limit: number, leaseMs: number = LEASE_MS) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => store.claimDue(iso(now), iso(now + leaseMs), limit))

  /** Attempts up to `limit` due deliveries, `concurrency` at a time. Returns how many were attempted. */
  const deliverDue = (limit: number, concurrency: number) =>
    Effect.gen(function*() {
      // The batch runs in waves of `concurrency` attempts: the lease must outlast the last wave,
      // or another worker could take over a delivery still waiting its turn here.
      const waves = Math.ceil(limit / Math.max(1, concurrency))
      const claimed = yield* claimDue(limit, LEASE_MS + (waves - 1) * ATTEMPT_TIMEOUT_MS)
      yield* Effect.forEach(claimed, ({ delivery, endpoint }) => attempt(delivery, endpoint), {
        concurrency,
        discard: true
      })
      return claimed.length
    })

  /** POST /webhooks/{id}/test: a signed `ping` delivered now, retried like any delivery if it fails. */
  const test = (p: Principal, id: string) =>
    Effect.gen(function*() {
      const endpoint = yield* load(p.workspaceId, id)
      const { uuid } = yield* Ids
      const now = iso(yield* Clock.currentTimeMillis)
      const ping = {
        id: uuid(),
        workspaceId: p.workspaceId,
        type: PING,
        data: { message: "Test event from Switchboard" },
        createdAt: now
      }
      // Not due for the worker (nextAttemptAt null): this request makes the first attempt itself.
      const delivery: DeliveryRecord = {
        ...newDelivery(uuid(), endpoint, ping, now),
        eventId: testEventId(ping.id),
        nextAttemptAt: null
      }
      yield* store.insertDeliveries([delivery])
      return toPublicDelivery(yield* attempt(delivery, endpoint))
    })

  /**
   * POST /webhooks/{id}/deliveries/{deliveryId}/retry: the delivery's event sent again now, whatever
   * its status, as its next attempt (same `webhook-id`, same row). One that waits for a retry is sent
   * now instead; one with an attempt in flight is refused, not sent twice at once.
   */
  const retry = (p: Principal, id: string, deliveryId: string) =>
    Effect.gen(function*() {
      const endpoint = yield* load(p.workspaceId, id)
      const known = isUuid(deliveryId) ? yield* store.getDelivery(p.workspaceId, deliveryId) : Option.none()
      if (Option.isNone(known) || known.value.endpointId !== endpoint.id) return yield* deliveryNotFound
      if (endpoint.status === "disabled") return yield* disabled("retry its deliveries")
      const now = yield* Clock.currentTimeMillis
      const leased = yield* store.leaseDelivery(p.workspaceId, endpoint.id, deliveryId, {
        now: iso(now),
        leaseUntil: iso(now + LEASE_MS)
      })
      if (Option.isNone(leased)) {
        return yield* new FailedPrecondition({
          message: "An attempt of this delivery is in flight; its outcome will show in the delivery log"
        })
      }
      return toPublicDelivery(yield* attempt(leased.value, endpoint))
    })

  /**
   * POST /webhooks/{id}/recover: the endpoint's deliveries since `since` whose last attempt failed,
   * of the types it subscribes to now, queued for the worker at once. At most MAX_RECOVER per call.
   */
  const recover = (p: Principal, id: string, since: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const from = Date.parse(since)
      if (from > now) {
        return yield* new InvalidArgument({ message: `since: must not be in the future (now is ${iso(now)})` })
      }
      if (from < now - RECOVER_WINDOW_MS - RECOVER_LEEWAY_MS) {
        return yield* new InvalidArgument({
          message: `since: must be at most 14 days back (no earlier than ${iso(now - RECOVER_WINDOW_MS)})`
        })
      }
      const endpoint = yield* load(p.workspaceId, id)
      if (endpoint.status === "disabled") return yield* disabled("recover its deliveries")
      const queued = yield* store.requeueFailed(p.workspaceId, endpoint.id, {
        since: iso(from),
        now: iso(now),
        // "*" is every type of the catalog, never the test ping.
        types: endpoint.events.includes("*") ? eventTypes : endpoint.events,
        limit: MAX_RECOVER
      })
      return { queued }
    })

  return {
    list,
    create,
    get,
    update,
    remove,
    rotate,
    deliveries,
    test,
    retry,
    recover,
    fanOut,
    claimDue,
    deliverDue,
    attempt,
    checkUrls,
    send,
    settle
  } as const
})

/** An attempt made and not yet recorded: the delivery as it now stands, its endpoint, and what to store. */
export interface Attempted {
  readonly delivery: DeliveryRecord
  readonly endpoint: EndpointRecord
  readonly outcome: AttemptOutcome
  readonly record: AttemptRecord
}

const newDelivery = (
  id: string,
  endpoint: Pick<EndpointRecord, "id">,
  event: OutboxEvent,
  now: string
): DeliveryRecord => ({
  id,
  workspaceId: event.workspaceId,
  endpointId: endpoint.id,
  eventId: eventIdOf(event.id),
  eventType: event.type,
  payload: eventPayload(event.type, event.createdAt, event.data),
  status: "pending",
  attempts: 0,
  responseStatus: null,
  error: null,
  createdAt: now,
  lastAttemptAt: null,
  nextAttemptAt: now
})

export class Webhooks extends Context.Tag("core/Webhooks")<Webhooks, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Webhooks, make)
