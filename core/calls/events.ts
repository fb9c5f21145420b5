/**
 * What a call comes to and the `call.*` events it sends, in SPEC "Order of call events", with the
 * fields of SPEC "Per-event fields". Pure: the call's facts are arguments.
 *
 * Inbound: `call.ringing` (and, for a call flow, `call.flow.started` then `call.flow.completed` or
 * `call.flow.aborted`), then `call.answered` or `call.forwarded` (neither when nobody picks up),
 * then `call.completed` or `call.missed`, then `call.recording.completed` or
 * `call.voicemail.completed`, `call.transcript.completed`, `call.summary.completed`.
 * Outbound (`POST /calls`): no `call.answered`; `call.completed` or `call.missed` first, then
 * `call.recording.completed` and `call.transcript.completed`.
 *
 * `live` events are signals sent before the call has a timeline entry (no `conversationId`);
 * `recorded` events are written with the activity. All carry the call's `carrierCallId`.
 */
import type { Route } from "../agent/hours.ts"
import { type DomainEvent, event } from "../events/catalog.ts"
import type { AnsweredBy, CallScenario, CallStatus } from "./model.ts"

export type CallPlan =
  | { readonly direction: "inbound"; readonly scenario: CallScenario; readonly route: Route }
  | { readonly direction: "outbound"; readonly scenario: "answered" | "missed" }

/** What a call comes to. */
export interface CallOutcome {
  readonly type: "call" | "voicemail"
  readonly status: CallStatus
  readonly answeredBy: AnsweredBy | null
  /** The call was sent to an outside number. */
  readonly forwarded: boolean
  readonly flow: "completed" | "aborted" | null
  /** A recording (call) or the voicemail audio is stored, with a transcript and a summary. */
  readonly recorded: boolean
}

const missed = (forwarded: boolean, flow: CallOutcome["flow"]): CallOutcome => ({
  type: "call",
  status: "missed",
  answeredBy: null,
  forwarded,
  flow,
  recorded: false
})
const voicemail = (forwarded: boolean, flow: CallOutcome["flow"]): CallOutcome => ({
  type: "voicemail",
  status: "missed",
  answeredBy: null,
  forwarded,
  flow,
  recorded: true
})

/**
 * Inbound: `answered` is answered as the route says (the agent, a teammate in the app, or the
 * outside line of `forward`; a `voicemail` route takes a voicemail); `missed` rings out; `voicemail`
 * rings out and the caller leaves a voicemail; the flow scenarios pass a call flow first, which
 * hands over to the route (`flow_completed`) or stops as the caller hangs up (`flow_aborted`).
 * A forwarded call leaves the service: no recording of its conversation is kept here.
 */
export const outcomeOf = (plan: CallPlan): CallOutcome => {
  if (plan.direction === "outbound") {
    return plan.scenario === "answered"
      ? { type: "call", status: "completed", answeredBy: "agent", forwarded: false, flow: null, recorded: true }
      : missed(false, null)
  }
  const { route } = plan
  if (plan.scenario === "flow_aborted") return missed(false, "aborted")
  const flow = plan.scenario === "flow_completed" ? "completed" : null
  const forwarded = route.kind === "forward"
  const scenario = plan.scenario === "flow_completed" ? "answered" : plan.scenario
  if (scenario === "missed") return missed(forwarded, flow)
  if (scenario === "voicemail" || route.kind === "voicemail") return voicemail(forwarded, flow)
  switch (route.kind) {
    case "agent":
      return { type: "call", status: "completed", answeredBy: "agent", forwarded, flow, recorded: true }
    case "app":
      return { type: "call", status: "completed", answeredBy: "member", forwarded, flow, recorded: true }
    case "forward":
      return { type: "call", status: "completed", answeredBy: null, forwarded, flow, recorded: false }
  }
}

/** The simulated call flow a flow scenario passes through (the service has no flow editor). */
export interface FlowFacts {
  readonly flowId: string
  readonly flowName: string
  readonly flowVersion: number
}

/** The flow the simulator's flow scenarios pass through (the service has no flow editor yet). */
export const SIMULATED_FLOW: FlowFacts = { flowId: "sim_flow", flowName: "Simulated phone menu", flowVersion: 1 }

/** What the live signals say: known when the call arrives. */
export interface LiveFacts {
  readonly carrierCallId: string
  readonly numberE164: string
  /** The caller (inbound) or the workspace number (outbound); null when withheld. */
  readonly from: string | null
  readonly callerName: string | null
  /** The teammate who answers in the app (`app` route). */
  readonly memberUid: string | null
  /**
   * Whether the `member` answer may name the number: SPEC includes it only when the workspace has
   * one number or the teammate has an assigned line.
   */
  readonly memberSeesNumber: boolean
  readonly flow: FlowFacts
}

