/**
 * EventOutbox on SQL: events are rows of `outbox_events`, written in the caller's transaction. When
 * they wait for the worker, the same statement NOTIFYs OUTBOX_CHANNEL, which Postgres delivers only
 * if the transaction commits (once per transaction, however many inserts), so workers in other
 * processes wake at once (outboxNotices.ts), unless OutboxNotifies says no process needs telling.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { EventOutbox, makeAppend } from "../../core/events/outbox.ts"
import { OutboxSignal } from "../../core/events/signal.ts"
import { PREPARED } from "./prepared.ts"
import { outboxEvents } from "./tables.ts"

export const OUTBOX_CHANNEL = "outbox_events"

/**
 * Whether commits NOTIFY other processes. A process that runs the webhook worker wakes it in-process
 * (OutboxSignal) and fans its own events out, so it turns this off: a NOTIFY costs every commit a
 * turn on Postgres's notification queue (one lock for all sessions) and every listener a message.
 * API-only replicas (WEBHOOK_WORKER=false) keep it on, so a worker elsewhere wakes at once.
 */
export class OutboxNotifies
  extends Context.Reference<OutboxNotifies>()("adapters/sql/OutboxNotifies", { defaultValue: () => true })
{}

export const layer = Layer.effect(
  EventOutbox,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const notifies = yield* OutboxNotifies
    return EventOutbox.of({
      // One statement: whether the workspace has an enabled endpoint, and the events, stored already
      // dispatched when it has none. The rows travel as one jsonb array (jsonb columns as JSON values).
      // `silent` (true when no NOTIFY was sent) is selected only for the NOTIFY's side effect, as a
      // boolean rather than pg_notify's void.
      append: makeAppend(yield* OutboxSignal, (workspaceId, events) => {
        const rows = JSON.stringify(events.map((e) => ({ ...outboxEvents.row(e), data: e.data })))
        return sql<{ readonly waiting: boolean }>`${sql.literal(PREPARED)}
          WITH listening AS (
            SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = ${workspaceId} AND status = 'enabled') AS waiting
          ), inserted AS (
            INSERT INTO outbox_events (id, workspace_id, type, data, created_at, dispatched_at)
            SELECT e.id, e.workspace_id, e.type, e.data, e.created_at, CASE WHEN l.waiting THEN NULL ELSE e.created_at END
            FROM jsonb_populate_recordset(NULL::outbox_events, ${rows}::jsonb) WITH ORDINALITY e CROSS JOIN listening l
            ORDER BY e.ordinality -- seq in the order the events were given
          )
          SELECT waiting${
          notifies ? sql`, (SELECT pg_notify(${OUTBOX_CHANNEL}, '1') WHERE waiting) IS NULL AS silent` : sql``
        } FROM listening`.pipe(
          Effect.orDie,
          Effect.map((rs) => rs[0]!.waiting)
        )
      }),
      list: (workspaceId) =>
        Effect.orDie(sql`SELECT * FROM outbox_events WHERE workspace_id = ${workspaceId} ORDER BY seq`).pipe(
          Effect.map((rs) => rs.map(outboxEvents.decode))
        ),
      after: (workspaceId, cursor, limit) =>
        cursor === null
          ? Effect.orDie(
            sql<
              { seq: string | null }
            >`SELECT max(seq)::text AS seq FROM outbox_events WHERE workspace_id = ${workspaceId}`
          ).pipe(
            Effect.map((rs) => ({ events: [], cursor: Number(rs[0]?.seq ?? 0) }))
          )
          : Effect.orDie(
            sql<{ seq: string }>`SELECT *, seq::text AS seq FROM outbox_events
              WHERE workspace_id = ${workspaceId} AND seq > ${cursor} ORDER BY seq LIMIT ${limit}`
          ).pipe(Effect.map((rs) => ({
            events: rs.map(outboxEvents.decode),
            cursor: rs.length === 0 ? cursor : Number(rs[rs.length - 1]!.seq)
          })))
    })
  })
)
