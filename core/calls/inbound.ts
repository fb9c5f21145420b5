/**
 * Inbound calls: routed by the number's voice mode and the agent's hours (core/agent/hours.ts) at
 * the time they arrive. A simulated call (the `inbound-calls` test helper) sends its live signals
 * (`call.ringing`, `call.answered`, `call.forwarded`, flow events) in their own transaction as it
 * arrives, then plays its scenario and is recorded (history.ts). A carrier's inbound call is routed
 * here too (`withTeam`, `inboundFacts`) but goes step by step (carrierEvents.ts).
 *
 * An `app` call rings every member of the workspace with a `phone` (CONTRACT "Members and the
 * console"); with none, the caller is taken to voicemail. The simulator's `answered` scenario is
 * answered by the first of them (oldest first).
 */
import { Clock, Effect, Either, Option } from "effect"
import { type Route, routeInbound } from "../agent/hours.ts"
import { AgentStore } from "../agent/store.ts"
import type { Principal } from "../auth/principal.ts"
import { WITHHELD } from "../conversations/model.ts"
import { EventOutbox } from "../events/outbox.ts"
import { displayText } from "../kernel/display.ts"
import { InvalidArgument, NotFound } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { normalizePhone, phoneField } from "../kernel/phone.ts"
import { Transactor } from "../kernel/transactor.ts"
import type { MemberRecord } from "../members/model.ts"
import { MemberStore } from "../members/store.ts"
import { testKeysOnly } from "../messaging/simulator.ts"
import { type NumberRecord, NumberStore } from "../numbers/model.ts"
import { type CallOutcome, type CallPlan, liveEvents, type LiveFacts, outcomeOf, SIMULATED_FLOW } from "./events.ts"
import type { History } from "./history.ts"
import type { CallScenario, SimulatedCallInput } from "./model.ts"
import { answeredCall, simulatedEnd, voicemailLeft } from "./script.ts"

/** An inbound call as the carrier announces it; `scenario` is what the simulator plays. */
export interface InboundCall {
  readonly carrierCallId: string
  /** The workspace number called. */
  readonly to: string
  /** The caller's number; null when withheld. */
  readonly from: string | null
  readonly callerName: string | null
  readonly scenario: CallScenario
  readonly durationSeconds: number | null
}

/** A teammate whose phone an `app` call rings. */
export type Teammate = MemberRecord & { readonly phone: string }

/** The default length of a simulated call that does not say. */
const defaultDuration = (
  outcome: CallOutcome
) => (outcome.status === "missed" && !outcome.recorded ? 0 : outcome.type === "voicemail" ? 20 : 60)

