/** The members' port. Adapters: adapters/{memory,sql}/members.ts, kept alike by test/adapters/members.contract.test.ts. */
import { Context, type Effect, type Option } from "effect"
import type { MemberRecord } from "./model.ts"

export interface MemberStore {
  /** False, and nothing stored, when the email is already a member of that workspace. */
  readonly insert: (member: MemberRecord) => Effect.Effect<boolean>
  readonly get: (id: string) => Effect.Effect<Option.Option<MemberRecord>>
  /** The workspace's members, oldest first. */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<MemberRecord>>
  /** Every membership of an email (lower-cased), across workspaces, oldest first. */
  readonly findByEmail: (email: string) => Effect.Effect<ReadonlyArray<MemberRecord>>
  /** False when the changed email is already another member's in that workspace. */
  readonly update: (member: MemberRecord) => Effect.Effect<boolean>
  readonly remove: (id: string) => Effect.Effect<boolean>
}
export const MemberStore = Context.GenericTag<MemberStore>("core/MemberStore")
