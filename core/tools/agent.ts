/** AI call agent capabilities (SPEC "Agent", "Number `voiceMode`"). */
import { Effect, Schema } from "effect"
import {
  AgentAnswer,
  Agents,
  AgentWithUsage,
  DisconnectInput,
  RoutingAnswer,
  UpdateAgentInput
} from "../agent/service.ts"
import { FailedPrecondition, NotFound } from "../kernel/errors.ts"
import { Phone } from "../kernel/phone.ts"
import { NoInput, read, tool } from "./tool.ts"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** The number a routing tool acts on (the REST path's `{e164}`), as numbers_list lists it. */
const NumberTarget = Schema.Struct({ e164: Phone }).annotations(strict)

export const getAgent = tool({
  name: "agent_get",
  title: "Get the AI call agent",
  description:
    "The workspace's AI call agent: its draft configuration (`status` `published` when the draft is what calls use, `draft` otherwise; null before the first agent_update) and this month's agent minutes against those included.",
  input: NoInput,
  output: AgentWithUsage,
  example: {},
  scope: "agent:manage",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p) => Effect.flatMap(Agents, (a) => a.get(p))
})

export const updateAgent = tool({
  name: "agent_update",
  title: "Edit the AI call agent's draft",
  description:
    "Create or edit the agent's draft: only the fields sent change, `jobs` is replaced wholesale (at most 20, names unique). The first update creates the agent (enabled, UTC, always in hours, the agent answering in hours and voicemail off hours). `timezone` is an IANA zone; `businessHours` days hold `{start, end}` in `HH:MM`. Nothing goes live until agent_publish.",
  input: UpdateAgentInput,
  output: AgentAnswer,
  example: {
    name: "Front desk",
    greeting: "Thanks for calling Acme Plumbing, how can I help?",
    timezone: "America/New_York",
    businessHours: { monday: [{ start: "09:00", end: "17:00" }] },
    offHoursAction: "voicemail"
  },
  scope: "agent:manage",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [],
  run: (p, input) => Effect.flatMap(Agents, (a) => a.update(p, input))
})

export const publishAgent = tool({
  name: "agent_publish",
  title: "Publish the AI call agent",
  description:
    "Make the agent's draft the configuration live calls use, replacing the one published before. Fails until agent_update has created the agent.",
  input: NoInput,
  output: AgentAnswer,
  example: {},
  scope: "agent:manage",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [FailedPrecondition],
  run: (p) => Effect.flatMap(Agents, (a) => a.publish(p))
})

export const connectNumber = tool({
  name: "numbers_connect",
  title: "Route a number's calls to the AI agent",
  description:
    "Route inbound calls of the workspace number `e164` to the AI agent (`voiceMode` `agent`); until the agent is published and enabled they ring the team. Undo with numbers_disconnect.",
  input: NumberTarget,
  output: RoutingAnswer,
  example: { e164: "+14155550100" },
  scope: "agent:manage",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound, FailedPrecondition],
  run: (p, input) => Effect.flatMap(Agents, (a) => a.connect(p, input.e164))
})

export const disconnectNumber = tool({
  name: "numbers_disconnect",
  title: "Route a number's calls away from the AI agent",
  description:
    "Route inbound calls of the workspace number `e164` away from the agent: `mode` `app` (ring the team: every member with a phone at once for 25 seconds, the first to answer takes the call, else voicemail; the default), `voicemail`, or `forward` to `forwardTo` (E.164, required for `forward` and only then).",
  input: Schema.Struct({ ...NumberTarget.fields, ...DisconnectInput.fields }).annotations(strict),
  output: RoutingAnswer,
  example: { e164: "+14155550100", mode: "forward", forwardTo: "+14155550199" },
  scope: "agent:manage",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { e164, ...input }) => Effect.flatMap(Agents, (a) => a.disconnect(p, e164, input))
})
