/**
 * The AI call agent (SPEC "Agent", CONTRACT "GET /agent", "A new agent", `businessHours`): one per
 * workspace. `PATCH /agent` edits the draft; `POST /agent/publish` copies it to `published`, the
 * configuration calls use, so editing the draft changes nothing live until the next publish.
 */
import { Schema } from "effect"
import { projectionWith } from "../kernel/records.ts"

export const RouteAction = Schema.Literal("agent", "voicemail", "app", "forward")
export type RouteAction = typeof RouteAction.Type

const HHMM = Schema.String.pipe(
  Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "must be HH:MM (00:00 to 23:59)" })
)
export const HoursRange = Schema.Struct({ start: HHMM, end: HHMM })
export type HoursRange = typeof HoursRange.Type

export const weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const
export type Weekday = (typeof weekdays)[number]

/** Why a day's ranges are refused: one not starting before it ends, or two overlapping (09:00-12:00 beside 12:00-17:00 is fine). */
const dayProblem = (ranges: ReadonlyArray<HoursRange>): string | undefined => {
  for (const r of ranges) if (r.start >= r.end) return `${r.start}-${r.end}: start must be before end`
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))
  for (let i = 1; i < sorted.length; i++) {
    const [a, b] = [sorted[i - 1]!, sorted[i]!]
    if (b.start < a.end) return `${a.start}-${a.end} and ${b.start}-${b.end} overlap`
  }
  return undefined
}

/** One day's opening ranges. HH:MM strings compare as times. */
export const DayHours = Schema.Array(HoursRange).pipe(
  Schema.maxItems(12),
  Schema.filter((ranges) => dayProblem(ranges) ?? true)
)

/** How the hours are read (hours.ts `inHours`), for OpenAPI. */
export const businessHoursRule =
  "When the agent is open: `monday`..`sunday` hold `{start, end}` ranges in `HH:MM` (start before end, none overlapping); no day set at all is always open, and once any day is set a day not set is closed. The ranges are read in `timezone` when it is set, whatever the agent's own `timezone` says; without it, in the agent's `timezone`."

/**
 * CONTRACT `businessHours`: `{timezone?, monday..sunday: [{start, end}]}`. No day set at all: always
 * in hours; days set: a day not listed is closed. Ranges: start before end, none overlapping. Its
 * own `timezone`, when set, wins over the agent's.
 */
export const BusinessHours = Schema.Struct({
  timezone: Schema.optional(Schema.String),
  ...Object.fromEntries(weekdays.map((d) => [d, Schema.optional(DayHours)])) as {
    readonly [K in Weekday]: Schema.optional<typeof DayHours>
  }
}).annotations({ description: businessHoursRule })
export type BusinessHours = typeof BusinessHours.Type

export const Job = Schema.Struct({ name: Schema.String, instructions: Schema.String })
export type Job = typeof Job.Type

/** What an agent is configured to do: the draft, and the snapshot publishing takes. */
export const AgentConfig = Schema.Struct({
  name: Schema.String,
  greeting: Schema.NullOr(Schema.String),
  tone: Schema.NullOr(Schema.String),
  voice: Schema.NullOr(Schema.String),
  language: Schema.NullOr(Schema.String),
  instructions: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  /** An IANA time zone (`America/Chicago`). */
  timezone: Schema.String,
  businessHours: BusinessHours,
  inHoursAction: RouteAction,
  offHoursAction: RouteAction,
  jobs: Schema.Array(Job)
})
export type AgentConfig = typeof AgentConfig.Type

/** The stored agent: its draft, and what was last published (null until then). */
export const AgentRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  draft: AgentConfig,
  published: Schema.NullOr(AgentConfig),
  /** The carrier's assistant for the published configuration (Telnyx AI assistant); null on the simulator. */
  carrierAssistantId: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  publishedAt: Schema.NullOr(Schema.String)
})
export type AgentRecord = typeof AgentRecord.Type

export const AgentStatus = Schema.Literal("draft", "published")
export type AgentStatus = typeof AgentStatus.Type

/** SPEC "Agent": the draft as the API shows it, with its status. */
export const Agent = Schema.Struct({
  id: AgentRecord.fields.id,
  name: AgentConfig.fields.name,
  greeting: AgentConfig.fields.greeting,
  tone: AgentConfig.fields.tone,
  voice: AgentConfig.fields.voice,
  language: AgentConfig.fields.language,
  instructions: AgentConfig.fields.instructions,
  status: AgentStatus,
  enabled: AgentConfig.fields.enabled,
  timezone: AgentConfig.fields.timezone,
  businessHours: AgentConfig.fields.businessHours,
  inHoursAction: AgentConfig.fields.inHoursAction,
  offHoursAction: AgentConfig.fields.offHoursAction,
  jobs: AgentConfig.fields.jobs
}).annotations({ identifier: "Agent" })
export type Agent = typeof Agent.Type

const sameConfig = Schema.equivalence(AgentConfig)

/**
 * `published` when the draft is exactly the live configuration, `draft` otherwise: never published,
 * or edited since (SPEC "Agent `status`"). A PATCH that changes nothing leaves a published agent published.
 */
export const statusOf = (agent: AgentRecord): AgentStatus =>
  agent.published !== null && sameConfig(agent.draft, agent.published) ? "published" : "draft"

const viewOf = projectionWith(Agent)
export const toAgent = (agent: AgentRecord): Agent => viewOf(agent.draft, { id: agent.id, status: statusOf(agent) })

/** CONTRACT "A new agent": what the first `PATCH /agent` starts from. */
export const newAgentConfig: AgentConfig = {
  name: "Agent",
  greeting: null,
  tone: null,
  voice: null,
  language: null,
  instructions: null,
  enabled: true,
  timezone: "UTC",
  businessHours: {},
  inHoursAction: "agent",
  offHoursAction: "voicemail",
  jobs: []
}
