/** In-memory NumberStore. */
import { Effect, Layer, Option } from "effect"
import { NumberStore } from "../../core/numbers/model.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  NumberStore,
  Effect.map(MemoryDb, (db) => {
    const owned = (workspaceId: string) => [...db.state.numbers.values()].filter((n) => n.workspaceId === workspaceId)
    return NumberStore.of({
      // Checked when the effect runs, not when it is built: a claim built before another one ran must still see it.
      insert: (workspaceId, number, inboxId, ordered = true) =>
        Effect.suspend(() =>
          db.state.numbers.has(number.e164)
            ? Effect.fail("taken" as const)
            : Effect.sync(() =>
              void db.state.numbers.set(number.e164, {
                workspaceId,
                inboxId,
                ordered,
                campaignAssignment: null,
                number
              })
            )
        ),
      list: (workspaceId) => Effect.sync(() => owned(workspaceId).map((n) => n.number)),
      listActive: (workspaceId) => Effect.sync(() => owned(workspaceId).filter((n) => n.number.status === "active")),
      findByE164: (e164) => Effect.sync(() => Option.fromNullable(db.state.numbers.get(e164))),
      setRouting: (workspaceId, e164, routing) =>
        Effect.sync(() => {
          const found = db.state.numbers.get(e164)
          if (found === undefined || found.workspaceId !== workspaceId) return Option.none()
          const number = { ...found.number, ...routing }
          db.state.numbers.set(e164, { ...found, number })
          return Option.some(number)
        }),
      markOrdered: (workspaceId, e164) =>
        Effect.sync(() => {
          const found = db.state.numbers.get(e164)
          if (found === undefined || found.workspaceId !== workspaceId || found.ordered) return false
          db.state.numbers.set(e164, { ...found, ordered: true })
          return true
        }),
      setCampaignAssignment: (e164, campaignAssignment) =>
        Effect.sync(() => {
          const found = db.state.numbers.get(e164)
          if (found !== undefined) db.state.numbers.set(e164, { ...found, campaignAssignment })
        }),
      remove: (workspaceId, e164) =>
        Effect.sync(() => {
          const found = db.state.numbers.get(e164)
          if (found === undefined || found.workspaceId !== workspaceId) return Option.none()
          db.state.numbers.delete(e164)
          return Option.some(found.number)
        }),
      taken: (e164s) => Effect.sync(() => new Set(e164s.filter((e164) => db.state.numbers.has(e164))))
    })
  })
)
