/**
 * EventOutbox on SQL: events are rows of `outbox_events`, written in the caller's transaction. The
 * same statement NOTIFYs OUTBOX_CHANNEL, which Postgres delivers only if the transaction commits
 * (once per transaction, however many inserts), so workers in other processes wake at once
 * (outboxNotices.ts), unless OutboxNotifies says no process needs telling.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { EventOutbox, makeAppend } from "../../core/events/outbox.ts"
import { OutboxSignal } from "../../core/events/signal.ts"
import { outboxEvents } from "./tables.ts"

export const OUTBOX_CHANNEL = "outbox_events"

/**
 * Whether commits NOTIFY other processes. A process that runs the webhook worker wakes it in-process
 * (OutboxSignal) and fans its own events out, so it turns this off: a NOTIFY costs every commit a
 * turn on Postgres's notification queue (one lock for all sessions) and every listener a message.
 * API-only replicas (WEBHOOK_WORKER=false) keep it on, so a worker elsewhere wakes at once.
 */
export class OutboxNotifies extends Context.Reference<OutboxNotifies>()("adapters/sql/OutboxNotifies", { defaultValue: () => true }) {}

export const layer = Layer.effect(
  EventOutbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const notifies = yield* OutboxNotifies
    return EventOutbox.of({
      append: makeAppend(yield* OutboxSignal, (events) =>
        Effect.orDie(
          notifies
            ? sql`WITH inserted AS (INSERT INTO outbox_events ${sql.insert(events.map(outboxEvents.row))})
                SELECT pg_notify(${OUTBOX_CHANNEL}, '1')`
            : sql`INSERT INTO outbox_events ${sql.insert(events.map(outboxEvents.row))}`
        )
      ),
      list: (workspaceId) =>
        Effect.orDie(sql`SELECT * FROM outbox_events WHERE workspace_id = ${workspaceId} ORDER BY seq`).pipe(Effect.map((rs) => rs.map(outboxEvents.decode)))
    })
  })
)
