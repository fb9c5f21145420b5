/**
 * The Calls service: call history (`GET /calls`), the AI agent's outbound calls (`POST /calls`),
 * inbound calls routed by the number and the agent (core/agent/hours.ts), and the `inbound-calls`
 * test helper. A call's live signals (`call.ringing`, `call.answered`, `call.forwarded`, flow
 * events) commit in their own transaction as the call arrives; the finished call's activity, its
 * thread and the events that report it (events.ts) commit together in one more. A real carrier's
 * calls (`onCarrierEvent`, Telnyx webhooks) go step by step: each step's state (call session,
 * activity, recording, transcript) commits with the event that reports it, once.
 */
import { Clock, Context, Effect, Either, Layer, Option, Schema } from "effect"
import { type Route, routeInbound } from "../agent/hours.ts"
import type { AgentConfig } from "../agent/model.ts"
import { AgentStore } from "../agent/store.ts"
import { type Principal, requireScope } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { type ActivityRecord, newActivity, type Thread, WITHHELD } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { displayText } from "../kernel/display.ts"
import { FailedPrecondition, Internal, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { Ids } from "../kernel/ids.ts"
import { BlobStore, MediaFetcher, MediaUrls, RECORDING_LIMITS, type StoredMedia } from "../media/model.ts"
import { testKeysOnly } from "../messaging/simulator.ts"
import { type Line, makeThreads, type Participant, phoneField } from "../messaging/threads.ts"
import { type NumberRecord, NumberStore } from "../numbers/model.ts"
import { type E164, isPremiumRate, normalizePhone, premiumRateProblem } from "../kernel/phone.ts"
import { Transactor } from "../kernel/transactor.ts"
import {
  type CallOutcome,
  type CallPlan,
  endedEvent,
  type FlowFacts,
  type LiveFacts,
  liveEvents,
  outcomeOf,
  recordedEvents,
  summaryEvent,
  transcriptEvent
} from "./events.ts"
import {
  CallDetails,
  type CallItem,
  type CallScenario,
  type ListCallsInput,
  type PlaceCallInput,
  type PlaceCallResult,
  type SimulatedCallInput
} from "./model.ts"
import { answeredCall, simulatedEnd, simulatedPlacedCall, voicemailLeft } from "./script.ts"
import { type CallSession, CallSessionStore } from "./sessions.ts"
import { type CallEnd, type CarrierCallEvent, type Dialed, type DialRequest, DialState, type InboundAction, Voice } from "./voice.ts"

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

/** The flow the simulator's flow scenarios pass through (the service has no flow editor yet). */
const SIMULATED_FLOW: FlowFacts = { flowId: "sim_flow", flowName: "Simulated phone menu", flowVersion: 1 }

/** Who answers in the app when the number has no assigned teammate. */
const TEAM_MEMBER = "team"

const noActiveNumber = new FailedPrecondition({ message: "The workspace has no active phone number: add one before placing calls" })

const previewOf = (type: CallOutcome["type"], status: CallOutcome["status"], direction: "inbound" | "outbound") =>
  type === "voicemail" ? "Voicemail" : status === "missed" ? "Missed call" : direction === "inbound" ? "Incoming call" : "Outgoing call"

/** The default length of a simulated call that does not say. */
const defaultDuration = (outcome: CallOutcome) => (outcome.status === "missed" && !outcome.recorded ? 0 : outcome.type === "voicemail" ? 20 : 60)

/** A carrier's caller (or a session's stored party): their number, or withheld (the thread withheld callers share) when there is none. */
const callerOf = (raw: string): Participant => Either.getOrElse(normalizePhone(raw), () => WITHHELD)

/** A caller's number for the call's events and `call` object: null when withheld. */
const fromOf = (participant: string): string | null => (participant === WITHHELD ? null : participant)

const decodeDetails = Schema.decodeUnknownSync(CallDetails)
const dialState = Schema.decodeUnknownOption(DialState)
const encodeDialState = Schema.encodeSync(DialState)
/** The `client_state` of the commands for an inbound call (echoed in its later webhooks). */
const InboundState = Schema.parseJson(Schema.Struct({ workspaceId: Schema.String, carrierCallId: Schema.String }))
const inboundState = Schema.decodeUnknownOption(InboundState)
const encodeInboundState = Schema.encodeSync(InboundState)
/** Whether a webhook's `client_state` is one we sent (a dial's or an inbound call's command's). */
const ourClientState = (clientState: string | null) => clientState !== null && (Option.isSome(dialState(clientState)) || Option.isSome(inboundState(clientState)))

export const make = Effect.gen(function* () {
  const store = yield* ConversationStore
  const numbers = yield* NumberStore
  const agents = yield* AgentStore
  const tx = yield* Transactor
  const outbox = yield* EventOutbox
  const blobs = yield* BlobStore
  const urls = yield* MediaUrls
  const voice = yield* Voice
  const sessions = yield* CallSessionStore
  const fetcher = yield* MediaFetcher
  const threads = yield* makeThreads

  /** A call activity as `GET /calls` lists it; the recording is its first media file. */
  const itemOf = (a: ActivityRecord, thread: Pick<Thread, "numberE164">): Effect.Effect<CallItem> =>
    Effect.gen(function* () {
      const call = decodeDetails(a.call)
      const recording = a.media[0]
      return {
        id: a.id,
        conversationId: a.conversationId,
        type: a.type === "voicemail" ? "voicemail" : "call",
        direction: a.direction ?? "inbound",
        status: call.status,
        from: call.from,
        to: call.to,
        numberE164: thread.numberE164,
        durationSeconds: call.durationSeconds,
        answeredBy: call.answeredBy,
        agentId: call.agentId,
        carrierCallId: call.carrierCallId,
        recordingUrl: recording === undefined ? null : yield* urls.sign(a.workspaceId, recording.key),
        transcript: a.callTranscript,
        summary: call.summary,
        createdAt: a.createdAt,
        endedAt: call.endedAt
      }
    })

  const list = (p: Principal, input: ListCallsInput) =>
    Effect.gen(function* () {
      yield* requireScope(p, "conversations:read")
      const hits = yield* store.listCalls(p.workspaceId, input.limit ?? 50)
      return { calls: yield* Effect.forEach(hits, ({ activity, thread }) => itemOf(activity, thread)) }
    })

  /**
   * Records a finished call: its recording as a blob, then in one transaction the thread of (number,
   * other party), the call or voicemail activity and the events that report it.
   */
  const recordCall = (args: {
    /** The activity's id when already given out (`POST /calls`); a new one otherwise. */
    readonly id?: string
    readonly plan: CallPlan
    readonly line: Line
    readonly startedAt: number
    readonly facts: LiveFacts
    readonly details: Omit<CallDetails, "status" | "answeredBy" | "durationSeconds" | "summary" | "endedAt">
    readonly end: CallEnd
    /**
     * A carrier's call: only `call.completed` or `call.missed` now; the recording and transcript
     * arrive later in webhooks of their own (`onCarrierEvent`), each with its event.
     */
    readonly mediaLater?: boolean
  }) =>
    Effect.gen(function* () {
      const { plan, line, end } = args
      const outcome = outcomeOf(plan)
      const ws = line.workspaceId
      const { uuid } = yield* Ids
      const id = args.id ?? uuid()
      const media: Array<StoredMedia> = []
      if (outcome.recorded && end.recording !== null) {
        const key = `call_${id}.wav`
        yield* blobs.put(ws, key, end.recording.bytes, end.recording.contentType)
        media.push({ key, contentType: end.recording.contentType, size: end.recording.bytes.length, filename: outcome.type === "voicemail" ? "voicemail.wav" : "recording.wav" })
      }
      const summary = outcome.recorded ? end.summary : null
      const details: CallDetails = {
        ...args.details,
        status: outcome.status,
        answeredBy: outcome.answeredBy,
        durationSeconds: end.durationSeconds,
        summary,
        endedAt: new Date(args.startedAt + end.durationSeconds * 1000).toISOString()
      }
      const createdAt = new Date(args.startedAt).toISOString()
      return yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* tx.lock(phoneLock(ws, line.participant))
          const message = { at: createdAt, preview: previewOf(outcome.type, outcome.status, plan.direction) }
          const thread = plan.direction === "inbound" ? yield* threads.inbound(line, message) : yield* threads.outbound(line, message)
          const activity = newActivity({
            id,
            workspaceId: ws,
            conversationId: thread.id,
            type: outcome.type,
            direction: plan.direction,
            media,
            call: details,
            callTranscript: outcome.recorded && !args.mediaLater ? end.transcript : null,
            createdAt
          })
          yield* store.insertActivity(activity)
          const facts = { ...args.facts, conversationId: thread.id, inboxId: thread.inboxId, activityId: id, summary }
          yield* outbox.append(ws, args.mediaLater ? [endedEvent(plan, facts)] : recordedEvents(plan, facts))
          return { activity, thread }
        })
      )
    })

  /** The published, enabled agent's configuration, if any. */
  const liveAgent = (workspaceId: string) =>
    Effect.map(agents.get(workspaceId), (found) =>
      Option.flatMap(found, (agent) =>
        agent.published !== null && agent.published.enabled ? Option.some({ id: agent.id, config: agent.published, assistantId: agent.carrierAssistantId }) : Option.none()
      )
    )

  /** What the live signals of an inbound call to `number` say. */
  const inboundFacts = (number: NumberRecord, route: Route, carrierCallId: string, from: string | null, callerName: string | null) =>
    Effect.gen(function* () {
      const assigned = number.number.assignedUserId
      const facts: LiveFacts = {
        carrierCallId,
        numberE164: number.number.e164,
        from,
        callerName,
        memberUid: route.kind === "app" ? (assigned ?? TEAM_MEMBER) : null,
        memberSeesNumber: assigned !== null || (yield* numbers.list(number.workspaceId)).length === 1,
        flow: SIMULATED_FLOW
      }
      return facts
    })

  /**
   * An inbound call to a workspace number, routed by the number's voice mode and the agent's hours
   * at the time it arrives, played through `scenario` (the simulator) and recorded.
   */
  const receive = (call: InboundCall) =>
    Effect.gen(function* () {
      const to = yield* phoneField("to", call.to)
      const from = call.from === null ? null : yield* phoneField("from", call.from)
      const number = yield* Effect.flatMap(numbers.findByE164(to), Effect.orElseFail(() => new NotFound({ message: `${to} is not a workspace number` })))
      const ws = number.workspaceId
      const startedAt = yield* Clock.currentTimeMillis
      const agent = yield* agents.get(ws)
      const route = routeInbound(number.number, Option.getOrNull(agent), startedAt)
      const plan: CallPlan = { direction: "inbound", scenario: call.scenario, route }
      const outcome = outcomeOf(plan)
      const facts = yield* inboundFacts(number, route, call.carrierCallId, from, call.callerName)
      // Live signals: sent as the call arrives, before it has a timeline entry.
      yield* tx.withTransaction(outbox.append(ws, liveEvents(plan, facts)))
      const durationSeconds = call.durationSeconds ?? defaultDuration(outcome)
      const greeting = Option.match(agent, { onNone: () => null, onSome: (a) => a.published?.greeting ?? null })
      const played =
        outcome.type === "voicemail"
          ? voicemailLeft(durationSeconds)
          : answeredCall(outcome.answeredBy === "agent" ? "agent" : "member", durationSeconds, greeting)
      const end = simulatedEnd(outcome.status === "completed", durationSeconds, played)
      return yield* recordCall({
        plan,
        line: { workspaceId: ws, numberE164: number.number.e164, participant: from ?? WITHHELD, inboxId: number.inboxId },
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

  /** The sending number: one the caller named, else the first active local one. */
  const callerNumber = (workspaceId: string, raw: string | undefined) =>
    Effect.gen(function* () {
      const active = yield* numbers.listActive(workspaceId)
      if (active.length === 0) return yield* noActiveNumber
      if (raw === undefined) return active.find((n) => n.number.type === "local") ?? active[0]!
      const parsed = normalizePhone(raw)
      if (Either.isLeft(parsed)) return yield* new InvalidArgument({ message: `from: ${parsed.left}` })
      const found = active.find((n) => n.number.e164 === parsed.right)
      if (found === undefined) return yield* new NotFound({ message: `from: ${parsed.right} is not an active number of this workspace` })
      return found
    })

  /** What the agent is told for this call: its own instructions, the job's, then the call's. */
  const instructionsFor = (config: AgentConfig, job: AgentConfig["jobs"][number] | undefined, extra: string | undefined) => {
    const parts = [config.instructions, job?.instructions ?? null, extra ?? null].filter((s): s is string => s !== null && s.length > 0)
    return parts.length === 0 ? null : parts.join("\n\n")
  }

  /**
   * `POST /calls`: the published agent calls `to` from `from` (or the default number). Test keys dial
   * nothing: the simulator plays the call (`simulated`). The call is recorded as it ended; its events
   * begin with `call.completed` or `call.missed` (no `call.answered`).
   */
  const place = (p: Principal, input: PlaceCallInput) =>
    Effect.gen(function* () {
      yield* requireScope(p, "calls:place")
      const ws = p.workspaceId
      const agent = yield* Effect.flatMap(liveAgent(ws), Option.match({
        onNone: () => Effect.fail(new FailedPrecondition({ message: "Publish an agent first: outbound calls are placed by the published, enabled agent" })),
        onSome: Effect.succeed
      }))
      const sender: NumberRecord = yield* callerNumber(ws, input.from)
      const to: E164 = yield* phoneField("to", input.to)
      // Toll fraud, and a call to itself: never dialled.
      if (isPremiumRate(to)) return yield* new InvalidArgument({ message: premiumRateProblem("to") })
      if ((yield* numbers.findByE164(to)).pipe(Option.exists((n) => n.workspaceId === ws))) {
        return yield* new InvalidArgument({ message: "to: is one of this workspace's own numbers" })
      }
      const job = input.job === undefined ? undefined : agent.config.jobs.find((j) => j.name === input.job)
      if (input.job !== undefined && job === undefined) {
        return yield* new InvalidArgument({ message: `job: the published agent has no job named ${displayText(input.job, 60)}` })
      }
      const purpose = job?.name ?? input.instructions ?? null
      const { uuid } = yield* Ids
      const callId = uuid()
      const request: DialRequest = {
        workspaceId: ws,
        callId,
        from: sender.number.e164,
        to,
        agentId: agent.id,
        greeting: agent.config.greeting,
        instructions: instructionsFor(agent.config, job, input.instructions),
        purpose,
        assistantId: agent.assistantId,
        clientState: encodeDialState({ workspaceId: ws, callId })
      }
      const simulated = p.kind === "test"
      const startedAt = yield* Clock.currentTimeMillis
      const dialed: Dialed = simulated
        ? { carrierCallId: `sim_call_${uuid()}`, callControlId: `sim_call_${callId}`, ended: simulatedPlacedCall(request.greeting, purpose) }
        : yield* voice.dial(request).pipe(
            Effect.mapError((e) =>
              e.reason === "rejected"
                ? new FailedPrecondition({ message: `The carrier refused the call: ${e.message}` })
                : new Internal({ message: `The carrier is unavailable (${e.message}); retry with the same Idempotency-Key` })
            )
          )
      const line: Line = { workspaceId: ws, numberE164: sender.number.e164, participant: to, inboxId: sender.inboxId }
      const jobName = job?.name ?? null
      if (dialed.ended === undefined) {
        const createdAt = new Date(startedAt).toISOString()
        const thread = yield* tx.withTransaction(
          Effect.gen(function* () {
            yield* tx.lock(phoneLock(ws, to))
            yield* sessions.insert({
              carrierCallId: dialed.carrierCallId,
              callControlId: dialed.callControlId,
              workspaceId: ws,
              numberE164: sender.number.e164,
              participant: to,
              callerName: null,
              direction: "outbound",
              route: null,
              startedAt: createdAt,
              answeredAt: null,
              answeredBy: null,
              agentId: agent.id,
              job: jobName,
              activityId: null,
              reservedActivityId: callId,
              conversationId: null,
              recordingRefused: false
            })
            return yield* threads.outbound(line, { at: createdAt, preview: "Outgoing call" })
          })
        )
        // Under way: recorded (with this id) when the carrier reports its hangup.
        const call: CallItem = {
          id: callId,
          conversationId: thread.id,
          type: "call",
          direction: "outbound",
          status: "in_progress",
          from: sender.number.e164,
          to,
          numberE164: sender.number.e164,
          durationSeconds: 0,
          answeredBy: null,
          agentId: agent.id,
          carrierCallId: dialed.carrierCallId,
          recordingUrl: null,
          transcript: null,
          summary: null,
          createdAt,
          endedAt: null
        }
        const result: PlaceCallResult = { call, conversationId: thread.id }
        return result
      }
      const { activity, thread } = yield* recordCall({
        id: callId,
        plan: { direction: "outbound", scenario: dialed.ended.answered ? "answered" : "missed" },
        line,
        startedAt,
        facts: { carrierCallId: dialed.carrierCallId, numberE164: sender.number.e164, from: sender.number.e164, callerName: null, memberUid: null, memberSeesNumber: false, flow: SIMULATED_FLOW },
        details: { from: sender.number.e164, to, agentId: agent.id, memberUid: null, forwardedTo: null, carrierCallId: dialed.carrierCallId, job: jobName, ...(simulated ? { simulated: true } : {}) },
        end: dialed.ended
      })
      const result: PlaceCallResult = { call: yield* itemOf(activity, thread), conversationId: thread.id, ...(simulated ? { simulated: true as const } : {}) }
      return result
    })

  /** `POST /test-helpers/inbound-calls`: an inbound call from `from` (null: withheld) to the caller's number `to`. */
  const simulateInbound = (p: Principal, input: SimulatedCallInput) =>
    Effect.gen(function* () {
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
      return { call: yield* itemOf(activity, thread), carrierCallId }
    })

  // ---------------------------------------------------------------------------------- carrier calls

  const callLock = (carrierCallId: string) => `call:${carrierCallId}`
  const retryLater = (message: string) => new Internal({ message })

  /** What a carrier is told to do with an inbound call; an `app` call rings nobody (there is no softphone) and rings out as missed. */
  const actionOf = (route: Route, assistantId: string | null): InboundAction | null =>
    route.kind === "agent" ? { kind: "agent", assistantId } : route.kind === "voicemail" ? { kind: "voicemail" } : route.kind === "forward" ? route : null

  /**
   * How the call stands: an outbound call was answered or not; an inbound one as its route says,
   * the `app` route always missed (nobody can pick up), `voicemail` a voicemail once we answered.
   */
  const planOf = (session: CallSession): CallPlan => {
    const answered = session.answeredAt !== null
    if (session.route === null) return { direction: "outbound", scenario: answered ? "answered" : "missed" }
    const scenario = !answered || session.route.kind === "app" ? "missed" : session.route.kind === "voicemail" ? "voicemail" : "answered"
    return { direction: "inbound", scenario, route: session.route }
  }

  const sessionFacts = (session: CallSession): LiveFacts => ({
    carrierCallId: session.carrierCallId,
    numberE164: session.numberE164,
    from: session.direction === "inbound" ? fromOf(session.participant) : session.numberE164,
    callerName: session.callerName,
    memberUid: null,
    memberSeesNumber: false,
    flow: SIMULATED_FLOW
  })

  /** The client state sent with each command, echoed in the call's later webhooks. */
  const clientStateOf = (session: CallSession) => encodeInboundState({ workspaceId: session.workspaceId, carrierCallId: session.carrierCallId })

  /**
   * A new inbound call: routed as it arrives, its session stored with `call.ringing` (and
   * `call.forwarded`) in one transaction, then the carrier told what to do. A repeated `Initiated`
   * sends the command again (the carrier dedupes on its command id); a carrier outage fails the
   * webhook so the carrier delivers it again.
   */
  const onInitiated = (e: Extract<CarrierCallEvent, { readonly _tag: "Initiated" }>) =>
    Effect.gen(function* () {
      if (e.direction !== "inbound") return
      const to = normalizePhone(e.to)
      const found = Either.isRight(to) ? yield* numbers.findByE164(to.right) : Option.none()
      if (Option.isNone(found)) return yield* Effect.logWarning("Carrier call to a number no workspace holds", displayText(e.to, 40))
      const number = found.value
      const startedAt = yield* Clock.currentTimeMillis
      const agent = Option.getOrNull(yield* agents.get(number.workspaceId))
      const route = routeInbound(number.number, agent, startedAt)
      // A caller with no phone number (withheld, a SIP address) is taken like any other, `from` null.
      const participant = callerOf(e.from)
      const from = fromOf(participant)
      const fresh: CallSession = {
        carrierCallId: e.callSessionId,
        callControlId: e.callControlId,
        workspaceId: number.workspaceId,
        numberE164: number.number.e164,
        participant,
        callerName: e.callerName,
        direction: "inbound",
        route,
        startedAt: new Date(startedAt).toISOString(),
        answeredAt: null,
        answeredBy: null,
        agentId: route.kind === "agent" ? route.agentId : null,
        job: null,
        activityId: null,
        reservedActivityId: null,
        conversationId: null,
        recordingRefused: false
      }
      const facts = yield* inboundFacts(number, route, e.callSessionId, from, e.callerName)
      const session = yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* tx.lock(callLock(e.callSessionId))
          if (!(yield* sessions.insert(fresh))) return yield* sessions.get(e.callSessionId)
          yield* outbox.append(number.workspaceId, liveEvents({ direction: "inbound", scenario: "missed", route }, facts))
          return Option.some(fresh)
        })
      )
      if (Option.isNone(session) || session.value.activityId !== null || session.value.route === null) return
      const action = actionOf(session.value.route, agent?.carrierAssistantId ?? null)
      if (action === null) return
      yield* voice.handle(session.value.callControlId, action, clientStateOf(session.value)).pipe(
        Effect.catchAll((error) =>
          error.reason === "rejected"
            ? Effect.logWarning("The carrier refused to route the call; it rings out", error.message)
            : Effect.fail(retryLater(`The carrier is unavailable (${error.message}); deliver the event again`))
        )
      )
    })

  /**
   * An event of a call with no session: one we dialed whose session is not stored yet (the dial's
   * answer and its first webhooks race) is delivered again; any other is not ours and is dropped.
   */
  const unknownCall = (clientState: string | null) =>
    Option.isSome(dialState(clientState ?? "")) ? Effect.fail(retryLater("The call is not known here yet; deliver the event again")) : Effect.void

  /** Someone picked up: the agent's `call.answered` (SPEC's only answered signal a carrier call sends), written with the session. */
  const onAnswered = (carrierCallId: string, clientState: string | null) =>
    tx.withTransaction(
      Effect.gen(function* () {
        yield* tx.lock(callLock(carrierCallId))
        const found = yield* sessions.get(carrierCallId)
        if (Option.isNone(found)) return yield* unknownCall(clientState)
        if (found.value.answeredAt !== null || found.value.activityId !== null) return
        const s = found.value
        const route = s.route
        const answeredBy = route === null || route.kind === "forward" ? "callee" : route.kind === "agent" ? "agent" : null
        const answered: CallSession = { ...s, answeredAt: new Date(yield* Clock.currentTimeMillis).toISOString(), answeredBy }
        yield* sessions.put(answered)
        if (route?.kind === "agent") {
          const plan = planOf(answered)
          yield* outbox.append(s.workspaceId, liveEvents(plan, sessionFacts(answered)).filter((ev) => ev.type === "call.answered"))
        }
      })
    )

  /** The call ended: its activity and `call.completed` or `call.missed`, once. */
  const onHangup = (e: Extract<CarrierCallEvent, { readonly _tag: "Hangup" }>) =>
    tx.withTransaction(
      Effect.gen(function* () {
        yield* tx.lock(callLock(e.callSessionId))
        const found = yield* sessions.get(e.callSessionId)
        if (Option.isNone(found)) return yield* unknownCall(e.clientState)
        if (found.value.activityId !== null) return
        const s = found.value
        const number = yield* numbers.findByE164(s.numberE164)
        if (Option.isNone(number) || number.value.workspaceId !== s.workspaceId) {
          return yield* Effect.logWarning("A carrier call ended on a number the workspace no longer holds", s.numberE164)
        }
        // Stored as E.164 or `withheld`.
        const participant = callerOf(s.participant)
        const startedAt = Date.parse(s.startedAt)
        const plan = planOf(s)
        const outcome = outcomeOf(plan)
        const durationSeconds = e.durationSeconds ?? Math.max(0, Math.round(((yield* Clock.currentTimeMillis) - startedAt) / 1000))
        const facts = sessionFacts(s)
        const { activity } = yield* recordCall({
          plan,
          line: { workspaceId: s.workspaceId, numberE164: s.numberE164, participant, inboxId: number.value.inboxId },
          startedAt,
          facts,
          details: {
            from: s.direction === "inbound" ? facts.from : s.numberE164,
            to: s.direction === "inbound" ? s.numberE164 : participant,
            agentId: s.agentId,
            memberUid: null,
            forwardedTo: s.route?.kind === "forward" ? s.route.to : null,
            carrierCallId: s.carrierCallId,
            job: s.job
          },
          end: { answered: outcome.status === "completed", durationSeconds, transcript: [], summary: null, recording: null },
          mediaLater: true,
          ...(s.reservedActivityId === null ? {} : { id: s.reservedActivityId })
        })
        yield* sessions.put({ ...s, activityId: activity.id })
      })
    )

  /** The recorded call's references for its later events; none until its hangup is recorded. */
  const recordedCall = (s: CallSession) =>
    Effect.gen(function* () {
      if (s.activityId === null) return yield* retryLater("The call has not ended here yet; deliver the event again")
      const activity = yield* store.getActivity(s.workspaceId, s.activityId)
      const number = yield* numbers.findByE164(s.numberE164)
      const inboxId = Option.match(number, { onNone: () => "", onSome: (n) => n.inboxId })
      return Option.map(activity, (a) => ({
        activity: a,
        ref: { conversationId: a.conversationId, inboxId, activityId: a.id, numberE164: s.numberE164, carrierCallId: s.carrierCallId }
      }))
    })

  /** Updates the call's session under its lock (a concurrent step may have put it meanwhile). */
  const updateSession = (carrierCallId: string, update: (s: CallSession) => CallSession | null) =>
    tx.withTransaction(
      Effect.gen(function* () {
        yield* tx.lock(callLock(carrierCallId))
        const again = yield* sessions.get(carrierCallId)
        const next = Option.isSome(again) ? update(again.value) : null
        if (next !== null) yield* sessions.put(next)
      })
    )

  /**
   * The call's recording (its URLs valid 10 minutes): downloaded through the outbound guard into the
   * blob store (at most MAX_RECORDING_BYTES), then on the activity with `call.recording.completed`
   * (`call.voicemail.completed` for a voicemail), once. A failed download answers 500 so Telnyx
   * delivers the event again; a recording over the cap is logged and left out for good (another
   * try gets the same file), so the transcript and summary do not wait for it.
   */
  const onRecordingSaved = (e: Extract<CarrierCallEvent, { readonly _tag: "RecordingSaved" }>) =>
    Effect.gen(function* () {
      const found = yield* sessions.get(e.callSessionId)
      if (Option.isNone(found)) return
      const s = found.value
      if (s.recordingRefused) return
      const call = yield* recordedCall(s)
      if (Option.isNone(call) || call.value.activity.media.length > 0) return
      const url = e.urls.mp3 ?? e.urls.wav
      if (url === undefined) return yield* Effect.logWarning("A call recording with no URL", s.carrierCallId)
      const fetched = yield* fetcher.fetch(url, RECORDING_LIMITS).pipe(
        Effect.map(Option.some),
        Effect.catchTags({
          MediaTooLarge: (error) =>
            Effect.logWarning("A call recording is too large to keep; the call stays recorded without it", error.message).pipe(
              Effect.zipRight(updateSession(s.carrierCallId, (again) => (again.recordingRefused ? null : { ...again, recordingRefused: true }))),
              Effect.as(Option.none())
            ),
          InvalidArgument: (error) => Effect.fail(retryLater(`The recording could not be downloaded (${error.message}); deliver the event again`))
        })
      )
      if (Option.isNone(fetched)) return
      const audio = fetched.value
      const { activity, ref } = call.value
      const voicemail = activity.type === "voicemail"
      const extension = url === e.urls.mp3 ? "mp3" : "wav"
      const key = `call_${activity.id}.${extension}`
      yield* blobs.put(s.workspaceId, key, audio.bytes, audio.contentType)
      yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* tx.lock(callLock(s.carrierCallId))
          const again = yield* store.getActivity(s.workspaceId, activity.id)
          if (Option.isNone(again) || again.value.media.length > 0) return
          const media: StoredMedia = { key, contentType: audio.contentType, size: audio.bytes.length, filename: `${voicemail ? "voicemail" : "recording"}.${extension}` }
          yield* store.setCallMedia(s.workspaceId, activity.id, [media])
          yield* outbox.append(s.workspaceId, [event(voicemail ? "call.voicemail.completed" : "call.recording.completed", ref)])
        })
      )
    })

  /**
   * The agent's conversation ended: its transcript onto the call's activity with
   * `call.transcript.completed`, once. Before the hangup is recorded, or while the carrier is
   * unavailable, the webhook fails so the carrier delivers it again.
   */
  const onConversationEnded = (e: Extract<CarrierCallEvent, { readonly _tag: "ConversationEnded" }>) =>
    Effect.gen(function* () {
      if (e.callSessionId === null) return
      const found = yield* sessions.get(e.callSessionId)
      if (Option.isNone(found)) return
      const s = found.value
      // Named first, so the conversation's insights find the call even while this event waits.
      if (s.conversationId === null) yield* updateSession(s.carrierCallId, (again) => (again.conversationId === null ? { ...again, conversationId: e.conversationId } : null))
      const call = yield* recordedCall(s)
      if (Option.isNone(call) || call.value.activity.callTranscript !== null) return
      // SPEC's order: the recording's event comes before the transcript's (unless the recording was refused as too large).
      if (outcomeOf(planOf(s)).recorded && call.value.activity.media.length === 0 && !s.recordingRefused) {
        return yield* retryLater("The call's recording has not arrived yet; deliver the event again")
      }
      const transcript = yield* voice.conversationTranscript(e.conversationId, s.startedAt).pipe(
        Effect.catchAll((error) =>
          error.reason === "rejected"
            ? Effect.as(Effect.logWarning("The carrier refused the call's transcript", error.message), null)
            : Effect.fail(retryLater(`The carrier is unavailable (${error.message}); deliver the event again`))
        )
      )
      const { activity, ref } = call.value
      yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* tx.lock(callLock(s.carrierCallId))
          const again = yield* store.getActivity(s.workspaceId, activity.id)
          if (Option.isNone(again) || again.value.callTranscript !== null) return
          // A refused transcript is stored empty and sends no event: the summary, which waits for
          // the transcript (SPEC's order), must not wait for it forever.
          yield* store.setCallTranscript(s.workspaceId, activity.id, transcript ?? [])
          if (transcript !== null) yield* outbox.append(s.workspaceId, [transcriptEvent(ref)])
        })
      )
    })

  /**
   * The assistant's conversation has its AI summary: fetched from the carrier onto the call's
   * activity (`call.summary`) with `call.summary.completed` (inbound calls; SPEC's outbound order has
   * none), once. The call is found by the conversation (named by `ConversationEnded`), else by the
   * call's id when the carrier sends it. The webhook fails, so the carrier delivers it again, until
   * the call is known, has ended and has its transcript (SPEC's order: the summary comes last), and
   * while the insights are still being made or the carrier is unavailable.
   */
  const onInsightsGenerated = (e: Extract<CarrierCallEvent, { readonly _tag: "InsightsGenerated" }>) =>
    Effect.gen(function* () {
      const named = yield* sessions.findByConversation(e.conversationId)
      const found = Option.isSome(named) || e.callSessionId === null ? named : yield* sessions.get(e.callSessionId)
      if (Option.isNone(found)) {
        // Ours (by client_state) before its conversation was named: wait; any other conversation is not a call of ours.
        return ourClientState(e.clientState) ? yield* retryLater("The conversation's call is not known here yet; deliver the event again") : undefined
      }
      const s = found.value
      const call = yield* recordedCall(s)
      if (Option.isNone(call) || decodeDetails(call.value.activity.call).summary !== null) return
      if (call.value.activity.callTranscript === null) return yield* retryLater("The call's transcript has not arrived yet; deliver the event again")
      const insights = yield* voice.conversationSummary(e.conversationId).pipe(
        Effect.catchAll((error) =>
          error.reason === "rejected"
            ? Effect.as(Effect.logWarning("The carrier refused the conversation's insights", error.message), null)
            : Effect.fail(retryLater(`The carrier is unavailable (${error.message}); deliver the event again`))
        )
      )
      if (insights === null) return
      if (insights._tag === "Pending") return yield* retryLater("The conversation's insights are still being made; deliver the event again")
      const summary = insights.text
      if (summary === null) return yield* Effect.logWarning("The conversation's insights hold no summary", s.carrierCallId)
      const { activity, ref } = call.value
      yield* tx.withTransaction(
        Effect.gen(function* () {
          yield* tx.lock(callLock(s.carrierCallId))
          const again = yield* store.getActivity(s.workspaceId, activity.id)
          if (Option.isNone(again) || decodeDetails(again.value.call).summary !== null) return
          yield* store.setCallSummary(s.workspaceId, activity.id, summary)
          if (s.direction === "inbound") yield* outbox.append(s.workspaceId, [summaryEvent(ref, outcomeOf(planOf(s)).answeredBy === "agent", summary)])
        })
      )
    })

  /**
   * A carrier's call webhook (Telnyx Call Control). Each step is recorded once, whatever the carrier
   * repeats; an `Internal` failure asks the carrier to deliver the event again. Telnyx's recording
   * transcriptions (`TranscriptionSaved`) are not used: the transcript is the assistant's conversation.
   */
  const onCarrierEvent = (e: CarrierCallEvent): Effect.Effect<void, Internal> => {
    switch (e._tag) {
      case "Initiated":
        return onInitiated(e)
      case "Answered":
        return onAnswered(e.callSessionId, e.clientState)
      case "Hangup":
        return onHangup(e)
      case "ConversationEnded":
        return onConversationEnded(e)
      case "RecordingSaved":
        return onRecordingSaved(e)
      case "InsightsGenerated":
        return onInsightsGenerated(e)
      case "TranscriptionSaved":
        return Effect.void
    }
  }

  return { list, place, receive, recordCall, simulateInbound, onCarrierEvent } as const
})

export class Calls extends Context.Tag("core/Calls")<Calls, Effect.Effect.Success<typeof make>>() {}
export const layer = Layer.effect(Calls, make)
