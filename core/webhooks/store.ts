import { Context, Effect, Option } from "effect"
import type { OutboxEvent } from "../events/outbox.ts"
import { type DeliveryRecord, EndpointRecord } from "./model.ts"

/** Who gets which events: an endpoint without its URL or secrets. */
export const EndpointSubscription = EndpointRecord.pick("workspaceId", "id", "events")
export type EndpointSubscription = typeof EndpointSubscription.Type

export interface AttemptRecord {
  readonly workspaceId: string
  readonly deliveryId: string
  readonly status: DeliveryRecord["status"]
  readonly attempts: number
  readonly responseStatus: number | null
  readonly error: string | null
  readonly lastAttemptAt: string
  readonly nextAttemptAt: string | null
}

/** Webhook endpoints, deliveries and the delivery side of the outbox. Tenant-scoped except the worker's claims. */
export interface WebhookStore {
  readonly insertEndpoint: (e: EndpointRecord) => Effect.Effect<void>
  readonly getEndpoint: (workspaceId: string, id: string) => Effect.Effect<Option.Option<EndpointRecord>>
  /** Oldest first. */
  readonly listEndpoints: (workspaceId: string) => Effect.Effect<ReadonlyArray<EndpointRecord>>
  readonly updateEndpoint: (e: EndpointRecord) => Effect.Effect<void>
  /** Deletes the endpoint and its deliveries. */
  readonly deleteEndpoint: (workspaceId: string, id: string) => Effect.Effect<boolean>

  readonly insertDeliveries: (ds: ReadonlyArray<DeliveryRecord>) => Effect.Effect<void>
  readonly getDelivery: (workspaceId: string, id: string) => Effect.Effect<Option.Option<DeliveryRecord>>
  /** Newest first. */
  readonly listDeliveries: (
    workspaceId: string,
    endpointId: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<DeliveryRecord>>

  /**
   * Leases one delivery of `endpointId` for an attempt its caller makes now (a retry asked for by
   * the user), whatever its status: it becomes pending, due at `now`, leased until `leaseUntil`, so
   * no worker sends it meanwhile and, should the caller die before recording the attempt, a worker
   * makes it once the lease ends. None when the workspace has no such delivery of that endpoint or
   * an unexpired lease holds it (an attempt in flight).
   */
  readonly leaseDelivery: (
    workspaceId: string,
    endpointId: string,
    deliveryId: string,
    lease: { readonly now: string; readonly leaseUntil: string }
  ) => Effect.Effect<Option.Option<DeliveryRecord>>
  /**
   * Queues again, due at `now`, the oldest `limit` deliveries of one endpoint created at or after
   * `since`, of the event types in `types`, whose last attempt failed and that no lease holds: failed
   * ones, and pending ones waiting for a retry later than `now`. How many. One statement on SQL,
   * over the deliveries not yet succeeded (a partial index), however many there are.
   */
  readonly requeueFailed: (
    workspaceId: string,
    endpointId: string,
    options: {
      readonly since: string
      readonly now: string
      readonly types: ReadonlyArray<string>
      readonly limit: number
    }
  ) => Effect.Effect<number>

  /**
   * Takes up to `limit` outbox events not yet fanned out, oldest first, locking them for the
   * current transaction so concurrent workers never take the same event (SKIP LOCKED on Postgres).
   */
  readonly claimOutbox: (limit: number) => Effect.Effect<ReadonlyArray<OutboxEvent>>
  readonly markDispatched: (eventIds: ReadonlyArray<string>, at: string) => Effect.Effect<void>
  /** Enabled endpoints of these workspaces: what fan-out needs, without their secrets. */
  readonly enabledEndpoints: (workspaceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<EndpointSubscription>>

  /**
   * Claims up to `limit` pending deliveries due at `now` whose endpoint is enabled, leasing each
   * until `leaseUntil`; a lease that expires (a worker died) makes the delivery claimable again.
   */
  readonly claimDue: (
    now: string,
    leaseUntil: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<{ readonly delivery: DeliveryRecord; readonly endpoint: EndpointRecord }>>
  /**
   * Ends every lease at once; how many there were. Only for a worker that knows no other is running
   * (the embedded database: one process per data directory): at its start, every lease was left
   * by a process that died, and its deliveries need not wait for the lease to run out.
   */
  readonly releaseLeases: () => Effect.Effect<number>
  /** How many deliveries are pending (due or retrying later) and when the oldest was created: the queue gauges. */
  readonly pendingDeliveries: () => Effect.Effect<{ readonly count: number; readonly oldestCreatedAt: string | null }>
  /**
   * Stores each attempt's outcome on its delivery, appends it to the attempt history and ends the
   * lease: many at once (one statement on SQL), a worker's finished attempts.
   */
  readonly recordAttempts: (as: ReadonlyArray<AttemptRecord>) => Effect.Effect<void>
  /**
   * Sets the start of the endpoint's failing run and, with `disable`, disables it. Never enables:
   * the worker's view of the endpoint may be stale (the user may have disabled it meanwhile).
   */
  readonly setEndpointHealth: (
    workspaceId: string,
    endpointId: string,
    health: { readonly failingSince: string | null; readonly disable: boolean }
  ) => Effect.Effect<void>
}

export const WebhookStore = Context.GenericTag<WebhookStore>("core/WebhookStore")

/** Sends one signed POST; never follows redirects; times out. The adapter owns the transport. */
export interface WebhookSender {
  readonly send: (request: {
    readonly url: string
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
    readonly timeoutMs: number
  }) => Effect.Effect<{ readonly status: number } | { readonly error: string }>
}
export const WebhookSender = Context.GenericTag<WebhookSender>("core/WebhookSender")
