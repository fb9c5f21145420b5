/** In-memory ContactStore with the ordering and search semantics of the SQL one. */
import { Effect, Layer, Option } from "effect"
import { toSummary } from "../../core/contacts/model.ts"
import { matches } from "../../core/contacts/rules.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { MemoryDb } from "./db.ts"

const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1

export const layer = Layer.effect(
  ContactStore,
  Effect.map(MemoryDb, (db) =>
    ContactStore.of({
      insert: (c) => Effect.sync(() => void db.state.contacts.set(c.id, c)),
      get: (workspaceId, id) =>
        Effect.sync(() =>
          Option.fromNullable(db.state.contacts.get(id)).pipe(Option.filter((c) => c.workspaceId === workspaceId))
        ),
      update: (c) =>
        Effect.sync(() => {
          const cur = db.state.contacts.get(c.id)
          if (cur && cur.workspaceId === c.workspaceId) db.state.contacts.set(c.id, c)
        }),
      remove: (workspaceId, id) =>
        Effect.sync(() => {
          const cur = db.state.contacts.get(id)
          if (!cur || cur.workspaceId !== workspaceId) return false
          return db.state.contacts.delete(id)
        }),
      findByPhones: (workspaceId, phones) =>
        Effect.sync(() =>
          [...db.state.contacts.values()]
            .filter((c) => c.workspaceId === workspaceId && c.phones.some((p) => phones.includes(p.value)))
            .sort((a, b) => -newestFirst(a, b))
        ),
      list: ({ workspaceId, terms, limit, after }) =>
        Effect.sync(() =>
          [...db.state.contacts.values()]
            .filter((c) => c.workspaceId === workspaceId)
            .filter((c) => terms === null || matches(c, terms))
            .sort(newestFirst)
            .filter((c) => after === null || newestFirst(after, c) < 0)
            .slice(0, limit)
            .map(toSummary)
        )
    }))
)
