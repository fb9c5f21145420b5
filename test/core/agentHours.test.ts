/**
 * Who answers an inbound call (core/agent/hours.ts): a property over random numbers, agents and
 * instants, checked against an oracle that computes the local time by plain offset arithmetic in
 * zones without daylight saving (independent of the Intl code under test); then the daylight-saving
 * cases by hand in America/New_York, the switch days included; and the time zone check.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { inHours, isTimeZone, localTime, routeInbound } from "../../core/agent/hours.ts"
import {
  type AgentConfig,
  type AgentRecord,
  type BusinessHours,
  newAgentConfig,
  type RouteAction,
  type Weekday,
  weekdays
} from "../../core/agent/model.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import type { WorkspaceNumber } from "../../core/numbers/model.ts"
import { fixedZones, hhmm } from "../support/timeZones.ts"

const zone = fc.constantFrom(...Object.keys(fixedZones))

/** Up to three ordered, non-overlapping ranges of a day (touching allowed). */
const dayHours = fc
  .uniqueArray(fc.integer({ min: 0, max: 23 * 60 + 59 }), { minLength: 0, maxLength: 6 })
  .map((points) => {
    const sorted = [...points].sort((a, b) => a - b)
    const ranges: Array<{ start: string; end: string }> = []
    for (let i = 0; i + 1 < sorted.length; i += 2) ranges.push({ start: hhmm(sorted[i]!), end: hhmm(sorted[i + 1]!) })
    return ranges
  })

const businessHours: fc.Arbitrary<BusinessHours> = fc
  .record({
    timezone: fc.option(zone, { nil: undefined }),
    days: fc.dictionary(fc.constantFrom(...weekdays), dayHours, { maxKeys: 7 })
  })
  .map(({ timezone, days }) => ({ ...(timezone === undefined ? {} : { timezone }), ...days }))

const action = fc.constantFrom<RouteAction>("agent", "voicemail", "app", "forward")

const config: fc.Arbitrary<AgentConfig> = fc.record({
  enabled: fc.boolean(),
  timezone: zone,
  businessHours,
  inHoursAction: action,
  offHoursAction: action,
  name: fc.string({ maxLength: 5 })
}).map((c) => ({ ...newAgentConfig, ...c }))

const agent: fc.Arbitrary<AgentRecord | null> = fc.option(
  fc.record({ id: fc.uuid(), draft: config, published: fc.option(config, { nil: null }) }).map((a) => ({
    ...a,
    workspaceId: "00000000-0000-4000-8000-000000000000",
    carrierAssistantId: null,
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    publishedAt: a.published === null ? null : "2026-01-01T00:00:00.000Z"
  })),
  { nil: null }
)

const number: fc.Arbitrary<WorkspaceNumber> = fc.record({
  voiceMode: fc.constantFrom<WorkspaceNumber["voiceMode"]>("agent", "app", "voicemail", "forward"),
  forwardTo: fc.option(fc.constant("+14155550199"), { nil: null })
}).map((r) => ({
  e164: "+14155550100" as E164,
  type: "local",
  agentId: null,
  assignedUserId: null,
  status: "active",
  ...r
}))

/** 2020-2030. */
const instant = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) })

const dayNames: ReadonlyArray<Weekday> = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
const minutesOf = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3))

/** The oracle: local time by adding the zone's fixed offset. */
const oracleInHours = (hours: BusinessHours, timezone: string, at: number) => {
  if (!weekdays.some((d) => hours[d] !== undefined)) return true
  const local = new Date(at + fixedZones[hours.timezone ?? timezone]! * 60_000)
  const day = dayNames[local.getUTCDay()]!
  const minute = local.getUTCHours() * 60 + local.getUTCMinutes()
  return (hours[day] ?? []).some((r) => minute >= minutesOf(r.start) && minute < minutesOf(r.end))
}

const oracleRoute = (n: WorkspaceNumber, a: AgentRecord | null, at: number) => {
  const forward = n.forwardTo === null ? { kind: "app" } : { kind: "forward", to: n.forwardTo }
  if (n.voiceMode === "app" || n.voiceMode === "voicemail") return { kind: n.voiceMode }
  if (n.voiceMode === "forward") return forward
  const live = a?.published ?? null
  if (a === null || live === null || !live.enabled) return { kind: "app" }
  const act = oracleInHours(live.businessHours, live.timezone, at) ? live.inHoursAction : live.offHoursAction
  // The agent's `forward` with no target on the number: a voicemail.
  return act === "agent"
    ? { kind: "agent", agentId: a.id }
    : act === "forward"
    ? (n.forwardTo === null ? { kind: "voicemail" } : forward)
    : { kind: act }
}

