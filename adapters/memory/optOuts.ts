/** In-memory OptOutStore. */
import { Effect, Layer, Option } from "effect"
import type { OptOutRecord } from "../../core/optouts/model.ts"
import { OptOutStore } from "../../core/optouts/store.ts"
import { MemoryDb } from "./db.ts"

const keyOf = (workspaceId: string, phone: string) => `${workspaceId} ${phone}`

/** The SQL store's `ORDER BY created_at DESC, phone DESC`. */
const newestFirst = (a: OptOutRecord, b: OptOutRecord) =>
  a.createdAt === b.createdAt ? (a.phone < b.phone ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1

export const layer = Layer.effect(
  OptOutStore,
  Effect.map(MemoryDb, (db) =>
    OptOutStore.of({
      get: (workspaceId, phone) =>
        Effect.sync(() => Option.fromNullable(db.state.optOuts.get(keyOf(workspaceId, phone)))),
      insert: (record) =>
        Effect.sync(() => {
          const key = keyOf(record.workspaceId, record.phone)
          if (db.state.optOuts.has(key)) return false
          db.state.optOuts.set(key, record)
          return true
        }),
      remove: (workspaceId, phone) => Effect.sync(() => db.state.optOuts.delete(keyOf(workspaceId, phone))),
      list: ({ after, limit, phone, workspaceId }) =>
        Effect.sync(() =>
          [...db.state.optOuts.values()]
            .filter((o) =>
              o.workspaceId === workspaceId && (phone === null || o.phone === phone) &&
              (after === null || o.createdAt < after.createdAt ||
                (o.createdAt === after.createdAt && o.phone < after.phone))
            )
            .sort(newestFirst)
            .slice(0, limit)
        )
    }))
)
