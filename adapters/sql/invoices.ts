/**
 * InvoiceStore on SQL: one `invoices` row per workspace and month (unique), so any number of
 * processes make each month's invoice once; an attempt is claimed by one UPDATE with SKIP LOCKED.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { InvoiceStore } from "../../core/billing/invoices.ts"
import { nowIso } from "../../core/kernel/time.ts"
import { invoices } from "./tables.ts"

const columns = invoices.columns()

export const layer = Layer.effect(
  InvoiceStore,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const one = (rows: ReadonlyArray<unknown>) => Option.map(Option.fromNullable(rows[0]), invoices.decode)
    return InvoiceStore.of({
      create: (invoice) =>
        Effect.orDie(
          Effect.flatMap(nowIso, (at) =>
            sql`INSERT INTO invoices ${
              sql.insert(invoices.row({ ...invoice, createdAt: at, updatedAt: at }))
            } ON CONFLICT (workspace_id, period_start) DO NOTHING RETURNING ${sql.literal(columns)}`)
        ).pipe(Effect.map(one)),
      unbilled: (now, limit) =>
        Effect.orDie(
          sql<{ id: string; offset_ms: string | number | bigint }>`
            SELECT w.id, coalesce(c.offset_ms, 0) AS offset_ms FROM workspaces w
            LEFT JOIN workspace_clocks c ON c.workspace_id = w.id
            -- The month the workspace's clock is in.
            CROSS JOIN LATERAL (SELECT date_trunc('month', (${new Date(now).toISOString()}::timestamptz
              + coalesce(c.offset_ms, 0) * interval '1 millisecond') AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start) m
            WHERE w.billing->>'plan' IS NOT NULL AND w.billing->>'billedVia' = 'card'
              AND w.billing->>'subscription' <> 'canceled'
              AND w.created_at < m.start
              AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.workspace_id = w.id AND i.period_start = m.start)
            ORDER BY w.id LIMIT ${limit}`
        ).pipe(Effect.map((rs) => rs.map((r) => ({ workspaceId: String(r.id), offsetMs: Number(r.offset_ms) })))),
      claim: (now, leaseUntil, limit) =>
        Effect.orDie(Effect.gen(function*() {
          const at = Number.isFinite(now) ? new Date(now).toISOString() : "infinity"
          const rows = yield* sql`
            UPDATE invoices i SET attempts = CASE WHEN i.charging THEN i.attempts ELSE i.attempts + 1 END,
              charging = true, lease_until = ${leaseUntil}::timestamptz
            FROM (
              SELECT i2.id FROM invoices i2 LEFT JOIN workspace_clocks c ON c.workspace_id = i2.workspace_id
              WHERE (i2.charging AND i2.lease_until < ${at}::timestamptz)
                OR (NOT i2.charging AND i2.status IN ('open', 'failed')
                  AND i2.next_attempt_at <= ${at}::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond')
              ORDER BY i2.period_start, i2.id LIMIT ${limit}
              FOR UPDATE OF i2 SKIP LOCKED
            ) due
            WHERE i.id = due.id
            RETURNING i.*`
          return rows.map((r) => {
            const invoice = invoices.decode(r)
            return { invoice, attempt: invoice.attempts }
          })
        })),
      settle: (workspaceId, invoiceId, attempt, outcome, at) =>
        Effect.orDie(
          sql`UPDATE invoices SET charging = false, lease_until = NULL, status = ${outcome._tag},
              next_attempt_at = ${outcome._tag === "failed" ? outcome.nextAttemptAt : null}::timestamptz,
              payment_id = ${outcome._tag === "paid" ? outcome.paymentId : null}, updated_at = ${at}
            WHERE workspace_id = ${workspaceId} AND id = ${invoiceId} AND charging AND attempts = ${attempt}
            RETURNING ${sql.literal(columns)}`
        ).pipe(Effect.map(one)),
      dueNow: (workspaceId, invoiceId, at) =>
        Effect.orDie(
          sql`UPDATE invoices SET next_attempt_at = ${at}, updated_at = ${at}
            WHERE workspace_id = ${workspaceId} AND id = ${invoiceId} AND status = 'failed' AND NOT charging
            RETURNING ${sql.literal(columns)}`
        ).pipe(Effect.map(one)),
      get: (workspaceId, invoiceId) =>
        Effect.orDie(
          sql`SELECT ${sql.literal(columns)} FROM invoices WHERE workspace_id = ${workspaceId} AND id = ${invoiceId}`
        ).pipe(Effect.map(one)),
      list: (workspaceId) =>
        Effect.orDie(
          sql`SELECT ${
            sql.literal(columns)
          } FROM invoices WHERE workspace_id = ${workspaceId} ORDER BY period_start DESC`
        ).pipe(Effect.map((rs) => rs.map(invoices.decode)))
    })
  })
)
