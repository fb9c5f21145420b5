/**
 * The contract of the voice carrier port (core/calls/voice.ts), one list of tests run against the
 * simulator (adapters/carrier/simulatedVoice.ts) and against Telnyx (telnyxVoiceAdapter.ts) over the
 * fake Telnyx, so the two cannot drift and a third carrier has a definition of done: a dial answers
 * ids of its own; the call's end, answered at once (`ended`) or reported by the carrier's events
 * (parsed by the adapter's own webhook parser), comes to the same facts; publishing twice keeps one
 * assistant; commands on a call the carrier does not know or has ended (an `app` call's ringing,
 * joining and hanging up included), and the transcript or
 * summary of an unknown conversation, are `rejected`. What only one carrier does runs under a
 * capability its harness declares.
 */
import { Effect, Exit, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import * as SimulatedVoice from "../../adapters/carrier/simulatedVoice.ts"
import { verifyCallEvent } from "../../adapters/carrier/telnyxCallWebhooks.ts"
import * as TelnyxVoice from "../../adapters/carrier/telnyxVoice.ts"
import * as TelnyxVoiceAdapter from "../../adapters/carrier/telnyxVoiceAdapter.ts"
import type { AgentConfig } from "../../core/agent/model.ts"
import type { Transcript } from "../../core/calls/script.ts"
import {
  type CallEnd,
  type CarrierCallEvent,
  type Dialed,
  type DialRequest,
  Voice,
  VoiceError
} from "../../core/calls/voice.ts"
import type { SignedWebhook } from "../support/fakeTelnyx.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"

const OURS = "+13122010001"
const CALLEE = "+15550002222"
const WORKSPACE = "5f0c7a52-3c1e-4d6b-9d8e-2f1a7c3b9e10"

const fake = useFakeTelnyx()

/** What a call came to, whichever way the carrier reported it. */
interface CallFacts {
  readonly answered: boolean
  readonly durationSeconds: number
  readonly recorded: boolean
  readonly transcript: Transcript
  readonly summary: string | null
}

const factsOfEnd = (end: CallEnd): CallFacts => ({
  answered: end.answered,
  durationSeconds: end.durationSeconds,
  recorded: end.recording !== null && end.recording.bytes.length > 0,
  transcript: end.transcript,
  summary: end.summary
})

interface VoiceHarness {
  readonly name: string
  readonly voice: () => Voice
  /** The callee picks up (when `answered`) and hangs up; the call's end as the carrier reports it. */
  readonly playToEnd: (dialed: Dialed, request: DialRequest, answered: boolean) => Effect.Effect<CallFacts, VoiceError>
  /** The callee can leave a dialed call unanswered. */
  readonly unanswered: boolean
}

const simulated: VoiceHarness = {
  name: "simulated",
  voice: () => Effect.runSync(Effect.provide(Voice, SimulatedVoice.layer)),
  // The simulator plays the call as it dials it: its end is in the dial's answer.
  playToEnd: (dialed) => Effect.succeed(factsOfEnd(dialed.ended!)),
  // Reason: the simulated callee always picks up (a test key's POST /calls plays an answered call).
  unanswered: false
}

/** The fake's webhooks as the adapter's parser reads them (signature checked). */
const parse = (hook: SignedWebhook) =>
  verifyCallEvent({
    rawBody: hook.rawBody,
    signature: hook.headers["telnyx-signature-ed25519"],
    timestamp: hook.headers["telnyx-timestamp"],
    publicKey: fake().publicKey,
    nowSeconds: Math.floor(Date.now() / 1000)
  }).pipe(Effect.orDie, Effect.map(Option.getOrThrow))

const telnyxVoice = () =>
  TelnyxVoiceAdapter.make(
    TelnyxVoice.make({
      apiKey: Redacted.make(fake().apiKey),
      messagingProfileId: "profile-1",
      baseUrl: fake().baseUrl
    }),
    "connection-1"
  )

const telnyx: VoiceHarness = {
  name: "telnyx over the fake",
  voice: telnyxVoice,
  playToEnd: (dialed, request, answered) =>
    Effect.gen(function*() {
      expect(dialed.ended).toBeUndefined() // Telnyx reports the end in webhooks
      const hooks: Array<SignedWebhook> = []
      if (answered) {
        fake().voice.pickUp(dialed.callControlId)
        hooks.push(
          fake().signedWebhook("call.answered", fake().voice.callPayload(dialed.callControlId, "call.answered"))
        )
      }
      fake().voice.callerHangsUp(dialed.callControlId, {
        conversation: {
          id: `conv-${request.callId}`,
          messages: [{ role: "assistant", text: request.greeting ?? "Hello" }, {
            role: "user",
            text: "Yes, Tuesday works."
          }],
          summary: "The callee confirmed Tuesday."
        }
      })
      hooks.push(...fake().pendingCallWebhooks())
      const events: ReadonlyArray<CarrierCallEvent> = yield* Effect.forEach(hooks, parse)
      const of = <T extends CarrierCallEvent["_tag"]>(tag: T) =>
        events.find((e): e is Extract<CarrierCallEvent, { _tag: T }> => e._tag === tag)
      const hangup = of("Hangup")!
      const conversation = of("ConversationEnded")
      const insights = of("InsightsGenerated")
      const summary = insights === undefined ? null : yield* telnyxVoice().conversationSummary(insights.conversationId)
      return {
        answered: of("Answered") !== undefined,
        durationSeconds: hangup.durationSeconds!,
        recorded: of("RecordingSaved") !== undefined,
        transcript: conversation === undefined
          ? []
          : yield* telnyxVoice().conversationTranscript(conversation.conversationId, hangup.startTime!, "outbound"),
        summary: summary?._tag === "Ready" ? summary.text : null
      }
    }),
  unanswered: true
}

const config: AgentConfig = {
  name: "Front desk",
  greeting: "Hi, this is Acme.",
  instructions: "Confirm visits.",
  tone: null,
  voice: null,
  language: null,
  enabled: true,
  timezone: "UTC",
  businessHours: {},
  inHoursAction: "agent",
  offHoursAction: "voicemail",
  jobs: [{ name: "Reminder", instructions: "Confirm Tuesday's visit." }]
}

const dialRequest = (assistantId: string | null): DialRequest => {
  const callId = crypto.randomUUID()
  return {
    workspaceId: WORKSPACE,
    callId,
    from: OURS,
    to: CALLEE,
    agentId: "agent-1",
    greeting: "Hi, this is Acme.",
    instructions: "Confirm visits.",
    purpose: "Reminder",
    assistantId,
    clientState: JSON.stringify({ workspaceId: WORKSPACE, callId })
  }
}

/** A published agent's assistant (null on a carrier with none), and a dial with it. */
const dial = (voice: Voice) =>
  Effect.gen(function*() {
    const { assistantId } = yield* voice.publishAgent({
      workspaceId: WORKSPACE,
      agentId: "agent-1",
      assistantId: null,
      config
    })
    const request = dialRequest(assistantId)
    return { request, dialed: yield* voice.dial(request) }
  })

const rejected = <A>(effect: Effect.Effect<A, VoiceError>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    expect(Exit.isFailure(exit), "expected the carrier to refuse").toBe(true)
    const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
    expect(error).toBeInstanceOf(VoiceError)
    expect(error?.reason).toBe("rejected")
  })

