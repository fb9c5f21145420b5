/** PendingChargeStore on SQL: `pending_charges`, one in flight per workspace and purpose (a partial unique index). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { PendingChargeStore } from "../../core/billing/pending.ts"
import { pendingCharges } from "./tables.ts"

const columns = pendingCharges.columns()

export const layer = Layer.effect(
  PendingChargeStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    PendingChargeStore.of({
      reserve: (record) =>
        Effect.orDie(
          sql`INSERT INTO pending_charges ${sql.insert(pendingCharges.row(record))}
            ON CONFLICT (workspace_id, purpose) WHERE state IN ('pending', 'refunding') DO NOTHING RETURNING id`
        ).pipe(Effect.map((rs) => rs.length === 1)),
      move: (workspaceId, id, from, to, paymentId, at) =>
        Effect.orDie(
          sql`UPDATE pending_charges SET state = ${to}, payment_id = coalesce(${paymentId}, payment_id), updated_at = ${at}
            WHERE workspace_id = ${workspaceId} AND id = ${id} AND state = ${from} RETURNING id`
        ).pipe(Effect.map((rs) => rs.length === 1)),
      claimExpired: (now, leaseUntil, limit, workspaceId) =>
        Effect.orDie(
          sql`UPDATE pending_charges p SET lease_until = ${leaseUntil}::timestamptz
            FROM (
              SELECT id FROM pending_charges WHERE state IN ('pending', 'refunding') AND lease_until < ${now}::timestamptz
                ${workspaceId === null ? sql`` : sql`AND workspace_id = ${workspaceId}`}
              ORDER BY lease_until LIMIT ${limit} FOR UPDATE SKIP LOCKED
            ) due
            WHERE p.id = due.id RETURNING p.*`
        ).pipe(Effect.map((rs) => rs.map(pendingCharges.decode))),
      pending: (workspaceId, prefix) =>
        Effect.orDie(
          sql`SELECT ${sql.literal(columns)} FROM pending_charges WHERE workspace_id = ${workspaceId}
            AND state IN ('pending', 'refunding') AND starts_with(purpose, ${prefix})`
        ).pipe(Effect.map((rs) => rs.map(pendingCharges.decode)))
    }))
)
