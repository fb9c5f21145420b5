/** In-memory RegistrationStore. */
import { Effect, Layer, Option } from "effect"
import { assignable } from "../../core/registration/assignment.ts"
import { awaitingSteps, RegistrationStore } from "../../core/registration/store.ts"
import { MemoryDb } from "./db.ts"

const awaiting: ReadonlySet<string> = new Set(awaitingSteps)

export const layer = Layer.effect(
  RegistrationStore,
  Effect.map(MemoryDb, (db) =>
    RegistrationStore.of({
      get: (workspaceId) => Effect.sync(() => Option.fromNullable(db.state.registrations.get(workspaceId))),
      put: (registration) => Effect.sync(() => void db.state.registrations.set(registration.workspaceId, registration)),
      lease: (workspaceId, now, until) =>
        Effect.sync(() => {
          const held = db.state.registrationLeases.get(workspaceId)
          if (!db.state.registrations.has(workspaceId) || (held !== undefined && held >= now)) return false
          db.state.registrationLeases.set(workspaceId, until)
          return true
        }),
      release: (workspaceId) => Effect.sync(() => void db.state.registrationLeases.delete(workspaceId)),
      awaitingRegistry: (limit) =>
        Effect.sync(() =>
          [...db.state.registrations.values()]
            .filter((r) => awaiting.has(r.step))
            .sort((a, b) => (a.updatedAt === b.updatedAt
              ? (a.workspaceId < b.workspaceId ? -1 : 1)
              : a.updatedAt < b.updatedAt
              ? -1
              : 1)
            )
            .slice(0, limit)
            .map((r) => r.workspaceId)
        ),
      awaitingAssignment: (limit) =>
        Effect.sync(() =>
          [...db.state.registrations.values()]
            .filter((r) =>
              !r.mock && r.step === "campaign_active" &&
              [...db.state.numbers.values()].some((n) =>
                n.workspaceId === r.workspaceId && assignable(n) &&
                (n.campaignAssignment === null || n.campaignAssignment === "pending")
              )
            )
            .map((r) => r.workspaceId)
            .sort()
            .slice(0, limit)
        ),
      byRegistryId: (kind, id) =>
        Effect.sync(() =>
          Option.fromNullable(
            [...db.state.registrations.values()].find((r) => !r.mock && r[kind].id === id)?.workspaceId
          )
        )
    }))
)
