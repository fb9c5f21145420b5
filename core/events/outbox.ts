import { Context, Effect, Schema } from "effect"
import { Ids } from "../kernel/ids.ts"
import { nowIso } from "../kernel/time.ts"
import type { DomainEvent } from "./catalog.ts"
import { announceAppend, type OutboxSignal } from "./signal.ts"

/** A stored event, waiting in the outbox for delivery. */
export const OutboxEvent = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  type: Schema.String,
  data: Schema.Unknown,
  createdAt: Schema.String
})
export type OutboxEvent = typeof OutboxEvent.Type

/**
 * The domain-event port. `append` must run inside the same `Transactor.withTransaction` as the
 * state change that caused the event, so the two commit or roll back together.
 *
 * An event goes to the webhook endpoints enabled in its workspace when it is appended. Where there
 * is none, nobody waits for it: the adapter stores it already dispatched, in the same statement, and
 * the worker is not woken (most sends then cost no fan-out round and no second write of the event).
 */
export interface EventOutbox {
  readonly append: (workspaceId: string, events: ReadonlyArray<DomainEvent>) => Effect.Effect<void>
  /** Events of a workspace, oldest first (inspection and tests; delivery has its own claim API). */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<OutboxEvent>>
  /**
   * A workspace's events stored after `cursor`, oldest first, at most `limit`, and the cursor to
   * follow them with; a null cursor answers no events and the cursor of now (the console's live feed).
   */
  readonly after: (
    workspaceId: string,
    cursor: number | null,
    limit: number
  ) => Effect.Effect<{ readonly events: ReadonlyArray<OutboxEvent>; readonly cursor: number }>
}

export const EventOutbox = Context.GenericTag<EventOutbox>("core/EventOutbox")

/**
 * The `append` of an outbox adapter, given how it stores one workspace's events and answers whether
 * they wait for the worker (an endpoint is enabled in that workspace): each event gets its id and the
 * append time, and the worker hears of those that wait when the transaction commits.
 */
export const makeAppend = (
  signal: OutboxSignal,
  store: (workspaceId: string, events: ReadonlyArray<OutboxEvent>) => Effect.Effect<boolean>
): EventOutbox["append"] =>
(workspaceId, events) =>
  events.length === 0
    ? Effect.void
    : Effect.gen(function*() {
      const { uuid } = yield* Ids
      const createdAt = yield* nowIso
      const waiting = yield* store(
        workspaceId,
        events.map((e) => ({ id: uuid(), workspaceId, type: e.type, data: e.data, createdAt }))
      )
      if (waiting) yield* announceAppend(signal)
    })
