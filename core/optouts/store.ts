/** The opt-out list's port: one entry per workspace and phone. Adapters: adapters/{memory,sql}/optOuts.ts. */
import { Context, type Effect, type Option } from "effect"
import type { OptOutRecord } from "./model.ts"

export interface OptOutQuery {
  readonly workspaceId: string
  readonly phone: string | null
  readonly limit: number
  /** After this entry in the list's order (newest first: `createdAt`, then phone, descending). */
  readonly after: { readonly createdAt: string; readonly phone: string } | null
}

export interface OptOutStore {
  readonly get: (workspaceId: string, phone: string) => Effect.Effect<Option.Option<OptOutRecord>>
  /** Stores the opt-out; false, and nothing changed, when the phone is opted out already. */
  readonly insert: (record: OptOutRecord) => Effect.Effect<boolean>
  /** Removes the phone's opt-out; false when there was none. */
  readonly remove: (workspaceId: string, phone: string) => Effect.Effect<boolean>
  /** Newest first; at most `limit`. */
  readonly list: (query: OptOutQuery) => Effect.Effect<ReadonlyArray<OptOutRecord>>
}
export const OptOutStore = Context.GenericTag<OptOutStore>("core/OptOutStore")
