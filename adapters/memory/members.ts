/** In-memory MemberStore. */
import { Effect, Layer, Option } from "effect"
import { MemberStore } from "../../core/members/store.ts"
import { MemoryDb, oldestFirst } from "./db.ts"

export const layer = Layer.effect(
  MemberStore,
  Effect.map(MemoryDb, (db) => {
    const taken = (m: { workspaceId: string; email: string; id: string }) =>
      [...db.state.members.values()].some((o) =>
        o.workspaceId === m.workspaceId && o.email === m.email && o.id !== m.id
      )
    return MemberStore.of({
      insert: (m) =>
        Effect.sync(() => {
          if (taken(m)) return false
          db.state.members.set(m.id, m)
          return true
        }),
      get: (id) => Effect.sync(() => Option.fromNullable(db.state.members.get(id))),
      list: (workspaceId) =>
        Effect.sync(() =>
          [...db.state.members.values()].filter((m) => m.workspaceId === workspaceId).sort(oldestFirst)
        ),
      findByEmail: (email) =>
        Effect.sync(() => [...db.state.members.values()].filter((m) => m.email === email).sort(oldestFirst)),
      update: (m) =>
        Effect.sync(() => {
          if (!db.state.members.has(m.id) || taken(m)) return false
          db.state.members.set(m.id, m)
          return true
        }),
      remove: (id) => Effect.sync(() => db.state.members.delete(id))
    })
  })
)
