/** The operator's inputs to the workspace use cases (CONTRACT.md "Admin API"). */
import { Schema } from "effect"
import { NonEmptyText } from "../kernel/text.ts"
import { NumberType } from "../numbers/model.ts"
import { BillingPatch, QuietHoursSetting } from "./model.ts"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const CreateWorkspaceInput = Schema.Struct({
  name: NonEmptyText(200),
  billing: Schema.optional(BillingPatch)
}).annotations(strict)
export type CreateWorkspaceInput = typeof CreateWorkspaceInput.Type

/** `billing` is merged field by field into the current state. */
export const UpdateWorkspaceInput = Schema.Struct({
  name: Schema.optional(NonEmptyText(200)),
  billing: Schema.optional(BillingPatch),
  /** Up to AT&T's best-vetted campaign's 4,500 a minute. */
  textingSegmentsPerMinute: Schema.optional(Schema.Int.pipe(Schema.between(1, 4500))),
  quietHours: Schema.optional(Schema.NullOr(QuietHoursSetting))
}).annotations(strict)
export type UpdateWorkspaceInput = typeof UpdateWorkspaceInput.Type

/** The admin API's number seed (active, no charge, no carrier order); `type` only matters outside the US toll-free ranges. */
export const AddNumberInput = Schema.Struct({
  e164: Schema.String,
  type: Schema.optional(NumberType)
}).annotations(strict)
export type AddNumberInput = typeof AddNumberInput.Type
