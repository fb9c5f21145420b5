/** In-memory WorkspaceStore. */
import { Effect, Layer, Option } from "effect"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { MemoryDb, oldestFirst } from "./db.ts"

export const layer = Layer.effect(
  WorkspaceStore,
  Effect.map(MemoryDb, (db) =>
    WorkspaceStore.of({
      insert: (w) => Effect.sync(() => void db.state.workspaces.set(w.id, w)),
      get: (id) => Effect.sync(() => Option.fromNullable(db.state.workspaces.get(id))),
      update: (w) => Effect.sync(() => void db.state.workspaces.set(w.id, w)),
      count: Effect.sync(() => db.state.workspaces.size),
      list: Effect.sync(() => [...db.state.workspaces.values()].sort(oldestFirst))
    }))
)
