import { Context, Effect, Schema } from "effect"
import type { DomainEvent } from "./catalog.ts"

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
 */
export interface EventOutbox {
  readonly append: (workspaceId: string, events: ReadonlyArray<DomainEvent>) => Effect.Effect<void>
  /** Events of a workspace, oldest first (inspection and tests; delivery has its own claim API). */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<OutboxEvent>>
}

export const EventOutbox = Context.GenericTag<EventOutbox>("core/EventOutbox")
