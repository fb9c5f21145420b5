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
      audience: (workspaceId, ids, tags, limit) =>
        Effect.sync(() =>
          [...db.state.contacts.values()]
            .filter((c) =>
              c.workspaceId === workspaceId && (ids.includes(c.id) || c.tags.some((t) => tags.includes(t)))
            )
            .sort((a, b) => -newestFirst(a, b))
            .slice(0, limit)
            .map((c) => ({ id: c.id, phone: c.phones[0]?.value ?? null }))
        ),
      findByPhones: (workspaceId, phones) =>
        Effect.sync(() =>
          [...db.state.contacts.values()]
            .filter((c) => c.workspaceId === workspaceId && c.phones.some((p) => phones.includes(p.value)))
            .sort((a, b) => -newestFirst(a, b))
        ),
      list: ({ after, limit, scan, terms, workspaceId }) =>
        Effect.sync(() => {
          const following = [...db.state.contacts.values()]
            .filter((c) => c.workspaceId === workspaceId)
            .sort(newestFirst)
            .filter((c) => after === null || newestFirst(after, c) < 0)
          const examined = scan === null ? following : following.slice(0, scan)
          const items = examined.filter((c) => terms === null || matches(c, terms)).slice(0, limit).map(toSummary)
          const edge = examined[examined.length - 1]
          const full = scan !== null && examined.length === scan && edge !== undefined
          return { items, examinedTo: full ? { createdAt: edge.createdAt, id: edge.id } : null }
        })
    }))
)
