/**
 * SPEC "Order of call events" and "Per-event fields" as a property of core/calls/events.ts: for
 * every scenario, route and direction (all of them enumerated, and random call facts from
 * fast-check), the events follow the table, live signals carry no conversationId, every event has
 * the call's carrierCallId and decodes with its catalog schema.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Schema } from "effect"
import type { Route } from "../../core/agent/hours.ts"
import { type CallPlan, liveEvents, outcomeOf, recordedEvents, type RecordedFacts } from "../../core/calls/events.ts"
import { CallScenario } from "../../core/calls/model.ts"
import { catalog, type DomainEvent } from "../../core/events/catalog.ts"
import { ANSWERED_CALL_EVENTS } from "../support/callEvents.ts"

const scenarios = CallScenario.literals
const AGENT = "01a20307-1c76-7000-ad98-06c77d1e000d"
const routes: ReadonlyArray<Route> = [{ kind: "agent", agentId: AGENT }, { kind: "app" }, { kind: "voicemail" }, {
  kind: "forward",
  to: "+14155550199"
}]

const allPlans: ReadonlyArray<CallPlan> = [
  ...scenarios.flatMap((scenario) => routes.map((route): CallPlan => ({ direction: "inbound", scenario, route }))),
  { direction: "outbound", scenario: "answered" },
  { direction: "outbound", scenario: "missed" }
]

/** The position of each type in SPEC's order; a call's events must rank strictly increasing. */
const rank: Record<string, number> = {
  "call.ringing": 0,
  "call.flow.started": 1,
  "call.flow.completed": 2,
  "call.flow.aborted": 2,
  "call.answered": 3,
  "call.forwarded": 3,
  "call.completed": 4,
  "call.missed": 4,
  "call.recording.completed": 5,
  "call.voicemail.completed": 5,
  "call.transcript.completed": 6,
  "call.summary.completed": 7
}
const LIVE = new Set([
  "call.ringing",
  "call.answered",
  "call.forwarded",
  "call.flow.started",
  "call.flow.completed",
  "call.flow.aborted"
])

const e164 = fc.integer({ min: 2_000_000_000, max: 9_999_999_999 }).map((n) => `+1${n}`)
const facts: fc.Arbitrary<RecordedFacts> = fc.record({
  carrierCallId: fc.string({ minLength: 1, maxLength: 40 }),
  numberE164: e164,
  from: fc.option(e164, { nil: null }),
  callerName: fc.option(fc.string(), { nil: null }),
  memberUid: fc.option(fc.string({ minLength: 1 }), { nil: null }),
  memberSeesNumber: fc.boolean(),
  flow: fc.record({ flowId: fc.string({ minLength: 1 }), flowName: fc.string(), flowVersion: fc.nat() }),
  conversationId: fc.uuid(),
  inboxId: fc.uuid(),
  activityId: fc.uuid(),
  summary: fc.option(fc.string({ minLength: 1 }), { nil: null })
})

const eventsOf = (
  plan: CallPlan,
  f: RecordedFacts
): ReadonlyArray<DomainEvent> => [...liveEvents(plan, f), ...recordedEvents(plan, f)]

