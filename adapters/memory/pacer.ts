/** In-memory Pacer: the SQL pacer's booking over the shared state. */
import { Effect, Layer, Option } from "effect"
import { book, Pacer, spacingMs } from "../../core/pacing/pacer.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  Pacer,
  Effect.map(MemoryDb, (db) =>
    Pacer.of({
      reserve: (workspaceId, segments, perMinute, now, horizonMs) =>
        Effect.sync(() => {
          const booked = book(db.state.pace.get(workspaceId) ?? null, now, spacingMs(segments, perMinute), horizonMs)
          if (booked === null) return Option.none()
          db.state.pace.set(workspaceId, booked.next)
          return Option.some(booked.start)
        })
    }))
)
