/**
 * A real carrier's calls (Telnyx Call Control webhooks, parsed into `CarrierCallEvent` by the
 * adapter): each step's state (call session, activity, recording, transcript, summary) commits with
 * the event that reports it, once, whatever the carrier repeats; a step that arrives before its
 * predecessors is kept on the call's session and done in its turn (SPEC's event order), not failed
 * for the carrier to send again. A call's session (sessions.ts) holds what its first webhook
 * decided for the later ones.
 *
 * An `app` call rings the team: each teammate's phone is a leg of the call (`Voice.ring`) whose
 * webhooks carry our `RingState`; the first to pick up takes the call (`call.answered` with
 * `memberUid`, decided under the call's lock) and is joined to the caller (`Voice.connect`), the other
 * legs are hung up; once every leg is over with nobody on it (rang out, refused) the caller is taken
 * to voicemail: the session's route becomes `voicemail` and the voicemail's steps follow.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import { type Route, routeInbound } from "../agent/hours.ts"
import { AgentStore } from "../agent/store.ts"
import { WITHHELD } from "../conversations/model.ts"
import { ConversationStore } from "../conversations/store.ts"
import { event } from "../events/catalog.ts"
import { EventOutbox } from "../events/outbox.ts"
import { displayText } from "../kernel/display.ts"
import { Internal } from "../kernel/errors.ts"
import { normalizePhone } from "../kernel/phone.ts"
import { Transactor } from "../kernel/transactor.ts"
import { BlobStore, MediaFetcher, RECORDING_LIMITS, type StoredMedia } from "../media/model.ts"
import type { Participant } from "../messaging/threads.ts"
import { NumberStore } from "../numbers/model.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import {
  type CallPlan,
  liveEvents,
  type LiveFacts,
  outcomeOf,
  SIMULATED_FLOW,
  summaryEvent,
  transcriptEvent
} from "./events.ts"
import type { History } from "./history.ts"
import type { Inbound } from "./inbound.ts"
import { decodeCallDetails } from "./model.ts"
import {
  callLock,
  type CallSession,
  CallSessionStore,
  dialingId,
  RING_SECONDS,
  type RingLeg,
  startSession
} from "./sessions.ts"
import {
  type CarrierCallEvent,
  DialState,
  type InboundAction,
  Voice,
  type VoiceError,
  type VoicemailStep
} from "./voice.ts"

/** A carrier's caller (or a session's stored party): their number, or withheld (the thread withheld callers share) when there is none. */
const callerOf = (raw: string): Participant => Either.getOrElse(normalizePhone(raw), () => WITHHELD)

/** A caller's number for the call's events and `call` object: null when withheld. */
const fromOf = (participant: string): string | null => (participant === WITHHELD ? null : participant)

const dialState = Schema.decodeUnknownOption(DialState)
/** The `client_state` of the commands for an inbound call (echoed in its later webhooks). */
const InboundState = Schema.parseJson(Schema.Struct({ workspaceId: Schema.String, carrierCallId: Schema.String }))
const inboundState = Schema.decodeUnknownOption(InboundState)
const encodeInboundState = Schema.encodeSync(InboundState)
/** The `client_state` of a teammate's leg of an `app` call: the call, and whose phone it rings. */
const RingState = Schema.parseJson(
  Schema.Struct({ workspaceId: Schema.String, carrierCallId: Schema.String, memberUid: Schema.String })
)
const ringState = Schema.decodeUnknownOption(RingState)
const encodeRingState = Schema.encodeSync(RingState)

const retryLater = (message: string) => new Internal({ message })

/** What a voicemail says before the beep: the published agent's greeting, else one naming the workspace. */
export const voicemailGreeting = (agentGreeting: string | null, workspaceName: string): string =>
  agentGreeting !== null && agentGreeting.trim() !== ""
    ? agentGreeting.trim()
    : `You have reached ${workspaceName}. Please leave a message after the tone.`

/** A voicemail transcription as the activity's `callTranscript`: the caller alone speaks. */
const voicemailTranscript = (text: string) =>
  text.trim() === "" ? [] : [{ speaker: "caller" as const, text: text.trim(), offsetSeconds: 0 }]

/** What a carrier is told to do with an inbound call; an `app` call rings the team instead (`ringTeam`). */
const actionOf = (route: Route, assistantId: string | null): InboundAction | null =>
  route.kind === "agent"
    ? { kind: "agent", assistantId }
    : route.kind === "voicemail"
    ? { kind: "voicemail" }
    : route.kind === "forward"
    ? route
    : null

/**
 * How the call stands: an outbound call was answered or not; an inbound one as its route says
 * (`app`: a teammate took it), `voicemail` a voicemail once we answered.
 */
