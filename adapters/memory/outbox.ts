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
      list: (workspaceId) => Effect.sync(() => db.state.outbox.filter((e) => e.workspaceId === workspaceId)),
      // The cursor is a position in the outbox, which only grows.
      after: (workspaceId, cursor, limit) =>
        Effect.sync(() => {
          const all = db.state.outbox
          if (cursor === null) return { events: [], cursor: all.length }
          const events = []
          let next = cursor
          for (let i = cursor; i < all.length && events.length < limit; i++) {
            next = i + 1
            if (all[i]!.workspaceId === workspaceId) events.push(all[i]!)
          }
          return { events, cursor: next }
        })
    })
  })
)
