/** In-memory layers of every store port, kept honest by the contract suites in test/adapters. */
import { Effect, Layer, Option } from "effect"
import { ContactStore } from "../../core/contacts/store.ts"
import { matches } from "../../core/contacts/rules.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import * as Signal from "../../core/events/signal.ts"
import { Ids } from "../../core/ids.ts"
import { NumberStore } from "../../core/numbers.ts"
import { nowIso } from "../../core/time.ts"
import { ApiKeyStore, WorkspaceStore } from "../../core/workspaces/store.ts"
import { layerDb, layerTransactor, MemoryDb } from "./db.ts"
import * as Conversations from "./conversations.ts"
import * as Idempotency from "./idempotency.ts"
import * as Webhooks from "./webhooks.ts"

const withDb = <A>(f: (db: { state: import("./db.ts").MemoryState }) => A) => Effect.map(MemoryDb, f)

const workspaceStore = Layer.effect(
  WorkspaceStore,
  withDb((db) =>
    WorkspaceStore.of({
      insert: (w) => Effect.sync(() => void db.state.workspaces.set(w.id, w)),
      get: (id) => Effect.sync(() => Option.fromNullable(db.state.workspaces.get(id))),
      update: (w) => Effect.sync(() => void db.state.workspaces.set(w.id, w)),
      count: Effect.sync(() => db.state.workspaces.size)
    })
  )
)

const apiKeyStore = Layer.effect(
  ApiKeyStore,
  withDb((db) =>
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
        })
    })
  )
)

const numberStore = Layer.effect(
  NumberStore,
  withDb((db) =>
    NumberStore.of({
      // Checked when the effect runs, not when it is built: a claim built before another one ran must still see it.
      insert: (workspaceId, number, inboxId) =>
        Effect.suspend(() =>
          db.state.numbers.has(number.e164)
            ? Effect.fail("taken" as const)
            : Effect.sync(() => void db.state.numbers.set(number.e164, { workspaceId, inboxId, number }))
        ),
      list: (workspaceId) =>
        Effect.sync(() =>
          [...db.state.numbers.values()].filter((n) => n.workspaceId === workspaceId).map((n) => n.number)
        ),
      findByE164: (e164) => Effect.sync(() => Option.fromNullable(db.state.numbers.get(e164)))
    })
  )
)

const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1

const contactStore = Layer.effect(
  ContactStore,
  withDb((db) =>
    ContactStore.of({
      insert: (c) => Effect.sync(() => void db.state.contacts.set(c.id, c)),
      get: (workspaceId, id) =>
        Effect.sync(() => Option.fromNullable(db.state.contacts.get(id)).pipe(Option.filter((c) => c.workspaceId === workspaceId))),
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
        )
    })
  )
)

const outbox = Layer.effect(
  EventOutbox,
  Effect.gen(function* () {
    const db = yield* MemoryDb
    const signal = yield* Signal.OutboxSignal
    return EventOutbox.of({
      append: (workspaceId, events) =>
        Effect.gen(function* () {
          if (events.length === 0) return
          const { uuid } = yield* Ids
          const createdAt = yield* nowIso
          for (const e of events) db.state.outbox.push({ id: uuid(), workspaceId, type: e.type, data: e.data, createdAt })
          yield* Signal.announceAppend(signal)
        }),
      list: (workspaceId) => Effect.sync(() => db.state.outbox.filter((e) => e.workspaceId === workspaceId))
    })
  })
)

/** Every store port and the transactor, in memory, and the signal their commits give the outbox worker. */
export const layer = Layer.mergeAll(workspaceStore, apiKeyStore, numberStore, contactStore, outbox, Webhooks.layer, Conversations.layer, Idempotency.layer, layerTransactor).pipe(
  Layer.provideMerge(Layer.merge(layerDb, Signal.layer))
)