/** The table of SPEC, checked against one call's events. */
const followsTheTable = (plan: CallPlan, f: RecordedFacts) => {
  const events = eventsOf(plan, f)
  const types = events.map((e) => e.type)
  const has = (t: string) => types.includes(t as DomainEvent["type"])
  const label = JSON.stringify(plan)

  // SPEC's order, each type at most once.
  for (let i = 1; i < types.length; i++) {
    expect(rank[types[i]!]!, `${label}: ${types.join(", ")}`).toBeGreaterThan(rank[types[i - 1]!]!)
  }
  // Exactly one end.
  expect(types.filter((t) => t === "call.completed" || t === "call.missed"), label).toHaveLength(1)

  for (const e of events) {
    const data = e.data as Record<string, unknown>
    // Every event's data is what the catalog says, and names the call.
    expect(
      () => Schema.decodeUnknownSync(catalog[e.type].data as Schema.Schema<unknown, unknown>)(data),
      `${label} ${e.type}`
    ).not.toThrow()
    expect(data["carrierCallId"], `${label} ${e.type}`).toBe(f.carrierCallId)
    // Live signals come before the timeline entry: no conversation; the rest name it.
    if (LIVE.has(e.type)) expect(data, `${label} ${e.type}`).not.toHaveProperty("conversationId")
    else expect(data["conversationId"], `${label} ${e.type}`).toBe(f.conversationId)
  }
  // Live events are exactly the live ones, first.
  expect(liveEvents(plan, f).every((e) => LIVE.has(e.type))).toBe(true)
  expect(recordedEvents(plan, f).every((e) => !LIVE.has(e.type))).toBe(true)

  if (plan.direction === "outbound") {
    // POST /calls: no ringing, no answered; the first event is the end; no summary event.
    expect(["call.completed", "call.missed"], label).toContain(types[0])
    expect(has("call.answered") || has("call.ringing") || has("call.forwarded") || has("call.summary.completed"), label)
      .toBe(false)
    expect(has("call.completed"), label).toBe(plan.scenario === "answered")
    if (plan.scenario === "answered") {
      expect(types).toEqual(["call.completed", "call.recording.completed", "call.transcript.completed"])
    } else expect(types).toEqual(["call.missed"])
    return
  }

  const { scenario, route } = plan
  expect(types[0], label).toBe("call.ringing")
  const ringing = events[0]!.data as Record<string, unknown>
  expect(ringing["routedBy"], label).toBe(scenario.startsWith("flow_") ? "flow" : "number")
  expect(ringing["from"]).toBe(f.from)
  expect(ringing["numberE164"]).toBe(f.numberE164)

  // Flows: started, then completed or aborted; none otherwise.
  expect(has("call.flow.started"), label).toBe(scenario.startsWith("flow_"))
  expect(has("call.flow.completed"), label).toBe(scenario === "flow_completed")
  expect(has("call.flow.aborted"), label).toBe(scenario === "flow_aborted")

  // Who answers: the route, for an answered call (or a completed flow) only.
  const answers = (scenario === "answered" || scenario === "flow_completed") &&
    (route.kind === "agent" || route.kind === "app")
  expect(has("call.answered"), label).toBe(answers)
  expect(has("call.forwarded"), label).toBe(route.kind === "forward" && scenario !== "flow_aborted")
  expect(has("call.answered") && has("call.forwarded"), label).toBe(false)
  if (scenario === "missed" || scenario === "voicemail" || scenario === "flow_aborted") {
    expect(has("call.answered"), label).toBe(false)
  }
  const answered = events.find((e) => e.type === "call.answered")?.data as Record<string, unknown> | undefined
  if (answered !== undefined) {
    expect(answered["direction"]).toBe("inbound")
    if (route.kind === "agent") expect(answered).toMatchObject({ answeredBy: "agent", agentId: AGENT })
    if (route.kind === "app") {
      expect(answered).toMatchObject({ answeredBy: "member", memberUid: f.memberUid ?? "" })
      expect("numberE164" in answered).toBe(f.memberSeesNumber)
    }
  }
  const forwarded = events.find((e) => e.type === "call.forwarded")?.data as Record<string, unknown> | undefined
  if (forwarded !== undefined && route.kind === "forward") expect(forwarded["forwardedTo"]).toBe(route.to)

  // The end: completed when someone (or the outside line) picked up.
  const pickedUp = (scenario === "answered" || scenario === "flow_completed") && route.kind !== "voicemail"
  expect(has("call.completed"), label).toBe(pickedUp)
  const completed = events.find((e) => e.type === "call.completed")?.data as Record<string, unknown> | undefined
  if (completed !== undefined) {
    expect(completed["answeredBy"]).toBe(route.kind === "agent" ? "agent" : route.kind === "app" ? "member" : undefined)
  }
  expect(events.find((e) => e.type === "call.missed")?.data ?? {}).not.toHaveProperty("answeredBy")

  // What is kept: a voicemail, or the recording of a call answered here (a forwarded call left the service).
  const voicemail = scenario === "voicemail" ||
    (pickedUp === false && route.kind === "voicemail" && scenario !== "missed" && scenario !== "flow_aborted")
  expect(has("call.voicemail.completed"), label).toBe(voicemail)
  expect(has("call.recording.completed"), label).toBe(pickedUp && route.kind !== "forward")
  const kept = has("call.voicemail.completed") || has("call.recording.completed")
  expect(has("call.transcript.completed"), label).toBe(kept)
  expect(has("call.summary.completed"), label).toBe(kept)
  const summary = events.find((e) => e.type === "call.summary.completed")?.data as Record<string, unknown> | undefined
  if (summary !== undefined) {
    const inline = has("call.answered") && route.kind === "agent" && f.summary !== null
    expect(summary["summaryText"], label).toBe(inline ? f.summary : undefined)
  }
  expect(outcomeOf(plan).type).toBe(voicemail ? "voicemail" : "call")
}

describe("the order of call events (SPEC)", () => {
  it("every scenario x route x direction, enumerated", () => {
    expect(allPlans).toHaveLength(22)
    const f = fc.sample(facts, { numRuns: 1, seed: 1 })[0]!
    for (const plan of allPlans) followsTheTable(plan, f)
  })

  it.prop("the table holds for any call's facts", [fc.constantFrom(...allPlans), facts], ([plan, f]) => {
    followsTheTable(plan, f)
  })

  it("an inbound answered agent call: ringing, answered, completed, recording, transcript, summary", () => {
    const f = fc.sample(facts, { numRuns: 1, seed: 2 })[0]!
    expect(eventsOf({ direction: "inbound", scenario: "answered", route: routes[0]! }, f).map((e) => e.type)).toEqual(
      ANSWERED_CALL_EVENTS
    )
    expect(eventsOf({ direction: "inbound", scenario: "voicemail", route: routes[1]! }, f).map((e) => e.type)).toEqual([
      "call.ringing",
      "call.missed",
      "call.voicemail.completed",
      "call.transcript.completed",
      "call.summary.completed"
    ])
    expect(eventsOf({ direction: "inbound", scenario: "flow_aborted", route: routes[0]! }, f).map((e) => e.type))
      .toEqual([
        "call.ringing",
        "call.flow.started",
        "call.flow.aborted",
        "call.missed"
      ])
  })
})
