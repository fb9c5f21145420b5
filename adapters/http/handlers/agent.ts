import { Effect } from "effect"
import { connectNumber, disconnectNumber, getAgent, publishAgent, updateAgent } from "../../../core/tools/agent.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"
import { CurrentPrincipal } from "../platform.ts"

export const AgentLive = group(Api, "agent", (handlers) =>
  handlers
    .handle("get", () => Effect.flatMap(CurrentPrincipal, (p) => getAgent.run(p, {})))
    .handle("update", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => updateAgent.run(p, payload)))
    .handle("publish", () => Effect.flatMap(CurrentPrincipal, (p) => publishAgent.run(p, {})))
    .handle("connect", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => connectNumber.run(p, path)))
    .handle("disconnect", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (p) => disconnectNumber.run(p, { ...path, ...payload })))
)
