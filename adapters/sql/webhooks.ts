/**
 * WebhookStore on SQL. Claims use FOR UPDATE SKIP LOCKED, so several processes share the work.
 * Signing secrets are sealed on the way in and opened on the way out (secrets.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { EndpointRecord } from "../../core/webhooks/model.ts"
import { type AttemptRecord, WebhookStore } from "../../core/webhooks/store.ts"
import { endpointContext, type Sealer, SecretBox } from "./secrets.ts"
import { endpointSubscriptions, outboxEvents, webhookDeliveries, webhookEndpoints } from "./tables.ts"

/** Endpoint rows hold sealed secrets: opened on the way out, sealed on the way in. */
const endpointMapping = (sealer: Sealer) => {
  const toEndpoint = (r: unknown): EndpointRecord => {
    const e = webhookEndpoints.decode(r)
    const context = endpointContext(e.workspaceId, e.id)
    return {
      ...e,
      secret: sealer.open(e.secret, context),
      previousSecrets: e.previousSecrets.map((p) => ({ ...p, secret: sealer.open(p.secret, context) }))
    }
  }
  /** The endpoint's columns as stored. */
  const toRow = (e: EndpointRecord): Record<string, unknown> => {
    const context = endpointContext(e.workspaceId, e.id)
    return webhookEndpoints.row({
      ...e,
      secret: sealer.seal(e.secret, context),
      previousSecrets: e.previousSecrets.map((p) => ({ ...p, secret: sealer.seal(p.secret, context) }))
    })
  }
  return { toEndpoint, toRow }
}

const attemptRow = (a: AttemptRecord) => ({
  workspace_id: a.workspaceId,
  id: a.deliveryId,
  status: a.status,
  attempts: a.attempts,
  response_status: a.responseStatus,
  error: a.error,
  last_attempt_at: a.lastAttemptAt,
  next_attempt_at: a.nextAttemptAt
})

