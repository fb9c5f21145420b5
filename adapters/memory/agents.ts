/** In-memory AgentStore. */
import { Effect, Layer, Option } from "effect"
import { AgentStore } from "../../core/agent/store.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  AgentStore,
  Effect.map(MemoryDb, (db) =>
    AgentStore.of({
      get: (workspaceId) => Effect.sync(() => Option.fromNullable(db.state.agents.get(workspaceId))),
      put: (agent) => Effect.sync(() => void db.state.agents.set(agent.workspaceId, agent))
    }))
)
