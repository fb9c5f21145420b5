/** EventOutbox on SQL: events are rows of `outbox_events`, in the caller's transaction. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { EventOutbox } from "../../core/events/outbox.ts"
import * as Signal from "../../core/events/signal.ts"
import { Ids } from "../../core/ids.ts"
import { nowIso } from "../../core/time.ts"
import { outboxEvents } from "./tables.ts"

export const layer = Layer.effect(
  EventOutbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const signal = yield* Signal.OutboxSignal
    return EventOutbox.of({
      append: (workspaceId, events) =>
        Effect.gen(function* () {
          if (events.length === 0) return
          const { uuid } = yield* Ids
          const createdAt = yield* nowIso
          yield* Effect.orDie(
            sql`INSERT INTO outbox_events ${sql.insert(events.map((e) => outboxEvents.row({ id: uuid(), workspaceId, type: e.type, data: e.data, createdAt })))}`
          )
          yield* Signal.announceAppend(signal)
        }),
      list: (workspaceId) =>
        Effect.orDie(sql`SELECT * FROM outbox_events WHERE workspace_id = ${workspaceId} ORDER BY seq`).pipe(Effect.map((rs) => rs.map(outboxEvents.decode)))
    })
  })
)