export const layer = Layer.effect(
  WebhookStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { toEndpoint, toRow } = endpointMapping(yield* SecretBox)
    const die = Effect.orDie
    const one = <A>(f: (r: unknown) => A) => (rs: ReadonlyArray<unknown>) =>
      Option.fromNullable(rs[0]).pipe(Option.map(f))

    // One statement (atomic on its own) for any number of attempts: each delivery's new state and its
    // attempt history row. The attempts travel as one JSON parameter, typed by jsonb_to_recordset.
    const recordAttempts = (as: ReadonlyArray<AttemptRecord>) =>
      as.length === 0
        ? Effect.void
        : die(sql`
          WITH a AS (
            SELECT * FROM jsonb_to_recordset(${
          JSON.stringify(as.map(attemptRow))
        }::jsonb) AS a(workspace_id uuid, id uuid, status text,
              attempts int, response_status int, error text, last_attempt_at timestamptz, next_attempt_at timestamptz)
          ), updated AS (
            UPDATE webhook_deliveries d SET status = a.status, attempts = a.attempts, response_status = a.response_status,
              error = a.error, last_attempt_at = a.last_attempt_at, next_attempt_at = a.next_attempt_at, locked_until = NULL
            FROM a WHERE d.workspace_id = a.workspace_id AND d.id = a.id
              -- Only the attempt the delivery was claimed for: a late record never moves it back.
              AND d.status = 'pending' AND d.attempts = a.attempts - 1
            RETURNING d.workspace_id, d.id, a.last_attempt_at, a.response_status, a.error
          )
          INSERT INTO webhook_attempts (workspace_id, delivery_id, attempted_at, response_status, error)
          SELECT workspace_id, id, last_attempt_at, response_status, error FROM updated`)

    return WebhookStore.of({
      insertEndpoint: (e) => die(sql`INSERT INTO webhook_endpoints ${sql.insert(toRow(e))}`),
      getEndpoint: (ws, id) =>
        die(sql`SELECT * FROM webhook_endpoints WHERE workspace_id = ${ws} AND id = ${id}`).pipe(
          Effect.map(one(toEndpoint))
        ),
      listEndpoints: (ws) =>
        die(sql`SELECT * FROM webhook_endpoints WHERE workspace_id = ${ws} ORDER BY created_at, id`).pipe(
          Effect.map((rs) => rs.map(toEndpoint))
        ),
      updateEndpoint: (e) =>
        die(sql`UPDATE webhook_endpoints SET ${sql.update(toRow(e), ["workspace_id", "id", "created_at"])}
          WHERE workspace_id = ${e.workspaceId} AND id = ${e.id}`),
      deleteEndpoint: (ws, id) =>
        die(sql`DELETE FROM webhook_endpoints WHERE workspace_id = ${ws} AND id = ${id} RETURNING id`).pipe(
          Effect.map((rs) => rs.length > 0)
        ),
      insertDeliveries: (ds) =>
        ds.length === 0
          ? Effect.void
          : die(
            sql`INSERT INTO webhook_deliveries ${
              sql.insert(ds.map(webhookDeliveries.row))
            } ON CONFLICT (workspace_id, endpoint_id, event_id) DO NOTHING`
          ),
      getDelivery: (ws, id) =>
        die(sql`SELECT * FROM webhook_deliveries WHERE workspace_id = ${ws} AND id = ${id}`).pipe(
          Effect.map(one(webhookDeliveries.decode))
        ),
      listDeliveries: (ws, endpointId, limit) =>
        die(sql`SELECT * FROM webhook_deliveries WHERE workspace_id = ${ws} AND endpoint_id = ${endpointId}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`).pipe(Effect.map((rs) => rs.map(webhookDeliveries.decode))),
      leaseDelivery: (ws, endpointId, id, { leaseUntil, now }) =>
        die(sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${now}::timestamptz,
            locked_until = ${leaseUntil}::timestamptz
          WHERE workspace_id = ${ws} AND id = ${id} AND endpoint_id = ${endpointId}
            AND (locked_until IS NULL OR locked_until < ${now}::timestamptz)
          RETURNING *`).pipe(Effect.map(one(webhookDeliveries.decode))),
      // `status IN ('failed', 'pending')` as the partial index webhook_deliveries_unsettled states it
      // (migration 0028), so the scan reads the endpoint's unsettled deliveries, never its history.
      requeueFailed: (ws, endpointId, { limit, now, since, types }) =>
        types.length === 0 ? Effect.succeed(0) : die(sql<{ n: number }>`
          WITH queued AS (
            UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = ${now}::timestamptz
            FROM (
              SELECT workspace_id, id FROM webhook_deliveries
              WHERE workspace_id = ${ws} AND endpoint_id = ${endpointId} AND created_at >= ${since}::timestamptz
                AND status IN ('failed', 'pending')
                AND (status = 'failed' OR (attempts > 0 AND next_attempt_at > ${now}::timestamptz))
                AND (locked_until IS NULL OR locked_until < ${now}::timestamptz)
                AND ${sql.in("event_type", types)}
              ORDER BY created_at LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ) due
            WHERE d.workspace_id = due.workspace_id AND d.id = due.id
            RETURNING 1
          )
          SELECT count(*)::int AS n FROM queued`).pipe(Effect.map(([r]) => r?.n ?? 0)),
      claimOutbox: (limit) =>
        die(
          sql`SELECT * FROM outbox_events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED`
        ).pipe(
          Effect.map((rs) => rs.map(outboxEvents.decode))
        ),
      markDispatched: (ids, at) =>
        ids.length === 0
          ? Effect.void
          : die(sql`UPDATE outbox_events SET dispatched_at = ${at}::timestamptz WHERE ${sql.in("id", ids)}`),
      enabledEndpoints: (wss) =>
        wss.length === 0
          ? Effect.succeed([])
          : die(
            sql`SELECT ${
              sql.literal(endpointSubscriptions.columns())
            } FROM webhook_endpoints WHERE status = 'enabled' AND ${sql.in("workspace_id", wss)}`
          ).pipe(
            Effect.map((rs) => rs.map(endpointSubscriptions.decode))
          ),
      claimDue: (now, leaseUntil, limit) =>
        Effect.gen(function*() {
          const rows = yield* sql`
            UPDATE webhook_deliveries d SET locked_until = ${leaseUntil}::timestamptz
            FROM (
              SELECT d2.workspace_id, d2.id FROM webhook_deliveries d2
              JOIN webhook_endpoints e ON e.workspace_id = d2.workspace_id AND e.id = d2.endpoint_id
              LEFT JOIN workspace_clocks c ON c.workspace_id = d2.workspace_id
              -- A retry comes due on its workspace's clock (the clock test helper moves it forward).
              WHERE d2.status = 'pending' AND d2.next_attempt_at <= ${now}::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
                AND (d2.locked_until IS NULL OR d2.locked_until < ${now}::timestamptz) AND e.status = 'enabled'
              ORDER BY d2.next_attempt_at LIMIT ${limit}
              FOR UPDATE OF d2 SKIP LOCKED
            ) due
            WHERE d.workspace_id = due.workspace_id AND d.id = due.id
            RETURNING d.*`
          if (rows.length === 0) return []
          const endpoints = yield* sql`SELECT * FROM webhook_endpoints WHERE ${
            sql.in("id", [...new Set(rows.map((r) => String(r.endpoint_id)))])
          }`
          const byId = new Map<string, EndpointRecord>()
          for (const r of endpoints) {
            // An endpoint whose secret does not open (a row restored from elsewhere, a wrong key) holds
            // back only its own deliveries: logged here, claimed again when their lease ends.
            const opened = yield* Effect.try(() => toEndpoint(r)).pipe(
              Effect.tapError(() =>
                Effect.logError("webhook endpoint secret cannot be opened; its deliveries wait", {
                  workspaceId: r.workspace_id,
                  endpointId: r.id
                })
              ),
              Effect.option
            )
            if (Option.isSome(opened)) byId.set(`${r.workspace_id}/${r.id}`, opened.value)
          }
          return rows.flatMap((r) => {
            const endpoint = byId.get(`${r.workspace_id}/${r.endpoint_id}`)
            return endpoint ? [{ delivery: webhookDeliveries.decode(r), endpoint }] : []
          })
        }).pipe(die),
      // Only pending deliveries hold leases (recording ends them): the partial index of the queue, not the history.
      releaseLeases: () =>
        die(sql`UPDATE webhook_deliveries SET locked_until = NULL
          WHERE status = 'pending' AND locked_until IS NOT NULL RETURNING id`).pipe(
          Effect.map((rs) => rs.length)
        ),
      // Over the partial index of pending deliveries (webhook_deliveries_due): the queue, not the history.
      pendingDeliveries: () =>
        die(
          sql<
            { count: number; oldest: string | null }
          >`SELECT count(*)::int AS count, to_char(min(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS oldest
          FROM webhook_deliveries WHERE status = 'pending'`
        ).pipe(Effect.map(([r]) => ({ count: r?.count ?? 0, oldestCreatedAt: r?.oldest ?? null }))),
      recordAttempts,
      setEndpointHealth: (ws, id, h) =>
        die(sql`UPDATE webhook_endpoints SET failing_since = ${h.failingSince}::timestamptz,
          status = CASE WHEN ${h.disable}::boolean THEN 'disabled' ELSE status END
          WHERE workspace_id = ${ws} AND id = ${id}`)
    })
  })
)
