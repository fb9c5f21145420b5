/** The operator's inputs to the workspace use cases (CONTRACT.md "Admin API"). */
import { Schema } from "effect"
import { NonEmptyText } from "../kernel/text.ts"
import { NumberType } from "../numbers/model.ts"
import { BillingPatch } from "./model.ts"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const CreateWorkspaceInput = Schema.Struct({
  name: NonEmptyText(200),
  billing: Schema.optional(BillingPatch)
}).annotations(strict)
export type CreateWorkspaceInput = typeof CreateWorkspaceInput.Type

/** `billing` is merged field by field into the current state. */
export const UpdateWorkspaceInput = Schema.Struct({
  name: Schema.optional(NonEmptyText(200)),
  billing: Schema.optional(BillingPatch)
}).annotations(strict)
export type UpdateWorkspaceInput = typeof UpdateWorkspaceInput.Type

/** The admin API's number seed (active, no charge, no carrier order); `type` only matters outside the US toll-free ranges. */
export const AddNumberInput = Schema.Struct({
  e164: Schema.String,
  type: Schema.optional(NumberType)
}).annotations(strict)
export type AddNumberInput = typeof AddNumberInput.Type
