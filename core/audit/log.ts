/** The workspace audit log: who did what, with a free-form JSON detail (CONTRACT.md "Admin API"). */
import { Schema } from "effect"
import { projection } from "../kernel/records.ts"

export const AuditRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  actor: Schema.String,
  action: Schema.String,
  detail: Schema.Unknown.annotations({ jsonSchema: { description: "any JSON value" } }),
  createdAt: Schema.String
})
export type AuditRecord = typeof AuditRecord.Type

/** The operator's view (`GET /v1/admin/workspaces/{id}/audit-log`). */
export const AuditEntry = AuditRecord.omit("workspaceId")
export type AuditEntry = typeof AuditEntry.Type
export const auditEntry = projection(AuditEntry)
