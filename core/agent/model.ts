/**
 * The AI call agent (SPEC "Agent", CONTRACT "GET /agent", "A new agent", `businessHours`): one per
 * workspace. `PATCH /agent` edits the draft; `POST /agent/publish` copies it to `published`, the
 * configuration calls use, so editing the draft changes nothing live until the next publish.
 */
import { Schema } from "effect"

export const RouteAction = Schema.Literal("agent", "voicemail", "app", "forward")
export type RouteAction = typeof RouteAction.Type

const HHMM = Schema.String.pipe(Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "must be HH:MM (00:00 to 23:59)" }))
export const HoursRange = Schema.Struct({ start: HHMM, end: HHMM })
export type HoursRange = typeof HoursRange.Type

export const weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const
export type Weekday = (typeof weekdays)[number]

/**
 * CONTRACT `businessHours`: `{timezone?, monday..sunday: [{start, end}]}`. No day set at all: always
 * in hours; days set: a day not listed is closed. Ranges: start before end, none overlapping.
 */
export const BusinessHours = Schema.Struct({
  timezone: Schema.optional(Schema.String),
  ...Object.fromEntries(weekdays.map((d) => [d, Schema.optional(Schema.Array(HoursRange).pipe(Schema.maxItems(12)))])) as {
    readonly [K in Weekday]: Schema.optional<Schema.filter<Schema.Array$<typeof HoursRange>>>
  }
})
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
