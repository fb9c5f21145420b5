/** The audit log port: what was done in a workspace and by whom (admin `audit-log` route). */
import { Context, Effect } from "effect"
import { Ids } from "../kernel/ids.ts"
import { nowIso } from "../kernel/time.ts"
import type { AuditEntry, AuditRecord } from "./log.ts"

export interface AuditLog {
  /** Records an entry of the workspace, in the caller's transaction. */
  readonly append: (workspaceId: string, entry: Omit<AuditEntry, "id" | "createdAt">) => Effect.Effect<AuditRecord>
  /** The workspace's entries, newest first (`createdAt`, then id). */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<AuditRecord>>
}
export const AuditLog = Context.GenericTag<AuditLog>("core/AuditLog")

/** The row an `append` writes, for every adapter alike. */
export const auditRecord = (
  workspaceId: string,
  entry: Omit<AuditEntry, "id" | "createdAt">
): Effect.Effect<AuditRecord> =>
  Effect.gen(function*() {
    const { uuid } = yield* Ids
    return {
      id: uuid(),
      workspaceId,
      actor: entry.actor,
      action: entry.action,
      detail: entry.detail,
      createdAt: yield* nowIso
    }
  })
