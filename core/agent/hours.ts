/**
 * Who answers an inbound call (SPEC "Number `voiceMode`", CONTRACT "A new agent"): the number's
 * own mode, and for `agent` the published agent's business hours in its time zone. Pure: the time
 * is an argument. An agent that is disabled or not published answers no call: the team is rung.
 */
import { Schema } from "effect"
import type { WorkspaceNumber } from "../numbers/model.ts"
import { type AgentRecord, type BusinessHours, type Weekday, weekdays } from "./model.ts"

/** Where an inbound call goes (a schema: a carrier's call session keeps it until the call ends). */
export const Route = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("agent"), agentId: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("app") }),
  Schema.Struct({ kind: Schema.Literal("voicemail") }),
  Schema.Struct({ kind: Schema.Literal("forward"), to: Schema.String })
)
export type Route = typeof Route.Type

/** The weekday and minute of the day at `atMillis` in `timeZone` (an IANA zone), daylight saving included. */
export const localTime = (atMillis: number, timeZone: string): { readonly day: Weekday; readonly minute: number } => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    weekday: "long",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  }).formatToParts(new Date(atMillis))
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ""
  const day = get("weekday").toLowerCase() as Weekday
  return { day, minute: Number(get("hour")) * 60 + Number(get("minute")) }
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

/**
 * Whether `atMillis` falls in the hours; no day set: always. The hours are read in
 * `hours.timezone` when it is set, whatever the agent's `timeZone` says (the hours name their zone).
 */
export const inHours = (hours: BusinessHours, timeZone: string, atMillis: number): boolean => {
  if (!weekdays.some((d) => hours[d] !== undefined)) return true
  const { day, minute } = localTime(atMillis, hours.timezone ?? timeZone)
  return (hours[day] ?? []).some((r) => minute >= minutes(r.start) && minute < minutes(r.end))
}

/** Whether `zone` is an IANA time zone this runtime knows. */
export const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return true
  } catch {
    return false
  }
}

export const routeInbound = (number: WorkspaceNumber, agent: AgentRecord | null, atMillis: number): Route => {
  switch (number.voiceMode) {
    case "app":
      return { kind: "app" }
    case "voicemail":
      return { kind: "voicemail" }
    case "forward":
      return number.forwardTo === null ? { kind: "app" } : { kind: "forward", to: number.forwardTo }
    case "agent": {
      const live = agent?.published
      if (agent === null || live === null || live === undefined || !live.enabled) return { kind: "app" }
      const action = inHours(live.businessHours, live.timezone, atMillis) ? live.inHoursAction : live.offHoursAction
      switch (action) {
        case "agent":
          return { kind: "agent", agentId: agent.id }
        case "forward":
          // An agent told to forward forwards to the number's own forwardTo, which SPEC sets only in
          // `forward` mode (an embedder routing its numbers itself may set one). Without one the caller
          // leaves a voicemail: ringing the team reaches nobody on a carrier.
          return number.forwardTo === null ? { kind: "voicemail" } : { kind: "forward", to: number.forwardTo }
        default:
          return { kind: action }
      }
    }
  }
}
