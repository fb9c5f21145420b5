/**
 * Outbound calls (`POST /calls`): the published, enabled agent calls a number from one of the
 * workspace's active numbers. A test key dials nothing: the simulator plays the call at once and it
 * is recorded as it ended (history.ts). A real carrier's call is under way when dialled: its session
 * is stored, and its webhooks (carrierEvents.ts) record it.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import type { AgentConfig } from "../agent/model.ts"
import { AgentStore } from "../agent/store.ts"
import type { Principal } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { ConversationStore } from "../conversations/store.ts"
import { displayText } from "../kernel/display.ts"
import { FailedPrecondition, Internal, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { type E164, isPremiumRate, normalizePhone, phoneField, premiumRateProblem } from "../kernel/phone.ts"
import { Transactor } from "../kernel/transactor.ts"
import { type Line, makeThreads } from "../messaging/threads.ts"
import { defaultNumber, notOrdered, type NumberRecord, NumberStore } from "../numbers/model.ts"
import { SIMULATED_FLOW } from "./events.ts"
import type { History } from "./history.ts"
import type { CallItem, PlaceCallInput, PlaceCallResult } from "./model.ts"
import { simulatedPlacedCall } from "./script.ts"
import { callLock, CallSessionStore, dialingId, startSession } from "./sessions.ts"
import { type Dialed, type DialRequest, DialState, Voice } from "./voice.ts"

const noActiveNumber = new FailedPrecondition({
  message: "The workspace has no active phone number: add one before placing calls"
})

const encodeDialState = Schema.encodeSync(DialState)

/** What the agent is told for this call: its own instructions, the job's, then the call's. */
const instructionsFor = (
  config: AgentConfig,
  job: AgentConfig["jobs"][number] | undefined,
  extra: string | undefined
) => {
  const parts = [config.instructions, job?.instructions ?? null, extra ?? null].filter((s): s is string =>
    s !== null && s.length > 0
  )
  return parts.length === 0 ? null : parts.join("\n\n")
}

