import { Context, Effect, Option } from "effect"
import type { ApiKeyRecord, Workspace } from "./model.ts"

export type { ApiKeyRecord } from "./model.ts"

export interface WorkspaceStore {
  readonly insert: (workspace: Workspace) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Option.Option<Workspace>>
  readonly update: (workspace: Workspace) => Effect.Effect<void>
  readonly count: Effect.Effect<number>
  /** Oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<Workspace>>
}
export const WorkspaceStore = Context.GenericTag<WorkspaceStore>("core/WorkspaceStore")

export interface ApiKeyStore {
  readonly insert: (key: ApiKeyRecord) => Effect.Effect<void>
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<ApiKeyRecord>>
  /**
   * Returns the revoked key, or none when no such key exists. Revoking twice keeps the first time.
   * A store shared by several processes tells them all, so they drop the key from their caches.
   */
  readonly revoke: (id: string, at: string) => Effect.Effect<Option.Option<ApiKeyRecord>>
  readonly get: (id: string) => Effect.Effect<Option.Option<ApiKeyRecord>>
  /** The workspace's keys, revoked ones included, oldest first. */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<ApiKeyRecord>>
}
export const ApiKeyStore = Context.GenericTag<ApiKeyStore>("core/ApiKeyStore")
