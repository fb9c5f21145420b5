/** In-memory WorkspaceClock. */
import { Effect, Layer } from "effect"
import { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  WorkspaceClock,
  Effect.map(MemoryDb, (db) =>
    WorkspaceClock.of({
      offset: (workspaceId) => Effect.sync(() => db.state.clockOffsets.get(workspaceId) ?? 0),
      advance: (workspaceId, millis) =>
        Effect.sync(() => {
          const offset = (db.state.clockOffsets.get(workspaceId) ?? 0) + millis
          db.state.clockOffsets.set(workspaceId, offset)
          return offset
        })
    }))
)
