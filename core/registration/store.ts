/** The registration store port: one registration per workspace (core/registration/record.ts). */
import { Context, type Effect, type Option } from "effect"
import type { Registration } from "./record.ts"

/** Steps that wait on the registry: the poller asks it about these. */
export const awaitingSteps = ["brand_pending", "brand_ok", "campaign_pending"] as const

export interface RegistrationStore {
  readonly get: (workspaceId: string) => Effect.Effect<Option.Option<Registration>>
  /** Inserts or replaces the workspace's registration. */
  readonly put: (registration: Registration) => Effect.Effect<void>
  /** Workspaces whose registration is in one of `awaitingSteps`, least recently updated first, at most `limit`. */
  readonly awaitingRegistry: (limit: number) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Workspaces whose live registration is `campaign_active` and that have an active, ordered,
   * local number whose campaign assignment is not settled (never asked for, or `pending`), at most
   * `limit`: the poller assigns and follows these (core/registration/assignment.ts).
   */
  readonly awaitingAssignment: (limit: number) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Takes the registration's registry lease until `until` when it is free (never taken, released,
   * or run out before `now`): one process at a time talks to the registry about a workspace, with
   * no transaction open while it does. False when another holds it, or there is no registration.
   */
  readonly lease: (workspaceId: string, now: string, until: string) => Effect.Effect<boolean>
  readonly release: (workspaceId: string) => Effect.Effect<void>
  /** The workspace whose live (not mock) registration has this registry brand or campaign id. */
  readonly byRegistryId: (kind: "brand" | "campaign", id: string) => Effect.Effect<Option.Option<string>>
}
export const RegistrationStore = Context.GenericTag<RegistrationStore>("core/RegistrationStore")
