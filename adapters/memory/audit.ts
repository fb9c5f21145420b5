/** In-memory AuditLog. */
import { Effect, Layer } from "effect"
import { AuditLog, auditRecord } from "../../core/audit/store.ts"
import { MemoryDb, newestFirst } from "./db.ts"

export const layer = Layer.effect(
  AuditLog,
  Effect.map(MemoryDb, (db) =>
    AuditLog.of({
      append: (workspaceId, entry) =>
        Effect.tap(auditRecord(workspaceId, entry), (row) => Effect.sync(() => void db.state.audit.push(row))),
      list: (workspaceId) =>
        Effect.sync(() => db.state.audit.filter((e) => e.workspaceId === workspaceId).sort(newestFirst))
    }))
)
