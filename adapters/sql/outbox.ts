/**
 * EventOutbox on SQL: events are rows of `outbox_events`, written in the caller's transaction. The
 * same statement NOTIFYs OUTBOX_CHANNEL, which Postgres delivers only if the transaction commits
 * (once per transaction, however many inserts), so workers in other processes wake at once
 * (outboxNotices.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { EventOutbox, makeAppend } from "../../core/events/outbox.ts"
import { OutboxSignal } from "../../core/events/signal.ts"
import { outboxEvents } from "./tables.ts"

export const OUTBOX_CHANNEL = "outbox_events"

export const layer = Layer.effect(
  EventOutbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return EventOutbox.of({
      append: makeAppend(yield* OutboxSignal, (events) =>
        Effect.orDie(sql`WITH inserted AS (INSERT INTO outbox_events ${sql.insert(events.map(outboxEvents.row))})
          SELECT pg_notify(${OUTBOX_CHANNEL}, '1')`)
      ),
      list: (workspaceId) =>
        Effect.orDie(sql`SELECT * FROM outbox_events WHERE workspace_id = ${workspaceId} ORDER BY seq`).pipe(Effect.map((rs) => rs.map(outboxEvents.decode)))
    })
  })
)