const planOf = (session: CallSession): CallPlan => {
  const answered = session.answeredAt !== null
  if (session.route === null) return { direction: "outbound", scenario: answered ? "answered" : "missed" }
  const scenario = !answered
    ? "missed"
    : session.route.kind === "voicemail"
    ? "voicemail"
    : "answered"
  return { direction: "inbound", scenario, route: session.route }
}

const sessionFacts = (session: CallSession): LiveFacts => ({
  carrierCallId: session.carrierCallId,
  numberE164: session.numberE164,
  from: session.direction === "inbound" ? fromOf(session.participant) : session.numberE164,
  callerName: session.callerName,
  memberUid: session.memberUid,
  memberSeesNumber: false,
  flow: SIMULATED_FLOW
})

/** The client state sent with each command, echoed in the call's later webhooks. */
const clientStateOf = (session: CallSession) =>
  encodeInboundState({ workspaceId: session.workspaceId, carrierCallId: session.carrierCallId })

export const makeCarrierEvents = (
  history: Pick<History, "recordCall">,
  inbound: Pick<Inbound, "withTeam" | "inboundFacts">
) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const numbers = yield* NumberStore
    const agents = yield* AgentStore
    const tx = yield* Transactor
    const outbox = yield* EventOutbox
    const blobs = yield* BlobStore
    const voice = yield* Voice
    const sessions = yield* CallSessionStore
    const fetcher = yield* MediaFetcher
    const workspaces = yield* WorkspaceStore

    /**
     * A new inbound call: routed as it arrives, its session stored with `call.ringing` (and
     * `call.forwarded`) in one transaction, then the carrier told what to do. A repeated `Initiated`
     * sends the command again (the carrier dedupes on its command id); a carrier outage fails the
     * webhook so the carrier delivers it again.
     */
    const onInitiated = (e: Extract<CarrierCallEvent, { readonly _tag: "Initiated" }>) =>
      Effect.gen(function*() {
        if (e.direction !== "inbound") return
        const to = normalizePhone(e.to)
        const found = Either.isRight(to) ? yield* numbers.findByE164(to.right) : Option.none()
        if (Option.isNone(found)) {
          return yield* Effect.logWarning("Carrier call to a number no workspace holds", displayText(e.to, 40))
        }
        const number = found.value
        const startedAt = yield* Clock.currentTimeMillis
        const agent = Option.getOrNull(yield* agents.get(number.workspaceId))
        const { route, team } = yield* inbound.withTeam(
          number.workspaceId,
          routeInbound(number.number, agent, startedAt)
        )
        // A caller with no phone number (withheld, a SIP address) is taken like any other, `from` null.
        const participant = callerOf(e.from)
        const from = fromOf(participant)
        const fresh = startSession({
          carrierCallId: e.callSessionId,
          callControlId: e.callControlId,
          workspaceId: number.workspaceId,
          numberE164: number.number.e164,
          participant,
          callerName: e.callerName,
          direction: "inbound",
          route,
          ringLegs: route.kind === "app"
            ? team.map((m): RingLeg => ({ memberUid: m.id, phone: m.phone, callControlId: null, ended: false }))
            : null,
          startedAt: new Date(startedAt).toISOString(),
          agentId: route.kind === "agent" ? route.agentId : null,
          job: null,
          reservedActivityId: null
        })
        const facts = yield* inbound.inboundFacts(number, e.callSessionId, from, e.callerName, null)
        const session = yield* tx.withTransaction(
          Effect.gen(function*() {
            yield* tx.lock(callLock(e.callSessionId))
            if (!(yield* sessions.insert(fresh))) {
              return yield* sessions.get(e.callSessionId)
            }
            yield* outbox.append(
              number.workspaceId,
              liveEvents({ direction: "inbound", scenario: "missed", route }, facts)
            )
            return Option.some(fresh)
          })
        )
        if (Option.isNone(session) || session.value.activityId !== null || session.value.route === null) return
        if (session.value.route.kind === "app") return yield* ringTeam(session.value)
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

    /** A carrier outage fails the webhook so the carrier delivers it again; a refusal is logged. */
    const unlessRefused = (what: string) => (error: VoiceError) =>
      error.reason === "rejected"
        ? Effect.logWarning(`The carrier refused ${what}`, error.message)
        : Effect.fail(retryLater(`The carrier is unavailable (${error.message}); deliver the event again`))

    /** Whether nobody can take the call any more: every phone rung is done with and nobody picked up. */
    const rangOut = (s: CallSession) =>
      s.route?.kind === "app" && s.answeredAt === null && s.activityId === null &&
      (s.ringLegs ?? []).every((leg) => leg.ended)

    /**
     * Every teammate's phone at once (legs the carrier has not named yet; a repeated `Initiated` rings
     * none twice: each dial carries a command id). A refused dial ends its leg; once all are over
     * with nobody on the call, the caller goes to voicemail.
     */
    const ringTeam = (s: CallSession) =>
      Effect.gen(function*() {
        for (const leg of s.ringLegs ?? []) {
          if (leg.callControlId !== null || leg.ended) continue
          const clientState = encodeRingState({
            workspaceId: s.workspaceId,
            carrierCallId: s.carrierCallId,
            memberUid: leg.memberUid
          })
          const dialed = yield* voice.ring({
            callControlId: s.callControlId,
            from: s.numberE164,
            to: leg.phone,
            memberUid: leg.memberUid,
            ringSeconds: RING_SECONDS,
            clientState
          }).pipe(
            Effect.map((d) => d.callControlId),
            Effect.catchAll((error) =>
              error.reason === "rejected"
                ? Effect.as(Effect.logWarning("The carrier refused to ring a teammate's phone", error.message), null)
                : Effect.fail(retryLater(`The carrier is unavailable (${error.message}); deliver the event again`))
            )
          )
          yield* updateLeg(s.carrierCallId, leg.memberUid, (l) =>
            dialed === null
              ? { ...l, ended: true }
              : { ...l, callControlId: l.callControlId ?? dialed })
        }
        yield* settleRing(s.carrierCallId)
      })

    /** Changes one leg of the call's ring under the call's lock. */
    const updateLeg = (carrierCallId: string, memberUid: string, change: (leg: RingLeg) => RingLeg) =>
      updateSession(carrierCallId, (again) =>
        again.ringLegs === null ? null : {
          ...again,
          ringLegs: again.ringLegs.map((l) => (l.memberUid === memberUid ? change(l) : l))
        })

    /**
     * What the ring comes to once a leg moved: the legs nobody needs hung up (another teammate took
     * the call, or the call is over or went to voicemail), and the caller taken to voicemail when the
     * last phone rang out. Hang-ups are best effort: the carrier ends an unanswered leg itself when
     * its ring time runs out.
     */
    const settleRing = (carrierCallId: string) =>
      Effect.gen(function*() {
        const voicemail = yield* tx.withTransaction(
          Effect.gen(function*() {
            yield* tx.lock(callLock(carrierCallId))
            const found = yield* sessions.get(carrierCallId)
            if (Option.isNone(found) || !rangOut(found.value)) return Option.none<CallSession>()
            const next: CallSession = { ...found.value, route: { kind: "voicemail" } }
            yield* sessions.put(next)
            return Option.some(next)
          })
        )
        if (Option.isSome(voicemail)) {
          const s = voicemail.value
          yield* voice.handle(s.callControlId, { kind: "voicemail" }, clientStateOf(s)).pipe(
            Effect.catchAll(unlessRefused("to take the call to voicemail after the team's phones rang out"))
          )
        }
        const found = yield* sessions.get(carrierCallId)
        if (Option.isNone(found)) return
        const s = found.value
        const over = s.memberUid !== null || s.activityId !== null || s.route?.kind !== "app"
        if (!over) return
        for (const leg of s.ringLegs ?? []) {
          if (leg.ended || leg.callControlId === null || leg.memberUid === s.memberUid) continue
          yield* voice.hangup(leg.callControlId).pipe(
            Effect.catchAll((error) => Effect.logWarning("A teammate's phone could not be hung up", error.message))
          )
          yield* updateLeg(carrierCallId, leg.memberUid, (l) => ({ ...l, ended: true }))
        }
      })

    /**
     * A teammate picked up: the first one takes the call (`call.answered` with their id, written with
     * the session under the call's lock) and is joined to the caller; one who picks up after that
     * (or after the caller left or went to voicemail) is hung up on.
     */
    const onMemberAnswered = (
      e: Extract<CarrierCallEvent, { readonly _tag: "Answered" }>,
      ring: { readonly workspaceId: string; readonly carrierCallId: string; readonly memberUid: string }
    ) =>
      Effect.gen(function*() {
        const taken = yield* tx.withTransaction(
          Effect.gen(function*() {
            yield* tx.lock(callLock(ring.carrierCallId))
            const found = yield* sessions.get(ring.carrierCallId)
            if (Option.isNone(found) || found.value.workspaceId !== ring.workspaceId) return null
            const s = found.value
            const legs = (s.ringLegs ?? []).map((l) =>
              l.memberUid === ring.memberUid ? { ...l, callControlId: l.callControlId ?? e.callControlId } : l
            )
            // Theirs already (a repeated webhook): joined again, which the carrier dedupes.
            if (s.memberUid === ring.memberUid) return s
            if (s.route?.kind !== "app" || s.answeredAt !== null || s.activityId !== null) {
              yield* sessions.put({ ...s, ringLegs: legs })
              return null
            }
            const answered: CallSession = {
              ...s,
              ringLegs: legs,
              answeredAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
              answeredBy: "member",
              memberUid: ring.memberUid
            }
            yield* sessions.put(answered)
            const number = yield* numbers.findByE164(s.numberE164)
            const facts = Option.isSome(number)
              ? yield* inbound.inboundFacts(
                number.value,
                s.carrierCallId,
                fromOf(s.participant),
                s.callerName,
                ring.memberUid
              )
              : sessionFacts(answered)
            yield* outbox.append(
              s.workspaceId,
              liveEvents(planOf(answered), facts).filter((ev) => ev.type === "call.answered")
            )
            return answered
          })
        )
        if (taken === null) {
          yield* voice.hangup(e.callControlId).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning("A teammate's late answer could not be hung up", error.message)
            )
          )
          return yield* updateLeg(ring.carrierCallId, ring.memberUid, (l) => ({ ...l, ended: true }))
        }
        yield* voice.connect(taken.callControlId, e.callControlId, clientStateOf(taken)).pipe(
          Effect.catchAll(unlessRefused("to join the teammate to the caller"))
        )
        yield* settleRing(ring.carrierCallId)
      })

    /** A teammate's leg ended (it rang out, was refused, they or we hung up): the ring settles. */
    const onMemberLegEnded = (
      e: Extract<CarrierCallEvent, { readonly _tag: "Hangup" }>,
      ring: { readonly workspaceId: string; readonly carrierCallId: string; readonly memberUid: string }
    ) =>
      Effect.gen(function*() {
        const found = yield* sessions.get(ring.carrierCallId)
        if (Option.isNone(found) || found.value.workspaceId !== ring.workspaceId) return
        yield* updateLeg(
          ring.carrierCallId,
          ring.memberUid,
          (l) => l.ended ? l : { ...l, callControlId: l.callControlId ?? e.callControlId, ended: true }
        )
        yield* settleRing(ring.carrierCallId)
      })

    /**
     * The call's session, by the carrier's id. A call we dialed is stored before the dial is sent,
     * under our id (`dialingId`) until the dial's answer names it; a webhook that beats the answer
     * finds it by our id in its `client_state` and names it. None: not a call of ours (or a dial the
     * carrier refused), and the event is dropped.
     */
    const sessionOf = (carrierCallId: string | null, callControlId: string | null, clientState: string | null) =>
      Effect.gen(function*() {
        if (carrierCallId !== null) {
          const found = yield* sessions.get(carrierCallId)
          if (Option.isSome(found)) {
            return found
          }
        }
        const dialed = dialState(clientState ?? "")
        if (Option.isNone(dialed)) return Option.none<CallSession>()
        const { callId, workspaceId } = dialed.value
        const dialing = dialingId(callId)
        return yield* tx.withTransaction(
          Effect.gen(function*() {
            const found = yield* sessions.findByCallId(callId)
            if (Option.isNone(found) || found.value.workspaceId !== workspaceId) return Option.none<CallSession>()
            if (found.value.carrierCallId !== dialing || carrierCallId === null) return found
            return yield* sessions.rename(dialing, carrierCallId, callControlId)
          }),
          callLock(dialing)
        )
      })

    /**
     * A voicemail's next command, sent once: a refusal (the caller hung up meanwhile: Telnyx answers
     * 422 "Call has already ended") is logged and the call goes on to its hangup; an outage fails the
     * webhook so the carrier delivers it again. The step is stored after the carrier took it.
     */
    const voicemailCommand = (s: CallSession, step: VoicemailStep, done: NonNullable<CallSession["voicemailStep"]>) =>
      voice.voicemailStep(s.callControlId, step, clientStateOf(s)).pipe(
        Effect.zipRight(
          updateSession(
            s.carrierCallId,
            (again) => (again.voicemailStep === done ? null : { ...again, voicemailStep: done })
          )
        ),
        Effect.catchAll((error: VoiceError) =>
          error.reason === "rejected"
            ? Effect.logWarning("The carrier refused the voicemail's next step", error.message)
            : Effect.fail(retryLater(`The carrier is unavailable (${error.message}); deliver the event again`))
        )
      )

    /** A voicemail answered: its greeting, once (until then a repeated `Answered` sends it again). */
    const greet = (s: CallSession) =>
      Effect.gen(function*() {
        if (s.route?.kind !== "voicemail" || s.voicemailStep !== null || s.activityId !== null) return
        const agent = Option.getOrNull(yield* agents.get(s.workspaceId))
        const workspace = yield* workspaces.get(s.workspaceId)
        const name = Option.match(workspace, { onNone: () => "this business", onSome: (w) => w.name })
        const text = voicemailGreeting(agent?.published?.greeting ?? null, name)
        yield* voicemailCommand(s, { kind: "greet", text, language: agent?.published?.language ?? null }, "greeting")
      })

    /** A voicemail's greeting was played: its recording, with the carrier's transcription, once. */
    const onSpeakEnded = (carrierCallId: string) =>
      Effect.gen(function*() {
        const found = yield* sessions.get(carrierCallId)
        if (Option.isNone(found)) return
        const s = found.value
        if (s.route?.kind !== "voicemail" || s.voicemailStep !== "greeting" || s.activityId !== null) return
        yield* voicemailCommand(s, { kind: "record" }, "recording")
      })

    /**
     * Someone picked up: a teammate's leg (`onMemberAnswered`), else the call itself: the agent's
     * `call.answered`, written with the session; a voicemail's greeting then.
     */
    const onAnswered = (e: Extract<CarrierCallEvent, { readonly _tag: "Answered" }>) => {
      const ring = ringState(e.clientState ?? "")
      return Option.isSome(ring) ? onMemberAnswered(e, ring.value) : onCallAnswered(e)
    }

    const onCallAnswered = (e: Extract<CarrierCallEvent, { readonly _tag: "Answered" }>) =>
      tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(callLock(e.callSessionId))
          const found = yield* sessionOf(e.callSessionId, e.callControlId, e.clientState)
          if (Option.isNone(found)) return found
          if (found.value.answeredAt !== null || found.value.activityId !== null) return found
          const s = found.value
          const route = s.route
          // An app call is answered by a teammate's leg (`onMemberAnswered`): this is us answering to join them.
          if (route?.kind === "app") return Option.none<CallSession>()
          const answeredBy = route === null || route.kind === "forward"
            ? "callee"
            : route.kind === "agent"
            ? "agent"
            : null
          const answered: CallSession = {
            ...s,
            answeredAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
            answeredBy
          }
          yield* sessions.put(answered)
          if (route?.kind === "agent") {
            const plan = planOf(answered)
            yield* outbox.append(
              s.workspaceId,
              liveEvents(plan, sessionFacts(answered)).filter((ev) => ev.type === "call.answered")
            )
          }
          return Option.some(answered)
        })
      ).pipe(Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: greet })))

    /**
     * A teammate's leg ended (`onMemberLegEnded`), else the call did: its activity and
     * `call.completed` or `call.missed`, once; then the phones still ringing are hung up.
     */
    const onHangup = (e: Extract<CarrierCallEvent, { readonly _tag: "Hangup" }>) => {
      const ring = ringState(e.clientState ?? "")
      return Option.isSome(ring)
        ? onMemberLegEnded(e, ring.value)
        : Effect.zipRight(onCallEnded(e), settleRing(e.callSessionId))
    }

    const onCallEnded = (e: Extract<CarrierCallEvent, { readonly _tag: "Hangup" }>) =>
      tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(callLock(e.callSessionId))
          const found = yield* sessionOf(e.callSessionId, e.callControlId, e.clientState)
          if (Option.isNone(found) || found.value.activityId !== null) return
          const s = found.value
          const number = yield* numbers.findByE164(s.numberE164)
          if (Option.isNone(number) || number.value.workspaceId !== s.workspaceId) {
            return yield* Effect.logWarning(
              "A carrier call ended on a number the workspace no longer holds",
              s.numberE164
            )
          }
          // Stored as E.164 or `withheld`.
          const participant = callerOf(s.participant)
          const startedAt = Date.parse(s.startedAt)
          const plan = planOf(s)
          const outcome = outcomeOf(plan)
          const durationSeconds = e.durationSeconds ??
            Math.max(0, Math.round(((yield* Clock.currentTimeMillis) - startedAt) / 1000))
          const facts = sessionFacts(s)
          const { activity } = yield* history.recordCall({
            plan,
            line: { workspaceId: s.workspaceId, numberE164: s.numberE164, participant, inboxId: number.value.inboxId },
            startedAt,
            facts,
            details: {
              from: s.direction === "inbound" ? facts.from : s.numberE164,
              to: s.direction === "inbound" ? s.numberE164 : participant,
              agentId: s.agentId,
              memberUid: s.memberUid,
              forwardedTo: s.route?.kind === "forward" ? s.route.to : null,
              carrierCallId: s.carrierCallId,
              job: s.job
            },
            end: {
              answered: outcome.status === "completed",
              durationSeconds,
              transcript: [],
              summary: null,
              recording: null
            },
            mediaLater: true,
            ...(s.reservedActivityId === null ? {} : { id: s.reservedActivityId })
          })
          const recorded = { ...s, activityId: activity.id }
          yield* sessions.put(recorded)
          yield* catchUp(recorded, activity.id, number.value.inboxId)
        })
      )

    /**
     * What arrived before its turn, on the recorded call, each with its event in SPEC's order: a
     * recording stored before the hangup was recorded, then a voicemail's transcription once the
     * recording is on the activity (or was refused as too large). Runs in the caller's transaction,
     * under the call's lock, with the session as last stored; does nothing twice.
     */
    const catchUp = (s: CallSession, activityId: string, inboxId: string) =>
      Effect.gen(function*() {
        const found = yield* store.getActivity(s.workspaceId, activityId)
        if (Option.isNone(found)) return
        const activity = found.value
        const ref = {
          conversationId: activity.conversationId,
          inboxId,
          activityId,
          numberE164: s.numberE164,
          carrierCallId: s.carrierCallId
        }
        let hasMedia = activity.media.length > 0
        if (!hasMedia && s.pendingRecording !== null) {
          yield* store.setCallMedia(s.workspaceId, activityId, [s.pendingRecording])
          yield* outbox.append(s.workspaceId, [
            event(activity.type === "voicemail" ? "call.voicemail.completed" : "call.recording.completed", ref)
          ])
          yield* sessions.put({ ...s, pendingRecording: null })
          hasMedia = true
        }
        if (s.voicemailTranscript === null || activity.callTranscript !== null) return
        if (!hasMedia && !s.recordingRefused) return
        yield* store.setCallTranscript(s.workspaceId, activityId, voicemailTranscript(s.voicemailTranscript))
        yield* outbox.append(s.workspaceId, [transcriptEvent(ref)])
      })

    /** `catchUp` in a transaction of its own, with the session read again under the lock. */
    const catchUpLater = (carrierCallId: string) =>
      tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(callLock(carrierCallId))
          const again = yield* sessions.get(carrierCallId)
          if (Option.isNone(again) || again.value.activityId === null) return
          const number = yield* numbers.findByE164(again.value.numberE164)
          const inboxId = Option.match(number, { onNone: () => "", onSome: (n) => n.inboxId })
          yield* catchUp(again.value, again.value.activityId, inboxId)
        })
      )

    /**
     * A voicemail's transcription (`record_start` with transcription): kept on the call's session at
     * once, then on the activity with `call.transcript.completed` as soon as the hangup and the
     * recording are there (now, or when they arrive), once. Calls the agent answered take the
     * assistant's conversation as their transcript instead.
     */
    const onTranscriptionSaved = (e: Extract<CarrierCallEvent, { readonly _tag: "TranscriptionSaved" }>) =>
      Effect.gen(function*() {
        const found = yield* sessions.get(e.callSessionId)
        if (Option.isNone(found) || found.value.route?.kind !== "voicemail") return
        yield* updateSession(
          e.callSessionId,
          (again) => (again.voicemailTranscript === null ? { ...again, voicemailTranscript: e.text } : null)
        )
        yield* catchUpLater(e.callSessionId)
      })

    /** The recorded call's references for its later events; none until its hangup is recorded. */
    const recordedCall = (s: CallSession) =>
      Effect.gen(function*() {
        if (s.activityId === null) return Option.none()
        const activity = yield* store.getActivity(s.workspaceId, s.activityId)
        const number = yield* numbers.findByE164(s.numberE164)
        const inboxId = Option.match(number, { onNone: () => "", onSome: (n) => n.inboxId })
        return Option.map(activity, (a) => ({
          activity: a,
          ref: {
            conversationId: a.conversationId,
            inboxId,
            activityId: a.id,
            numberE164: s.numberE164,
            carrierCallId: s.carrierCallId
          }
        }))
      })

    /** Updates the call's session under its lock (a concurrent step may have put it meanwhile). */
    const updateSession = (carrierCallId: string, update: (s: CallSession) => CallSession | null) =>
      tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(callLock(carrierCallId))
          const again = yield* sessions.get(carrierCallId)
          const next = Option.isSome(again) ? update(again.value) : null
          if (next !== null) yield* sessions.put(next)
        })
      )

    /**
     * The call's recording (its URLs valid 10 minutes, so fetched even before the hangup is recorded):
     * downloaded through the outbound guard into the blob store (at most MAX_RECORDING_BYTES), then
     * on the activity with `call.recording.completed` (`call.voicemail.completed` for a voicemail),
     * once, after the call's `call.completed`/`call.missed` (`catchUp`). A failed download answers 500
     * so Telnyx delivers the event again (the file is still there to fetch); a recording over the cap
     * is logged and left out for good (another try gets the same file), so the transcript and
     * summary do not wait for it.
     */
    const onRecordingSaved = (e: Extract<CarrierCallEvent, { readonly _tag: "RecordingSaved" }>) =>
      Effect.gen(function*() {
        const found = yield* sessionOf(e.callSessionId, e.callControlId, e.clientState)
        if (Option.isNone(found)) return
        const s = found.value
        if (s.recordingRefused || s.pendingRecording !== null) return
        if (s.activityId !== null) {
          const activity = yield* store.getActivity(s.workspaceId, s.activityId)
          if (Option.isNone(activity) || activity.value.media.length > 0) return
        }
        const url = e.urls.mp3 ?? e.urls.wav
        if (url === undefined) return yield* Effect.logWarning("A call recording with no URL", s.carrierCallId)
        const fetched = yield* fetcher.fetch(url, RECORDING_LIMITS).pipe(
          Effect.map(Option.some),
          Effect.catchTags({
            MediaTooLarge: (error) =>
              Effect.logWarning(
                "A call recording is too large to keep; the call stays recorded without it",
                error.message
              ).pipe(
                Effect.zipRight(
                  updateSession(
                    s.carrierCallId,
                    (again) => (again.recordingRefused ? null : { ...again, recordingRefused: true })
                  )
                ),
                Effect.as(Option.none())
              ),
            InvalidArgument: (error) =>
              Effect.fail(
                retryLater(`The recording could not be downloaded (${error.message}); deliver the event again`)
              )
          })
        )
        if (Option.isNone(fetched)) return yield* catchUpLater(s.carrierCallId)
        const audio = fetched.value
        const voicemail = outcomeOf(planOf(s)).type === "voicemail"
        const extension = url === e.urls.mp3 ? "mp3" : "wav"
        // Named by the activity when known; before the hangup by the carrier's call id (a blob-safe name).
        const name = s.activityId ?? s.reservedActivityId ?? s.carrierCallId.replace(/[^A-Za-z0-9_-]/g, "_")
        const key = `call_${name}.${extension}`
        yield* blobs.put(s.workspaceId, key, audio.bytes, audio.contentType)
        const media: StoredMedia = {
          key,
          contentType: audio.contentType,
          size: audio.bytes.length,
          filename: `${voicemail ? "voicemail" : "recording"}.${extension}`
        }
        // Kept on the session, then on the activity with its event once the hangup is recorded (now or later).
        yield* updateSession(
          s.carrierCallId,
          (
            again
          ) => (again.pendingRecording === null && !again.recordingRefused
            ? { ...again, pendingRecording: media }
            : null)
        )
        yield* catchUpLater(s.carrierCallId)
      })

    /**
     * The agent's conversation ended: named on the call's session, its transcript due, at once; the
     * transcript follows in its turn (`followUp`). Returns the call's id for that.
     */
    const onConversationEnded = (e: Extract<CarrierCallEvent, { readonly _tag: "ConversationEnded" }>) =>
      Effect.gen(function*() {
        const found = yield* sessionOf(e.callSessionId, e.callControlId, e.clientState)
        if (Option.isNone(found)) return null
        yield* updateSession(
          found.value.carrierCallId,
          (again) =>
            again.conversationEnded
              ? null
              : { ...again, conversationId: again.conversationId ?? e.conversationId, conversationEnded: true }
        )
        return found.value.carrierCallId
      })

    /**
     * The assistant's conversation has its AI summary: the call's session notes it at once; the summary
     * follows in its turn (`followUp`). The call is found by the conversation (named by either of its
     * events), else by the call's id or our `client_state` when the carrier sends them (`sessionOf`);
     * one of a conversation on no call of ours is dropped.
     */
    const onInsightsGenerated = (e: Extract<CarrierCallEvent, { readonly _tag: "InsightsGenerated" }>) =>
      Effect.gen(function*() {
        const named = yield* sessions.findByConversation(e.conversationId)
        const carrierCallId = e.callSessionId ??
          Option.getOrNull(Option.map(inboundState(e.clientState ?? ""), (state) => state.carrierCallId))
        const found = Option.isSome(named) ? named : yield* sessionOf(carrierCallId, e.callControlId, e.clientState)
        if (Option.isNone(found)) return null
        yield* updateSession(
          found.value.carrierCallId,
          (again) =>
            again.insightsGenerated
              ? null
              : { ...again, conversationId: again.conversationId ?? e.conversationId, insightsGenerated: true }
        )
        return found.value.carrierCallId
      })

    /** A carrier refusal is logged and answers null; an outage fails, so the carrier delivers the event again. */
    const refusedAsNull = (what: string) => (error: VoiceError) =>
      error.reason === "rejected"
        ? Effect.as(Effect.logWarning(`The carrier refused ${what}`, error.message), null)
        : Effect.fail(retryLater(`The carrier is unavailable (${error.message}); deliver the event again`))

    /**
     * What an agent call's conversation brings, each in its turn in SPEC's order, whichever webhook
     * arrives last: the transcript (with `call.transcript.completed`) once the call is recorded with
     * its recording (or the recording was refused as too large), then the AI summary (`call.summary`,
     * with `call.summary.completed` for an inbound call; SPEC's outbound order has none) once the
     * transcript is on the call. Fetched from the carrier outside any transaction, written once under
     * the call's lock. A carrier outage, or insights still being made, fail the webhook that got here
     * so the carrier delivers it again.
     */
    const followUp = (carrierCallId: string) =>
      Effect.gen(function*() {
        const found = yield* sessions.get(carrierCallId)
        if (Option.isNone(found)) return
        const s = found.value
        const conversationId = s.conversationId
        if (conversationId === null) return
        const call = yield* recordedCall(s)
        if (Option.isNone(call)) return
        const { activity, ref } = call.value
        if (s.conversationEnded && activity.callTranscript === null) {
          if (outcomeOf(planOf(s)).recorded && activity.media.length === 0 && !s.recordingRefused) return
          const transcript = yield* voice.conversationTranscript(conversationId, s.startedAt, s.direction).pipe(
            Effect.catchAll(refusedAsNull("the call's transcript"))
          )
          yield* tx.withTransaction(
            Effect.gen(function*() {
              yield* tx.lock(callLock(carrierCallId))
              const again = yield* store.getActivity(s.workspaceId, activity.id)
              if (Option.isNone(again) || again.value.callTranscript !== null) return
              // A refused transcript is stored empty and sends no event: the summary, which waits for
              // the transcript (SPEC's order), must not wait for it forever.
              yield* store.setCallTranscript(s.workspaceId, activity.id, transcript ?? [])
              if (transcript !== null) yield* outbox.append(s.workspaceId, [transcriptEvent(ref)])
            })
          )
        }
        if (!s.insightsGenerated) return
        const now = yield* store.getActivity(s.workspaceId, activity.id)
        if (
          Option.isNone(now) || now.value.callTranscript === null ||
          decodeCallDetails(now.value.call).summary !== null
        ) return
        const insights = yield* voice.conversationSummary(conversationId).pipe(
          Effect.catchAll(refusedAsNull("the conversation's insights"))
        )
        if (insights === null) return
        if (insights._tag === "Pending") {
          return yield* retryLater("The conversation's insights are still being made; deliver the event again")
        }
        const summary = insights.text
        if (summary === null) {
          return yield* Effect.logWarning("The conversation's insights hold no summary", carrierCallId)
        }
        yield* tx.withTransaction(
          Effect.gen(function*() {
            yield* tx.lock(callLock(carrierCallId))
            const again = yield* store.getActivity(s.workspaceId, activity.id)
            if (Option.isNone(again) || decodeCallDetails(again.value.call).summary !== null) {
              return
            }
            yield* store.setCallSummary(s.workspaceId, activity.id, summary)
            if (s.direction === "inbound") {
              yield* outbox.append(s.workspaceId, [
                summaryEvent(ref, outcomeOf(planOf(s)).answeredBy === "agent", summary)
              ])
            }
          })
        )
      })

    /** Runs `step`, then what it may have let through (`followUp`) on the call it names. */
    const thenFollowUp = <E, R>(step: Effect.Effect<string | null, E, R>) =>
      Effect.flatMap(step, (carrierCallId) => (carrierCallId === null ? Effect.void : followUp(carrierCallId)))

    /**
     * A carrier's call webhook (Telnyx Call Control). Each step is recorded once, whatever the carrier
     * repeats and in whatever order: a step that arrives before its predecessors is kept and completed
     * when they arrive. An `Internal` failure asks the carrier to deliver the event again (a carrier
     * outage, a download that failed, insights still being made). A voicemail's
     * transcript is Telnyx's recording transcription (`TranscriptionSaved`); an agent call's is the
     * assistant's conversation.
     */
    const onCarrierEvent = (e: CarrierCallEvent): Effect.Effect<void, Internal> => {
      switch (e._tag) {
        case "Initiated":
          return onInitiated(e)
        case "Answered":
          return onAnswered(e)
        case "Hangup":
          return thenFollowUp(Effect.as(onHangup(e), e.callSessionId))
        case "ConversationEnded":
          return thenFollowUp(onConversationEnded(e))
        case "RecordingSaved":
          return thenFollowUp(Effect.as(onRecordingSaved(e), e.callSessionId))
        case "InsightsGenerated":
          return thenFollowUp(onInsightsGenerated(e))
        case "TranscriptionSaved":
          return onTranscriptionSaved(e)
        case "SpeakEnded":
          return onSpeakEnded(e.callSessionId)
      }
    }

    return { onCarrierEvent } as const
  })
