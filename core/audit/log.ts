/** The workspace audit log: who did what, with a free-form JSON detail (CONTRACT.md "Admin API"). */
import { Schema } from "effect"

export const AuditEntry = Schema.Struct({
  id: Schema.String,
  actor: Schema.String,
  action: Schema.String,
  detail: Schema.Unknown.annotations({ jsonSchema: { description: "any JSON value" } }),
  createdAt: Schema.String
})
export type AuditEntry = typeof AuditEntry.Type
