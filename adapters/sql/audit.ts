/**
 * AuditLog on SQL: rows of `audit_entries`, written in the caller's transaction. The detail is any
 * JSON value, so it is read as JSON text: the driver's parsed jsonb would leave a JSON string that
 * the row mapping (rows.ts) takes for JSON text and parses again.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { AuditLog, auditRecord } from "../../core/audit/store.ts"
import { auditEntries } from "./tables.ts"

export const layer = Layer.effect(
  AuditLog,
  Effect.map(SqlClient.SqlClient, (sql) =>
    AuditLog.of({
      append: (workspaceId, entry) =>
        Effect.tap(auditRecord(workspaceId, entry), (row) =>
          Effect.orDie(sql`INSERT INTO audit_entries ${sql.insert(auditEntries.row(row))}`)),
      list: (workspaceId) =>
        Effect.orDie(
          sql`SELECT workspace_id, id, actor, action, detail::text AS detail, created_at FROM audit_entries WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id DESC`
        ).pipe(
          Effect.map((rs) =>
            rs.map(auditEntries.decode)
          )
        )
    }))
)
