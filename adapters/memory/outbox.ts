/** In-memory EventOutbox. */
import { Effect, Layer } from "effect"
import { EventOutbox, makeAppend } from "../../core/events/outbox.ts"
import { OutboxSignal } from "../../core/events/signal.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  EventOutbox,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    return EventOutbox.of({
      append: makeAppend(yield* OutboxSignal, (events) => Effect.sync(() => void db.state.outbox.push(...events))),
      list: (workspaceId) => Effect.sync(() => db.state.outbox.filter((e) => e.workspaceId === workspaceId))
    })
  })
)
