/** In-memory EventOutbox. */
import { Effect, Layer } from "effect"
import { EventOutbox } from "../../core/events/outbox.ts"
import * as Signal from "../../core/events/signal.ts"
import { Ids } from "../../core/ids.ts"
import { nowIso } from "../../core/time.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  EventOutbox,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const signal = yield* Signal.OutboxSignal
    return EventOutbox.of({
      append: (workspaceId, events) =>
        Effect.gen(function* () {
          if (events.length === 0) return
          const { uuid } = yield* Ids
          const createdAt = yield* nowIso
          for (const e of events) db.state.outbox.push({ id: uuid(), workspaceId, type: e.type, data: e.data, createdAt })
          yield* Signal.announceAppend(signal)
        }),
      list: (workspaceId) => Effect.sync(() => db.state.outbox.filter((e) => e.workspaceId === workspaceId))
    })
  })
)