/** What the recorded events add: the timeline entry. */
export interface RecordedFacts extends LiveFacts {
  readonly conversationId: string
  readonly inboxId: string
  readonly activityId: string
  readonly summary: string | null
}

/** The final step of a completed flow, by the route it hands over to (`astra` is the agent step). */
const terminalOf = (route: Route) => route.kind === "agent" ? "astra" : route.kind === "app" ? "ring" : route.kind

const agentIdOf = (
  plan: CallPlan
): string | null => (plan.direction === "inbound" && plan.route.kind === "agent" ? plan.route.agentId : null)

/** The live signals of an inbound call, in order; none for an outbound call. */
export const liveEvents = (plan: CallPlan, facts: LiveFacts): ReadonlyArray<DomainEvent> => {
  if (plan.direction === "outbound") return []
  const outcome = outcomeOf(plan)
  const { carrierCallId, numberE164, from } = facts
  const flowRef = { numberE164, ...facts.flow, carrierCallId }
  const events: Array<DomainEvent> = [
    event("call.ringing", {
      numberE164,
      from,
      callerName: facts.callerName,
      carrierCallId,
      direction: "inbound",
      routedBy: outcome.flow === null ? "number" : "flow"
    })
  ]
  if (outcome.flow !== null) events.push(event("call.flow.started", flowRef))
  if (outcome.flow === "completed") {
    events.push(
      event("call.flow.completed", {
        ...flowRef,
        terminal: terminalOf(plan.route),
        nodeId: `${terminalOf(plan.route)}_step`
      })
    )
  }
  if (outcome.flow === "aborted") {
    events.push(event("call.flow.aborted", { ...flowRef, reason: "caller_hung_up", nodeId: "menu" }))
  }
  if (outcome.forwarded && plan.route.kind === "forward") {
    events.push(
      event("call.forwarded", { forwardedTo: plan.route.to, numberE164, from, carrierCallId, direction: "inbound" })
    )
  }
  if (outcome.answeredBy === "agent") {
    events.push(
      event("call.answered", {
        answeredBy: "agent",
        direction: "inbound",
        numberE164,
        from,
        carrierCallId,
        agentId: agentIdOf(plan)!
      })
    )
  }
  if (outcome.answeredBy === "member") {
    const member = {
      answeredBy: "member",
      direction: "inbound",
      from,
      carrierCallId,
      memberUid: facts.memberUid ?? ""
    } as const
    events.push(event("call.answered", facts.memberSeesNumber ? { ...member, numberE164 } : member))
  }
  return events
}

/** What every recorded event names: the call's timeline entry. */
export type CallRef = {
  readonly conversationId: string
  readonly inboxId: string
  readonly activityId: string
  readonly numberE164: string
  readonly carrierCallId: string
}

const refOf = (facts: RecordedFacts): CallRef => ({
  conversationId: facts.conversationId,
  inboxId: facts.inboxId,
  activityId: facts.activityId,
  numberE164: facts.numberE164,
  carrierCallId: facts.carrierCallId
})

/** `call.completed` or `call.missed`: the first event written with the call's activity. */
export const endedEvent = (plan: CallPlan, facts: RecordedFacts): DomainEvent => {
  const outcome = outcomeOf(plan)
  const ref = refOf(facts)
  return outcome.status === "completed"
    ? event("call.completed", outcome.answeredBy === null ? ref : { ...ref, answeredBy: outcome.answeredBy })
    : event("call.missed", ref)
}

/** `call.transcript.completed`: the call's transcript is on its activity. */
export const transcriptEvent = (ref: CallRef): DomainEvent => event("call.transcript.completed", ref)

/**
 * `call.summary.completed`, an inbound call's last event (SPEC's outbound order has none: the
 * summary stays on the activity). The summary is inline for calls the AI agent handled; others read
 * it from the activity.
 */
export const summaryEvent = (ref: CallRef, agentHandled: boolean, summary: string | null): DomainEvent => {
  const { conversationId, activityId, carrierCallId } = ref
  return event(
    "call.summary.completed",
    agentHandled && summary !== null
      ? { conversationId, activityId, carrierCallId, summaryText: summary }
      : { conversationId, activityId, carrierCallId }
  )
}

/** The events written with the call's activity, in order. */
export const recordedEvents = (plan: CallPlan, facts: RecordedFacts): ReadonlyArray<DomainEvent> => {
  const outcome = outcomeOf(plan)
  const ref = refOf(facts)
  const events: Array<DomainEvent> = [endedEvent(plan, facts)]
  if (!outcome.recorded) return events
  events.push(event(outcome.type === "voicemail" ? "call.voicemail.completed" : "call.recording.completed", ref))
  events.push(transcriptEvent(ref))
  if (plan.direction === "inbound") events.push(summaryEvent(ref, outcome.answeredBy === "agent", facts.summary))
  return events
}
