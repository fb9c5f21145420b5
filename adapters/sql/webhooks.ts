/**
 * WebhookStore on SQL. Claims use FOR UPDATE SKIP LOCKED, so several processes share the work.
 * Signing secrets are sealed on the way in and opened on the way out (secrets.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { DeliveryRecord, EndpointRecord } from "../../core/webhooks/model.ts"
import { WebhookStore } from "../../core/webhooks/store.ts"
import { iso, isoOrNull, json } from "./rows.ts"
import { endpointContext, type Sealer, SecretBox } from "./secrets.ts"

type Row = Record<string, unknown>

const endpointMapping = (sealer: Sealer) => {
  const toEndpoint = (r: Row): EndpointRecord => {
    const context = endpointContext(String(r.workspace_id), String(r.id))
    return {
      id: String(r.id),
      workspaceId: String(r.workspace_id),
      url: String(r.url),
      events: json(r.events),
      label: (r.label as string | null) ?? null,
      status: r.status as EndpointRecord["status"],
      apiVersion: (r.api_version as string | null) ?? null,
      createdAt: iso(r.created_at),
      secret: sealer.open(String(r.secret), context),
      previousSecrets: json<EndpointRecord["previousSecrets"]>(r.previous_secrets).map((p) => ({ ...p, secret: sealer.open(p.secret, context) })),
      failingSince: isoOrNull(r.failing_since)
    }
  }
  /** The secret columns of an endpoint as stored. */
  const sealed = (e: EndpointRecord) => {
    const context = endpointContext(e.workspaceId, e.id)
    return {
      secret: sealer.seal(e.secret, context),
      previousSecrets: JSON.stringify(e.previousSecrets.map((p) => ({ ...p, secret: sealer.seal(p.secret, context) })))
    }
  }
  return { toEndpoint, sealed }
}

const toDelivery = (r: Row): DeliveryRecord => ({
  id: String(r.id),
  workspaceId: String(r.workspace_id),
  endpointId: String(r.endpoint_id),
  eventId: String(r.event_id),
  eventType: String(r.event_type),
  payload: String(r.payload),
  status: r.status as DeliveryRecord["status"],
  attempts: Number(r.attempts),
  responseStatus: r.response_status === null || r.response_status === undefined ? null : Number(r.response_status),
  error: (r.error as string | null) ?? null,
  createdAt: iso(r.created_at),
  lastAttemptAt: isoOrNull(r.last_attempt_at),
  nextAttemptAt: isoOrNull(r.next_attempt_at)
})

