/** The agent store port: at most one agent per workspace. */
import { Context, type Effect, type Option } from "effect"
import type { AgentRecord } from "./model.ts"

export interface AgentStore {
  readonly get: (workspaceId: string) => Effect.Effect<Option.Option<AgentRecord>>
  /** Inserts or replaces the workspace's agent. */
  readonly put: (agent: AgentRecord) => Effect.Effect<void>
}
export const AgentStore = Context.GenericTag<AgentStore>("core/AgentStore")