export const makeInbound = (history: Pick<History, "itemOf" | "recordCall">) =>
  Effect.gen(function*() {
    const numbers = yield* NumberStore
    const agents = yield* AgentStore
    const tx = yield* Transactor
    const outbox = yield* EventOutbox
    const members = yield* MemberStore

    /**
     * The route as taken: an `app` route rings the workspace's members with a phone, oldest first;
     * with none it is a voicemail (nobody could pick up).
     */
    const withTeam = (workspaceId: string, route: Route) =>
      Effect.gen(function*() {
        if (route.kind !== "app") return { route, team: [] as ReadonlyArray<Teammate> }
        const team = (yield* members.list(workspaceId)).filter((m): m is Teammate => m.phone !== null)
        return { route: team.length === 0 ? { kind: "voicemail" as const } : route, team }
      })

    /**
     * What the live signals of an inbound call to `number` say; `memberUid` is the teammate who
     * answers (an `app` route). SPEC names the number in a member's `call.answered` only when the
     * workspace has one number or the number is the teammate's assigned line.
     */
    const inboundFacts = (
      number: NumberRecord,
      carrierCallId: string,
      from: string | null,
      callerName: string | null,
      memberUid: string | null
    ) =>
      Effect.gen(function*() {
        const assigned = number.number.assignedUserId
        const facts: LiveFacts = {
          carrierCallId,
          numberE164: number.number.e164,
          from,
          callerName,
          memberUid,
          memberSeesNumber: (assigned !== null && assigned === memberUid) ||
            (yield* numbers.list(number.workspaceId)).length === 1,
          flow: SIMULATED_FLOW
        }
        return facts
      })

    /**
     * An inbound call to a workspace number, routed by the number's voice mode and the agent's hours
     * at the time it arrives, played through `scenario` (the simulator) and recorded.
     */
    const receive = (call: InboundCall) =>
      Effect.gen(function*() {
        const to = yield* phoneField("to", call.to)
        const from = call.from === null ? null : yield* phoneField("from", call.from)
        const number = yield* Effect.flatMap(
          numbers.findByE164(to),
          Effect.orElseFail(() => new NotFound({ message: `${to} is not a workspace number` }))
        )
        const ws = number.workspaceId
        const startedAt = yield* Clock.currentTimeMillis
        const agent = yield* agents.get(ws)
        const { route, team } = yield* withTeam(
          ws,
          routeInbound(number.number, Option.getOrNull(agent), startedAt)
        )
        const plan: CallPlan = { direction: "inbound", scenario: call.scenario, route }
        const outcome = outcomeOf(plan)
        // The first teammate with a phone (oldest first) picks up.
        const facts = yield* inboundFacts(number, call.carrierCallId, from, call.callerName, team[0]?.id ?? null)
        // Live signals: sent as the call arrives, before it has a timeline entry.
        yield* tx.withTransaction(outbox.append(ws, liveEvents(plan, facts)))
        const durationSeconds = call.durationSeconds ?? defaultDuration(outcome)
        const greeting = Option.match(agent, { onNone: () => null, onSome: (a) => a.published?.greeting ?? null })
        const played = outcome.type === "voicemail"
          ? voicemailLeft(durationSeconds)
          : answeredCall(outcome.answeredBy === "agent" ? "agent" : "member", durationSeconds, greeting)
        const end = simulatedEnd(outcome.status === "completed", durationSeconds, played)
        return yield* history.recordCall({
          plan,
          line: {
            workspaceId: ws,
            numberE164: number.number.e164,
            participant: from ?? WITHHELD,
            inboxId: number.inboxId
          },
          startedAt,
          facts,
          details: {
            from,
            to: number.number.e164,
            agentId: route.kind === "agent" ? route.agentId : null,
            memberUid: outcome.answeredBy === "member" ? facts.memberUid : null,
            forwardedTo: route.kind === "forward" ? route.to : null,
            carrierCallId: call.carrierCallId,
            job: null
          },
          end
        })
      })

    /** `POST /test-helpers/inbound-calls`: an inbound call from `from` (null: withheld) to the caller's number `to`. */
    const simulateInbound = (p: Principal, input: SimulatedCallInput) =>
      Effect.gen(function*() {
        yield* testKeysOnly(p)
        // Only the caller's own numbers: a test key cannot ring another workspace.
        const parsed = normalizePhone(input.to)
        const owned = Either.isRight(parsed) ? yield* numbers.findByE164(parsed.right) : Option.none()
        if (Option.isNone(owned) || owned.value.workspaceId !== p.workspaceId) {
          return yield* new NotFound({ message: `to: ${displayText(input.to, 32)} is not a number of this workspace` })
        }
        if (input.from !== null && (yield* phoneField("from", input.from)) === owned.value.number.e164) {
          return yield* new InvalidArgument({ message: "from: must not be the number called (to)" })
        }
        const { uuid } = yield* Ids
        const carrierCallId = `sim_call_${uuid()}`
        const { activity, thread } = yield* receive({
          carrierCallId,
          to: input.to,
          from: input.from,
          callerName: null,
          scenario: input.scenario,
          durationSeconds: input.durationSeconds ?? null
        })
        return { call: yield* history.itemOf(activity, thread), carrierCallId }
      })

    return { withTeam, inboundFacts, receive, simulateInbound } as const
  })

export type Inbound = Effect.Effect.Success<ReturnType<typeof makeInbound>>