export const layer = Layer.effect(
  WebhookStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { toEndpoint, sealed } = endpointMapping(yield* SecretBox)
    const die = Effect.orDie
    const one = <A>(f: (r: Row) => A) => (rs: ReadonlyArray<Row>) => Option.fromNullable(rs[0]).pipe(Option.map(f))

    return WebhookStore.of({
      insertEndpoint: (e) => {
        const { secret, previousSecrets } = sealed(e)
        return die(sql`INSERT INTO webhook_endpoints
          (workspace_id, id, url, events, label, status, api_version, secret, previous_secrets, failing_since, created_at)
          VALUES (${e.workspaceId}, ${e.id}, ${e.url}, ${JSON.stringify(e.events)}::jsonb, ${e.label}, ${e.status}, ${e.apiVersion},
                  ${secret}, ${previousSecrets}::jsonb, ${e.failingSince}::timestamptz, ${e.createdAt}::timestamptz)`)
      },
      getEndpoint: (ws, id) =>
        die(sql<Row>`SELECT * FROM webhook_endpoints WHERE workspace_id = ${ws} AND id = ${id}`).pipe(Effect.map(one(toEndpoint))),
      listEndpoints: (ws) =>
        die(sql<Row>`SELECT * FROM webhook_endpoints WHERE workspace_id = ${ws} ORDER BY created_at, id`).pipe(Effect.map((rs) => rs.map(toEndpoint))),
      updateEndpoint: (e) => {
        const { secret, previousSecrets } = sealed(e)
        return die(sql`UPDATE webhook_endpoints SET url = ${e.url}, events = ${JSON.stringify(e.events)}::jsonb, label = ${e.label},
          status = ${e.status}, api_version = ${e.apiVersion}, secret = ${secret},
          previous_secrets = ${previousSecrets}::jsonb, failing_since = ${e.failingSince}::timestamptz
          WHERE workspace_id = ${e.workspaceId} AND id = ${e.id}`)
      },
      deleteEndpoint: (ws, id) =>
        die(sql<Row>`DELETE FROM webhook_endpoints WHERE workspace_id = ${ws} AND id = ${id} RETURNING id`).pipe(Effect.map((rs) => rs.length > 0)),
      insertDeliveries: (ds) =>
        ds.length === 0
          ? Effect.void
          : die(sql`INSERT INTO webhook_deliveries ${sql.insert(
              ds.map((d) => ({
                workspace_id: d.workspaceId,
                id: d.id,
                endpoint_id: d.endpointId,
                event_id: d.eventId,
                event_type: d.eventType,
                payload: d.payload,
                status: d.status,
                attempts: d.attempts,
                response_status: d.responseStatus,
                error: d.error,
                created_at: d.createdAt,
                last_attempt_at: d.lastAttemptAt,
                next_attempt_at: d.nextAttemptAt
              }))
            )} ON CONFLICT (workspace_id, endpoint_id, event_id) DO NOTHING`),
      getDelivery: (ws, id) =>
        die(sql<Row>`SELECT * FROM webhook_deliveries WHERE workspace_id = ${ws} AND id = ${id}`).pipe(Effect.map(one(toDelivery))),
      listDeliveries: (ws, endpointId, limit) =>
        die(sql<Row>`SELECT * FROM webhook_deliveries WHERE workspace_id = ${ws} AND endpoint_id = ${endpointId}
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`).pipe(Effect.map((rs) => rs.map(toDelivery))),
      claimOutbox: (limit) =>
        die(sql<Row>`SELECT * FROM outbox_events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED`).pipe(
          Effect.map((rs) =>
            rs.map((r) => ({ id: String(r.id), workspaceId: String(r.workspace_id), type: String(r.type), data: json(r.data), createdAt: iso(r.created_at) }))
          )
        ),
      markDispatched: (ids, at) =>
        ids.length === 0 ? Effect.void : die(sql`UPDATE outbox_events SET dispatched_at = ${at}::timestamptz WHERE ${sql.in("id", ids)}`),
      enabledEndpoints: (wss) =>
        wss.length === 0
          ? Effect.succeed([])
          : die(sql<Row>`SELECT workspace_id, id, events FROM webhook_endpoints WHERE status = 'enabled' AND ${sql.in("workspace_id", wss)}`).pipe(
              Effect.map((rs) => rs.map((r) => ({ workspaceId: String(r.workspace_id), id: String(r.id), events: json<Array<string>>(r.events) })))
            ),
      claimDue: (now, leaseUntil, limit) =>
        Effect.gen(function* () {
          const rows = yield* sql<Row>`
            UPDATE webhook_deliveries d SET locked_until = ${leaseUntil}::timestamptz
            FROM (
              SELECT d2.workspace_id, d2.id FROM webhook_deliveries d2
              JOIN webhook_endpoints e ON e.workspace_id = d2.workspace_id AND e.id = d2.endpoint_id
              WHERE d2.status = 'pending' AND d2.next_attempt_at <= ${now}::timestamptz
                AND (d2.locked_until IS NULL OR d2.locked_until < ${now}::timestamptz) AND e.status = 'enabled'
              ORDER BY d2.next_attempt_at LIMIT ${limit}
              FOR UPDATE OF d2 SKIP LOCKED
            ) due
            WHERE d.workspace_id = due.workspace_id AND d.id = due.id
            RETURNING d.*`
          if (rows.length === 0) return []
          const endpoints = yield* sql<Row>`SELECT * FROM webhook_endpoints WHERE ${sql.in("id", [...new Set(rows.map((r) => String(r.endpoint_id)))])}`
          const byId = new Map<string, EndpointRecord>()
          for (const r of endpoints) {
            // An endpoint whose secret does not open (a row restored from elsewhere, a wrong key) holds
            // back only its own deliveries: logged here, claimed again when their lease ends.
            const opened = yield* Effect.try(() => toEndpoint(r)).pipe(
              Effect.tapError(() => Effect.logError("webhook endpoint secret cannot be opened; its deliveries wait", { workspaceId: r.workspace_id, endpointId: r.id })),
              Effect.option
            )
            if (Option.isSome(opened)) byId.set(`${r.workspace_id}/${r.id}`, opened.value)
          }
          return rows.flatMap((r) => {
            const endpoint = byId.get(`${r.workspace_id}/${r.endpoint_id}`)
            return endpoint ? [{ delivery: toDelivery(r), endpoint }] : []
          })
        }).pipe(die),
      // One statement (atomic on its own): the delivery's new state and the attempt history row.
      recordAttempt: (a) =>
        die(sql`
          WITH updated AS (
            UPDATE webhook_deliveries SET status = ${a.status}, attempts = ${a.attempts}, response_status = ${a.responseStatus},
              error = ${a.error}, last_attempt_at = ${a.lastAttemptAt}::timestamptz, next_attempt_at = ${a.nextAttemptAt}::timestamptz,
              locked_until = NULL
            WHERE workspace_id = ${a.workspaceId} AND id = ${a.deliveryId}
            RETURNING workspace_id, id
          )
          INSERT INTO webhook_attempts (workspace_id, delivery_id, attempted_at, response_status, error)
          SELECT workspace_id, id, ${a.lastAttemptAt}::timestamptz, ${a.responseStatus}::int, ${a.error} FROM updated`),
      setEndpointHealth: (ws, id, h) =>
        die(sql`UPDATE webhook_endpoints SET failing_since = ${h.failingSince}::timestamptz,
          status = CASE WHEN ${h.disable}::boolean THEN 'disabled' ELSE status END
          WHERE workspace_id = ${ws} AND id = ${id}`)
    })
  })
)
