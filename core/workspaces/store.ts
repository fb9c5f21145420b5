import { Context, Effect, Option } from "effect"
import type { KeyKind } from "../auth/principal.ts"
import type { Scope } from "../auth/scopes.ts"
import type { Workspace } from "./model.ts"

export interface WorkspaceStore {
  readonly insert: (workspace: Workspace) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Option.Option<Workspace>>
  readonly update: (workspace: Workspace) => Effect.Effect<void>
  readonly count: Effect.Effect<number>
}
export const WorkspaceStore = Context.GenericTag<WorkspaceStore>("core/WorkspaceStore")

export interface ApiKeyRecord {
  readonly id: string
  readonly workspaceId: string
  readonly kind: KeyKind
  readonly scopes: ReadonlyArray<Scope>
  readonly name: string | null
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  readonly hash: string
  readonly createdAt: string
  readonly revokedAt: string | null
}

export interface ApiKeyStore {
  readonly insert: (key: ApiKeyRecord) => Effect.Effect<void>
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<ApiKeyRecord>>
  /** Returns the revoked key, or none when no such key exists. Revoking twice keeps the first time. */
  readonly revoke: (id: string, at: string) => Effect.Effect<Option.Option<ApiKeyRecord>>
}
export const ApiKeyStore = Context.GenericTag<ApiKeyStore>("core/ApiKeyStore")
