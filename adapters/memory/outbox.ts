/** In-memory EventOutbox. */
import { Effect, Layer } from "effect"
import { EventOutbox, makeAppend } from "../../core/events/outbox.ts"
import { OutboxSignal } from "../../core/events/signal.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  EventOutbox,
  Effect.gen(function*() {
    const db = yield* MemoryDb
    return EventOutbox.of({
      append: makeAppend(yield* OutboxSignal, (workspaceId, events) =>
        Effect.sync(() => {
          db.state.outbox.push(...events)
          for (const e of db.state.endpoints.values()) {
            if (e.workspaceId === workspaceId && e.status === "enabled") return true
          }
          for (const e of events) db.state.dispatched.add(e.id)
          return false
        })),
      list: (workspaceId) => Effect.sync(() => db.state.outbox.filter((e) => e.workspaceId === workspaceId))
    })
  })
)