describe("routeInbound", () => {
  it("follows the number's mode, and for `agent` the published configuration's hours (never the draft's)", () => {
    fc.assert(
      fc.property(number, agent, instant, (n, a, at) => {
        expect(routeInbound(n, a, at)).toEqual(oracleRoute(n, a, at))
      }),
      { numRuns: 3000 }
    )
  })

  it("an agent with hours answers in them and sends the rest to its off-hours action; the draft does not count until published", () => {
    const hours: BusinessHours = { monday: [{ start: "09:00", end: "17:00" }] }
    const live: AgentConfig = { ...newAgentConfig, businessHours: hours, offHoursAction: "voicemail" }
    const record: AgentRecord = {
      id: "5f0c2a9e-8d1b-4c3a-9e7f-1a2b3c4d5e6f",
      workspaceId: "00000000-0000-4000-8000-000000000000",
      draft: { ...live, enabled: false },
      published: live,
      carrierAssistantId: null,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      publishedAt: "2026-01-01T00:00:00.000Z"
    }
    const n: WorkspaceNumber = {
      e164: "+14155550100" as E164,
      type: "local",
      voiceMode: "agent",
      agentId: record.id,
      forwardTo: null,
      assignedUserId: null,
      status: "active"
    }
    const mondayNoon = Date.parse("2026-01-05T12:00:00Z")
    expect(routeInbound(n, record, mondayNoon)).toEqual({ kind: "agent", agentId: record.id })
    expect(routeInbound(n, record, Date.parse("2026-01-05T17:00:00Z"))).toEqual({ kind: "voicemail" })
    expect(routeInbound(n, record, Date.parse("2026-01-06T12:00:00Z"))).toEqual({ kind: "voicemail" })
    expect(routeInbound(n, { ...record, published: null }, mondayNoon)).toEqual({ kind: "app" })
    expect(routeInbound(n, { ...record, published: { ...live, enabled: false } }, mondayNoon)).toEqual({ kind: "app" })
  })
})

describe("business hours across daylight saving (America/New_York, open 09:00-17:00)", () => {
  const tz = "America/New_York"
  const at = (iso: string) => Date.parse(iso)
  const weekdayHours: BusinessHours = {
    monday: [{ start: "09:00", end: "17:00" }],
    sunday: [{ start: "09:00", end: "17:00" }]
  }

  it("13:30Z on a Monday is 08:30 EST in January (off hours) and 09:30 EDT in July (in hours)", () => {
    expect(localTime(at("2026-01-05T13:30:00Z"), tz)).toEqual({ day: "monday", minute: 8 * 60 + 30 })
    expect(inHours(weekdayHours, tz, at("2026-01-05T13:30:00Z"))).toBe(false)
    expect(localTime(at("2026-07-06T13:30:00Z"), tz)).toEqual({ day: "monday", minute: 9 * 60 + 30 })
    expect(inHours(weekdayHours, tz, at("2026-07-06T13:30:00Z"))).toBe(true)
  })

  it("on 2026-03-08 (clocks go forward at 07:00Z) 13:30Z is already 09:30 EDT; the Sunday before it was 08:30 EST", () => {
    expect(inHours(weekdayHours, tz, at("2026-03-01T13:30:00Z"))).toBe(false)
    expect(inHours(weekdayHours, tz, at("2026-03-08T13:30:00Z"))).toBe(true)
    expect(localTime(at("2026-03-08T06:59:00Z"), tz)).toEqual({ day: "sunday", minute: 1 * 60 + 59 })
    expect(localTime(at("2026-03-08T07:00:00Z"), tz)).toEqual({ day: "sunday", minute: 3 * 60 })
    // 02:00-03:00 does not exist that night: never open
    const skipped: BusinessHours = { sunday: [{ start: "02:00", end: "03:00" }] }
    for (const iso of ["2026-03-08T06:59:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z"]) {
      expect(inHours(skipped, tz, at(iso)), iso).toBe(false)
    }
  })

  it("on 2026-11-01 (clocks go back at 06:00Z) 13:30Z is 08:30 EST again; 01:00-02:00 is open twice that night", () => {
    expect(inHours(weekdayHours, tz, at("2026-10-25T13:30:00Z"))).toBe(true)
    expect(inHours(weekdayHours, tz, at("2026-11-01T13:30:00Z"))).toBe(false)
    expect(inHours(weekdayHours, tz, at("2026-11-01T14:30:00Z"))).toBe(true)
    const repeated: BusinessHours = { sunday: [{ start: "01:00", end: "02:00" }] }
    expect(inHours(repeated, tz, at("2026-11-01T05:30:00Z"))).toBe(true) // 01:30 EDT
    expect(inHours(repeated, tz, at("2026-11-01T06:30:00Z"))).toBe(true) // 01:30 EST
    expect(inHours(repeated, tz, at("2026-11-01T07:30:00Z"))).toBe(false) // 02:30 EST
  })

  it("midnight is minute 0 of the new day, and hours.timezone overrides the agent's", () => {
    expect(localTime(at("2026-01-05T05:00:00Z"), tz)).toEqual({ day: "monday", minute: 0 })
    // 13:30Z Monday: 08:30 in New York, 13:30 in UTC
    expect(inHours({ ...weekdayHours, timezone: "UTC" }, tz, at("2026-01-05T13:30:00Z"))).toBe(true)
    expect(inHours({ ...weekdayHours, timezone: tz }, "UTC", at("2026-01-05T13:30:00Z"))).toBe(false)
  })
})

describe("isTimeZone", () => {
  it("knows IANA zones and refuses anything else", () => {
    for (const z of ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kathmandu"]) expect(isTimeZone(z), z).toBe(true)
    for (const z of ["", "Mars/Olympus", "America/Nowhere", "EST+99"]) expect(isTimeZone(z), z).toBe(false)
  })
})