const run = <A>(effect: Effect.Effect<A, VoiceError>) => Effect.runPromise(effect)

describe.each([simulated, telnyx])("the voice port: $name", (h) => {
  it("a dial answers the carrier's call id and where its commands go, both distinct per call", () =>
    run(Effect.gen(function*() {
      const voice = h.voice()
      const first = (yield* dial(voice)).dialed
      const second = (yield* dial(voice)).dialed
      for (const d of [first, second]) {
        expect(d.carrierCallId).toEqual(expect.any(String))
        expect(d.callControlId).toEqual(expect.any(String))
      }
      expect(second.carrierCallId).not.toBe(first.carrierCallId)
      expect(second.callControlId).not.toBe(first.callControlId)
    })))

  it("an answered call's end, at once or from the carrier's events: answered, a duration, a recording, a transcript, a summary", () =>
    run(Effect.gen(function*() {
      const voice = h.voice()
      const { dialed, request } = yield* dial(voice)
      const facts = yield* h.playToEnd(dialed, request, true)
      expect(facts.answered).toBe(true)
      expect(Number.isInteger(facts.durationSeconds) && facts.durationSeconds >= 0).toBe(true)
      expect(facts.recorded).toBe(true)
      expect(facts.transcript.length).toBeGreaterThan(0)
      for (const line of facts.transcript) {
        expect(["agent", "callee"]).toContain(line.speaker) // the dialed party is the callee
        expect(line.text.trim()).not.toBe("")
        expect(line.offsetSeconds).toBeGreaterThanOrEqual(0)
      }
      expect(facts.transcript[0]!.speaker).toBe("agent") // the agent dialed, so it speaks first
      expect(facts.summary?.trim()).toBeTruthy()
    })))

  it.runIf(h.unanswered)(
    "an unanswered call's end: not answered, no recording, transcript or summary",
    () =>
      run(Effect.gen(function*() {
        const { dialed, request } = yield* dial(h.voice())
        const facts = yield* h.playToEnd(dialed, request, false)
        expect(facts).toMatchObject({ answered: false, recorded: false, transcript: [], summary: null })
        expect(facts.durationSeconds).toBeGreaterThanOrEqual(0)
      }))
  )

  it("publishing the same agent twice keeps one assistant: the same id, or null on a carrier with none", () =>
    run(Effect.gen(function*() {
      const voice = h.voice()
      const first = yield* voice.publishAgent({ workspaceId: WORKSPACE, agentId: "agent-1", assistantId: null, config })
      const again = yield* voice.publishAgent({
        workspaceId: WORKSPACE,
        agentId: "agent-1",
        assistantId: first.assistantId,
        config: { ...config, name: "Night desk" }
      })
      expect(again.assistantId).toBe(first.assistantId)
    })))

  it("commands on a call the carrier does not know are rejected", () =>
    run(Effect.gen(function*() {
      const voice = h.voice()
      const state = JSON.stringify({ workspaceId: WORKSPACE, carrierCallId: "unknown" })
      yield* rejected(voice.handle("v3:unknown-call", { kind: "voicemail" }, state))
      yield* rejected(voice.handle("v3:unknown-call", { kind: "forward", to: CALLEE }, state))
      yield* rejected(voice.voicemailStep("v3:unknown-call", { kind: "record" }, state))
      // An app call's team: a phone rung for a call the carrier does not know, joining or ending unknown legs.
      yield* rejected(
        voice.ring({
          callControlId: "v3:unknown-call",
          from: OURS,
          to: CALLEE,
          memberUid: crypto.randomUUID(),
          ringSeconds: 25,
          clientState: state
        })
      )
      yield* rejected(voice.connect("v3:unknown-call", "v3:unknown-leg", state))
      yield* rejected(voice.hangup("v3:unknown-leg"))
    })))

  it("commands on a call that has ended are rejected", () =>
    run(Effect.gen(function*() {
      const voice = h.voice()
      const { dialed, request } = yield* dial(voice)
      yield* h.playToEnd(dialed, request, true)
      yield* rejected(voice.handle(dialed.callControlId, { kind: "forward", to: CALLEE }, request.clientState))
      yield* rejected(
        voice.voicemailStep(dialed.callControlId, { kind: "greet", text: "Hello", language: null }, request.clientState)
      )
      yield* rejected(voice.connect(dialed.callControlId, dialed.callControlId, request.clientState))
      yield* rejected(voice.hangup(dialed.callControlId))
    })))

  it("the transcript and summary of a conversation the carrier does not know are rejected", () =>
    run(Effect.gen(function*() {
      const voice = h.voice()
      yield* rejected(voice.conversationTranscript("conv-unknown", new Date().toISOString(), "inbound"))
      yield* rejected(voice.conversationSummary("conv-unknown"))
    })))
})
