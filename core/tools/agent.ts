/** AI call agent capabilities (SPEC "Agent", "Number `voiceMode`"). */
import { Effect, Schema } from "effect"
import { Agents, DisconnectInput, UpdateAgentInput } from "../agent/service.ts"
import { Phone } from "../phone.ts"
import { NoInput, tool } from "./tool.ts"

/** The number a routing tool acts on, as `GET /numbers` lists it. */
const NumberTarget = Schema.Struct({ e164: Phone }).annotations({ parseOptions: { onExcessProperty: "error" } })

export const getAgent = tool({
  name: "get_agent",
  description: "The workspace's AI call agent (its draft, `status` `published` when the draft is what is live; null before the first update) and this month's agent minutes against those included.",
  input: NoInput,
  example: {},
  scope: "agent:manage",
  run: (p) => Effect.flatMap(Agents, (a) => a.get(p))
})

export const updateAgent = tool({
  name: "update_agent",
  description:
    "Create or edit the agent's draft: only the fields sent change, `jobs` is replaced wholesale. The first update creates the agent (enabled, UTC, always in hours, the agent answering in hours and voicemail off hours). Nothing goes live until `publish_agent`.",
  input: UpdateAgentInput,
  example: {
    name: "Front desk",
    greeting: "Thanks for calling Acme Plumbing, how can I help?",
    timezone: "America/New_York",
    businessHours: { monday: [{ start: "09:00", end: "17:00" }] },
    offHoursAction: "voicemail"
  },
  scope: "agent:manage",
  run: (p, input) => Effect.flatMap(Agents, (a) => a.update(p, input))
})

export const publishAgent = tool({
  name: "publish_agent",
  description: "Make the agent's draft the configuration calls use.",
  input: NoInput,
  example: {},
  scope: "agent:manage",
  run: (p) => Effect.flatMap(Agents, (a) => a.publish(p))
})

export const connectNumber = tool({
  name: "connect_number",
  description: "Route a workspace number's inbound calls to the agent (`voiceMode` `agent`); until the agent is published and enabled they ring the team.",
  input: NumberTarget,
  example: { e164: "+14155550100" },
  scope: "agent:manage",
  run: (p, input) => Effect.flatMap(Agents, (a) => a.connect(p, input.e164))
})

export const disconnectNumber = tool({
  name: "disconnect_number",
  description: "Route a workspace number's inbound calls away from the agent: to the team (`app`, the default), to `voicemail`, or `forward` to `forwardTo`.",
  input: Schema.Struct({ ...NumberTarget.fields, ...DisconnectInput.fields }).annotations({ parseOptions: { onExcessProperty: "error" } }),
  example: { e164: "+14155550100", mode: "forward", forwardTo: "+14155550199" },
  scope: "agent:manage",
  run: (p, { e164, ...input }) => Effect.flatMap(Agents, (a) => a.disconnect(p, e164, input))
})
