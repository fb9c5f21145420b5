/** In-memory ApiKeyStore. */
import { Effect, Layer, Option } from "effect"
import { ApiKeyStore } from "../../core/workspaces/store.ts"
import { MemoryDb, oldestFirst } from "./db.ts"

export const layer = Layer.effect(
  ApiKeyStore,
  Effect.map(MemoryDb, (db) =>
    ApiKeyStore.of({
      insert: (k) => Effect.sync(() => void db.state.keys.set(k.id, k)),
      findByHash: (hash) =>
        Effect.sync(() => Option.fromNullable([...db.state.keys.values()].find((k) => k.hash === hash))),
      revoke: (id, at) =>
        Effect.sync(() => {
          const k = db.state.keys.get(id)
          if (!k) return Option.none()
          const revoked = k.revokedAt === null ? { ...k, revokedAt: at } : k
          db.state.keys.set(id, revoked)
          return Option.some(revoked)
        }),
      get: (id) => Effect.sync(() => Option.fromNullable(db.state.keys.get(id))),
      list: (workspaceId) =>
        Effect.sync(() => [...db.state.keys.values()].filter((k) => k.workspaceId === workspaceId).sort(oldestFirst))
    }))
)
