import { Context, Effect } from "effect"
import type { DomainEvent } from "./catalog.ts"

/** A stored event, waiting in the outbox for delivery. */
export interface OutboxEvent {
  readonly id: string
  readonly workspaceId: string
  readonly type: string
  readonly data: unknown
  readonly createdAt: string
}

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
