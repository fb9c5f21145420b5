/**
 * Workspace phone numbers (SPEC "Workspace number"): bought through `POST /numbers` (service.ts), or
 * seeded by the admin API, active and with no charge (workspaces/service.ts `addNumber`).
 */
import { Context, Effect, type Option, Schema } from "effect"
import { FailedPrecondition } from "../kernel/errors.ts"
import { E164 } from "../kernel/phone.ts"

export const NumberType = Schema.Literal("local", "toll_free")
export type NumberType = typeof NumberType.Type
export const VoiceMode = Schema.Literal("agent", "app", "voicemail", "forward")

export const WorkspaceNumber = Schema.Struct({
  e164: E164,
  type: NumberType,
  voiceMode: VoiceMode,
  agentId: Schema.NullOr(Schema.UUID),
  forwardTo: Schema.NullOr(Schema.String),
  assignedUserId: Schema.NullOr(Schema.String),
  status: Schema.String
})
export type WorkspaceNumber = typeof WorkspaceNumber.Type

/** A +1 8xx number is toll-free whatever the caller says (SPEC "POST /numbers"). */
export const numberTypeOf = (e164: string): "local" | "toll_free" =>
  /^\+18(00|33|44|55|66|77|88)\d{7}$/.test(e164) ? "toll_free" : "local"

/**
 * Where a local number's assignment to the workspace's live 10DLC campaign stands
 * (core/registration/assignment.ts): asked for and not confirmed yet, done, or refused by the
 * registry. Null: never asked for (no live campaign yet, a test number, a toll-free line).
 */
export const CampaignAssignment = Schema.Literal("pending", "assigned", "failed")
export type CampaignAssignment = typeof CampaignAssignment.Type

/** A stored number: whose it is, and its inbox. */
export const NumberRecord = Schema.Struct({
  workspaceId: Schema.UUID,
  /** Each number has its own inbox; threads on it carry this id. */
  inboxId: Schema.UUID,
  /** Ordered at the carrier: false for a number added with a test key, which live keys cannot use. */
  ordered: Schema.Boolean,
  campaignAssignment: Schema.NullOr(CampaignAssignment),
  number: WorkspaceNumber
})
export type NumberRecord = typeof NumberRecord.Type

/**
 * What traffic goes out from when the caller names no number: a local number first; for live
 * traffic, a number ordered at the carrier first. Undefined when there is no active number.
 */
export const defaultNumber = (active: ReadonlyArray<NumberRecord>, live: boolean): NumberRecord | undefined => {
  const usable = live && active.some((n) => n.ordered) ? active.filter((n) => n.ordered) : active
  return usable.find((n) => n.number.type === "local") ?? usable[0]
}

/** Live traffic (a live key's send or call) from a number added with a test key: refused. */
export const notOrdered = (e164: string) =>
  new FailedPrecondition({
    message: `${e164} was added with a test key and is not ordered at the carrier; buy it with a live key`
  })

/** Who answers a number's inbound calls (SPEC "Number `voiceMode`"). */
export type NumberRouting = Pick<WorkspaceNumber, "voiceMode" | "agentId" | "forwardTo">

export interface NumberStore {
  /** Fails with `taken` when the number already belongs to a workspace. `ordered` unless added with a test key. */
  readonly insert: (
    workspaceId: string,
    number: WorkspaceNumber,
    inboxId: string,
    ordered?: boolean
  ) => Effect.Effect<void, "taken">
  /** Oldest first. */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<WorkspaceNumber>>
  /** The workspace's active numbers with their inboxes, oldest first: what a message can go out from. */
  readonly listActive: (workspaceId: string) => Effect.Effect<ReadonlyArray<NumberRecord>>
  /** The workspace a number belongs to; inbound traffic is routed with it. */
  readonly findByE164: (e164: string) => Effect.Effect<Option.Option<NumberRecord>>
  /** Sets the routing of one of the workspace's numbers; none when the workspace has no such number. */
  readonly setRouting: (
    workspaceId: string,
    e164: string,
    routing: NumberRouting
  ) => Effect.Effect<Option.Option<WorkspaceNumber>>
  /** Which of these numbers belong to some workspace, any workspace: the carrier simulator hides them. */
  readonly taken: (e164s: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
  /** A test number of the workspace bought with a live key: ordered from now on; false when there was none to mark. */
  readonly markOrdered: (workspaceId: string, e164: string) => Effect.Effect<boolean>
  /** Records where the number's campaign assignment stands (numbers are unique across workspaces). */
  readonly setCampaignAssignment: (e164: string, assignment: CampaignAssignment | null) => Effect.Effect<void>
  /** Removes one of the workspace's numbers; none when the workspace has no such number. Its conversations stay. */
  readonly remove: (workspaceId: string, e164: string) => Effect.Effect<Option.Option<WorkspaceNumber>>
}
export const NumberStore = Context.GenericTag<NumberStore>("core/NumberStore")