export const makeOutbound = (history: Pick<History, "itemOf" | "recordCall">) =>
  Effect.gen(function*() {
    const numbers = yield* NumberStore
    const agents = yield* AgentStore
    const tx = yield* Transactor
    const voice = yield* Voice
    const sessions = yield* CallSessionStore
    const conversations = yield* ConversationStore
    const threads = yield* makeThreads

    /** The published, enabled agent's configuration, if any. */
    const liveAgent = (workspaceId: string) =>
      Effect.map(agents.get(workspaceId), (found) =>
        Option.flatMap(found, (agent) =>
          agent.published !== null && agent.published.enabled
            ? Option.some({ id: agent.id, config: agent.published, assistantId: agent.carrierAssistantId })
            : Option.none()))

    /**
     * The calling number: one the caller named, else the first active local one (for live keys,
     * ordered at the carrier). A live call from a number added with a test key is refused.
     */
    const callerNumber = (workspaceId: string, raw: string | undefined, live: boolean) =>
      Effect.gen(function*() {
        const active = yield* numbers.listActive(workspaceId)
        if (active.length === 0) {
          return yield* noActiveNumber
        }
        const found = raw === undefined ? defaultNumber(active, live)! : yield* Effect.gen(function*() {
          const parsed = normalizePhone(raw)
          if (Either.isLeft(parsed)) {
            return yield* new InvalidArgument({ message: `from: ${parsed.left}` })
          }
          const named = active.find((n) =>
            n.number.e164 === parsed.right
          )
          if (named === undefined) {
            return yield* new NotFound({ message: `from: ${parsed.right} is not an active number of this workspace` })
          }
          return named
        })
        if (live && !found.ordered) return yield* notOrdered(found.number.e164)
        return found
      })

    /**
     * `POST /calls`: the published agent calls `to` from `from` (or the default number). Test keys dial
     * nothing: the simulator plays the call (`simulated`). The call is recorded as it ended; its events
     * begin with `call.completed` or `call.missed` (no `call.answered`).
     */
    const place = (p: Principal, input: PlaceCallInput) =>
      Effect.gen(function*() {
        const ws = p.workspaceId
        const agent = yield* Effect.flatMap(
          liveAgent(ws),
          Option.match({
            onNone: () =>
              Effect.fail(
                new FailedPrecondition({
                  message: "Publish an agent first: outbound calls are placed by the published, enabled agent"
                })
              ),
            onSome: Effect.succeed
          })
        )
        const sender: NumberRecord = yield* callerNumber(ws, input.from, p.kind === "live")
        const to: E164 = yield* phoneField("to", input.to)
        // Toll fraud, and a call to itself: never dialled.
        if (isPremiumRate(to)) return yield* new InvalidArgument({ message: premiumRateProblem("to") })
        if ((yield* numbers.findByE164(to)).pipe(Option.exists((n) => n.workspaceId === ws))) {
          return yield* new InvalidArgument({ message: "to: is one of this workspace's own numbers" })
        }
        const job = input.job === undefined ? undefined : agent.config.jobs.find((j) => j.name === input.job)
        if (input.job !== undefined && job === undefined) {
          return yield* new InvalidArgument({
            message: `job: the published agent has no job named ${displayText(input.job, 60)}`
          })
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
        const createdAt = new Date(startedAt).toISOString()
        const jobName = job?.name ?? null
        const dialing = dialingId(callId)
        if (!simulated) {
          // Stored before the dial is sent: the call's first webhooks may come before its answer.
          const session = startSession({
            carrierCallId: dialing,
            callControlId: dialing,
            workspaceId: ws,
            numberE164: sender.number.e164,
            participant: to,
            callerName: null,
            direction: "outbound",
            route: null,
            ringLegs: null,
            startedAt: createdAt,
            agentId: agent.id,
            job: jobName,
            reservedActivityId: callId
          })
          yield* sessions.insert(session)
        }
        const dialed: Dialed = simulated
          ? {
            carrierCallId: `sim_call_${uuid()}`,
            callControlId: `sim_call_${callId}`,
            ended: simulatedPlacedCall(request.greeting, purpose)
          }
          : yield* voice.dial(request).pipe(
            // A refused dial rings nobody; after an outage the call may still have been placed, and
            // its webhooks record it.
            Effect.tapError((e) => (e.reason === "rejected" ? sessions.remove(dialing) : Effect.void)),
            Effect.mapError((e) =>
              e.reason === "rejected"
                ? new FailedPrecondition({ message: `The carrier refused the call: ${e.message}` })
                : new Internal({
                  message: `The carrier is unavailable (${e.message}); retry with the same Idempotency-Key`
                })
            )
          )
        const line: Line = { workspaceId: ws, numberE164: sender.number.e164, participant: to, inboxId: sender.inboxId }
        if (dialed.ended === undefined) {
          // Named by the carrier's ids, unless a webhook that came first already named it.
          yield* tx.withTransaction(
            sessions.rename(dialing, dialed.carrierCallId, dialed.callControlId),
            callLock(dialing)
          )
          // Under the lock the hangup's recording takes: a call already recorded is answered as recorded.
          const settled = yield* tx.withTransaction(
            Effect.gen(function*() {
              const recorded = yield* conversations.getActivity(ws, callId)
              if (Option.isSome(recorded)) return Either.left(recorded.value)
              return Either.right(yield* threads.outbound(line, { at: createdAt, preview: "Outgoing call" }))
            }),
            phoneLock(ws, to)
          )
          if (Either.isLeft(settled)) {
            const result: PlaceCallResult = {
              call: yield* history.itemOf(settled.left, line),
              conversationId: settled.left.conversationId
            }
            return result
          }
          const thread = settled.right
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
        const { activity, thread } = yield* history.recordCall({
          id: callId,
          plan: { direction: "outbound", scenario: dialed.ended.answered ? "answered" : "missed" },
          line,
          startedAt,
          facts: {
            carrierCallId: dialed.carrierCallId,
            numberE164: sender.number.e164,
            from: sender.number.e164,
            callerName: null,
            memberUid: null,
            memberSeesNumber: false,
            flow: SIMULATED_FLOW
          },
          details: {
            from: sender.number.e164,
            to,
            agentId: agent.id,
            memberUid: null,
            forwardedTo: null,
            carrierCallId: dialed.carrierCallId,
            job: jobName,
            ...(simulated ? { simulated: true } : {})
          },
          end: dialed.ended
        })
        const result: PlaceCallResult = {
          call: yield* history.itemOf(activity, thread),
          conversationId: thread.id,
          ...(simulated ? { simulated: true as const } : {})
        }
        return result
      })

    return { place } as const
  })
