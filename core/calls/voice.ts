/**
 * The voice carrier port: places the AI agent's outbound calls (`POST /calls`), routes the inbound
 * calls a carrier announces, and fetches a call's transcript and summary. Adapters:
 * adapters/carrier/simulatedVoice.ts (CARRIER=simulated; test keys never reach a port) and
 * adapters/carrier/telnyxVoiceAdapter.ts (CARRIER=telnyx; Call Control and AI assistants through
 * telnyxVoice.ts). The carrier's call webhooks come in as `CarrierCallEvent` (below).
 *
 * `publishAgent` runs on `POST /agent/publish`: the carrier's assistant mirrors the published
 * configuration (Telnyx: an AI assistant created on the first publish, updated on later ones).
 *
 * Shape for a real carrier: `dial` asks the carrier to call `to` from `from` with an AI assistant
 * configured from `agentId`, `greeting` and `instructions` (Telnyx: a Call Control dial with the
 * published agent's assistant, `carrierAssistantId` on the agent record), and answers the carrier's
 * call id (Telnyx `call_control_id`). A refused dial (4xx) is `rejected`; rate limits, 5xx, timeouts
 * and network failures are `unavailable`. `ended` is the call's end when the carrier plays it at
 * once (the simulator); Telnyx leaves it out and reports the call in webhooks (`call.hangup`,
 * `call.recording.saved`, `call.conversation.ended`, `call.conversation_insights.generated`) that
 * `Calls.onCarrierEvent` records.
 */
import { Context, Data, type Effect, Schema } from "effect"
import type { AgentConfig } from "../agent/model.ts"
import type { CallDirection } from "./model.ts"
import type { Transcript } from "./script.ts"

/** The `client_state` a dial carries (echoed in the call's webhooks): whose call it is, by our id. */
export const DialState = Schema.parseJson(Schema.Struct({ workspaceId: Schema.String, callId: Schema.String }))

export interface DialRequest {
  readonly workspaceId: string
  /** Our id of the call: its activity's id, also its dial's idempotency key at the carrier. */
  readonly callId: string
  readonly from: string
  readonly to: string
  readonly agentId: string
  readonly greeting: string | null
  /** The agent's instructions, then the job's, then the call's own. */
  readonly instructions: string | null
  /** What the call is for (the job's name, or the caller's instructions), for the carrier's summary. */
  readonly purpose: string | null
  /** The published agent's carrier assistant (`carrierAssistantId`). */
  readonly assistantId: string | null
  /** `DialState` encoded. */
  readonly clientState: string
}

/** How a call ended. */
export interface CallEnd {
  readonly answered: boolean
  readonly durationSeconds: number
  readonly transcript: Transcript
  readonly summary: string | null
  /** The recording's audio; null when none was made. */
  readonly recording: { readonly bytes: Uint8Array; readonly contentType: string } | null
}

export interface Dialed {
  readonly carrierCallId: string
  /** Where the call's commands go (Telnyx `call_control_id`); the carrier call id when the same. */
  readonly callControlId: string
  /**
   * The call's end, when the carrier plays it at once (the simulator). Absent: the call is under
   * way, and the carrier's webhooks report its end (`Calls.onCarrierEvent`).
   */
  readonly ended?: CallEnd
}

/**
 * `rejected`: the carrier refused this call (4xx); retrying will not help.
 * `unavailable`: rate limited, 5xx, timeout or network failure; the caller may retry later.
 */
export class VoiceError extends Data.TaggedError("VoiceError")<{
  readonly reason: "rejected" | "unavailable"
  readonly message: string
}> {}

// ------------------------------------------------------------------------------------ carrier call events

/**
 * A carrier's call webhook, neutral (Telnyx's are parsed by adapters/carrier/telnyxCallWebhooks.ts).
 * `callSessionId` is the call's `carrierCallId`; commands go to `callControlId`. Carriers may
 * repeat events: `Calls.onCarrierEvent` records each step once.
 */
export interface CallEventBase {
  /** Telnyx's event id (`data.id`), to dedupe on. */
  readonly eventId: string
  readonly occurredAt: string | null
}

export interface CallLeg {
  readonly callControlId: string
  readonly callLegId: string | null
  readonly callSessionId: string
  /** What we sent as `client_state`, decoded. */
  readonly clientState: string | null
}

export type CarrierCallEvent =
  | (
    & CallEventBase
    & CallLeg
    & {
      readonly _tag: "Initiated"
      readonly direction: "inbound" | "outbound"
      /** E.164 or a SIP URI, as Telnyx sends it; withheld: `anonymous`, `restricted`, `private` or empty. */
      readonly from: string
      readonly to: string
      /** The caller's CNAM (`caller_id_name`), when Telnyx has one. */
      readonly callerName: string | null
    }
  )
  | (CallEventBase & CallLeg & { readonly _tag: "Answered"; readonly from: string; readonly to: string })
  /** What a `speak` command said has been played out (Telnyx `call.speak.ended`). */
  | (CallEventBase & CallLeg & { readonly _tag: "SpeakEnded" })
  | (
    & CallEventBase
    & CallLeg
    & {
      readonly _tag: "Hangup"
      /** `normal_clearing`, `originator_cancel`, `timeout`, `user_busy`, `no_answer`, `call_rejected`, … (`unspecified` when absent). */
      readonly cause: string
      /** `caller`, `callee` or `unknown`. */
      readonly source: string
      readonly startTime: string | null
      readonly endTime: string | null
      /** Whole seconds from `startTime` to `endTime`; null when either is unknown. */
      readonly durationSeconds: number | null
    }
  )
  | (CallEventBase & {
    readonly _tag: "RecordingSaved"
    readonly callSessionId: string
    readonly callLegId: string
    readonly callControlId: string | null
    readonly clientState: string | null
    /** Download links, valid 10 minutes. */
    readonly urls: { readonly wav?: string; readonly mp3?: string }
  })
  | (CallEventBase & {
    readonly _tag: "TranscriptionSaved"
    readonly callSessionId: string
    readonly callLegId: string | null
    readonly callControlId: string | null
    readonly text: string
  })
  | (CallEventBase & {
    readonly _tag: "ConversationEnded"
    readonly conversationId: string
    readonly assistantId: string
    readonly durationSeconds: number | null
    /** The call the assistant was on (Telnyx's SDK types them; absent on a non-call conversation). */
    readonly callControlId: string | null
    readonly callSessionId: string | null
    readonly clientState: string | null
  })
  | (CallEventBase & {
    /** The carrier made the AI summary of an assistant's conversation: a trigger to fetch it (`conversationSummary`). */
    readonly _tag: "InsightsGenerated"
    readonly conversationId: string
    /** The call's ids when the carrier sends them (the payload's shape is not documented). */
    readonly callControlId: string | null
    readonly callSessionId: string | null
    readonly clientState: string | null
  })

/** The AI summary of an assistant's conversation: still being made, or ready (`text` null: none came out). */
export type ConversationSummary = { readonly _tag: "Pending" } | {
  readonly _tag: "Ready"
  readonly text: string | null
}

/** What the carrier is told to do with an inbound call it announced (an `app` call rings the team: `ring`). */
export type InboundAction =
  /** Answer with the published agent's assistant, recording the call. */
  | { readonly kind: "agent"; readonly assistantId: string | null }
  /** Answer; the greeting and the recording follow as the carrier reports each step (`VoicemailStep`). */
  | { readonly kind: "voicemail" }
  /** Transfer the call to an outside number. */
  | { readonly kind: "forward"; readonly to: string }

/**
 * A voicemail's next command: `greet` once the carrier reports the call answered, `record` (with the
 * carrier's transcription) once the greeting has been played.
 */
export type VoicemailStep =
  | { readonly kind: "greet"; readonly text: string; readonly language: string | null }
  | { readonly kind: "record" }

/** One teammate's phone rung for an inbound `app` call (CONTRACT "Members and the console"). */
export interface RingRequest {
  /** The inbound call's leg: the teammate's leg is linked to it, and bridged to it when they pick up. */
  readonly callControlId: string
  /** The workspace number called, shown to the teammate. */
  readonly from: string
  /** The teammate's phone, E.164. */
  readonly to: string
  /** Our id of the leg (the teammate's id): with the call's, its dial's idempotency key at the carrier. */
  readonly memberUid: string
  /** How long the phone rings before the carrier ends the leg (`Hangup` with a timeout cause). */
  readonly ringSeconds: number
  /** Comes back in the leg's events: it names the call and the teammate. */
  readonly clientState: string
}

/** The configuration being published, and the carrier's assistant from the last publish. */
export interface PublishAgentRequest {
  readonly workspaceId: string
  readonly agentId: string
  /** The assistant to update; null: create one. */
  readonly assistantId: string | null
  readonly config: AgentConfig
}

export interface Voice {
  readonly dial: (request: DialRequest) => Effect.Effect<Dialed, VoiceError>
  /**
   * Creates or updates the carrier's AI assistant that takes the agent's calls, answering its id
   * (`carrierAssistantId`); null on a carrier with no assistants of its own (the simulator).
   */
  readonly publishAgent: (
    request: PublishAgentRequest
  ) => Effect.Effect<{ readonly assistantId: string | null }, VoiceError>
  /** Carries out the route of an inbound call the carrier announced (`Initiated`); `clientState` comes back in its later events. */
  readonly handle: (
    callControlId: string,
    action: InboundAction,
    clientState: string
  ) => Effect.Effect<void, VoiceError>
  /**
   * Rings a teammate's phone for an inbound `app` call, answering the leg's id (Telnyx
   * `call_control_id`); the leg's `Answered` or `Hangup` (it rang out, was refused) follow.
   */
  readonly ring: (request: RingRequest) => Effect.Effect<{ readonly callControlId: string }, VoiceError>
  /**
   * The teammate on leg `memberLeg` picked up: answers the inbound call (recording from then on) and
   * joins the two; when either party hangs up the carrier ends the other leg too.
   */
  readonly connect: (callControlId: string, memberLeg: string, clientState: string) => Effect.Effect<void, VoiceError>
  /** Ends a leg: a teammate's phone still ringing once another took the call or the caller left. */
  readonly hangup: (callControlId: string) => Effect.Effect<void, VoiceError>
  /** Sends a voicemail's next command (`VoicemailStep`); `clientState` comes back in its later events. */
  readonly voicemailStep: (
    callControlId: string,
    step: VoicemailStep,
    clientState: string
  ) => Effect.Effect<void, VoiceError>
  /**
   * The transcript of the assistant's conversation (`ConversationEnded`), offsets from `startedAt`;
   * the other party speaks as the `caller` of an inbound call or the `callee` of one we dialed.
   */
  readonly conversationTranscript: (
    conversationId: string,
    startedAt: string,
    direction: CallDirection
  ) => Effect.Effect<Transcript, VoiceError>
  /** The AI summary of the assistant's conversation (`InsightsGenerated`). */
  readonly conversationSummary: (conversationId: string) => Effect.Effect<ConversationSummary, VoiceError>
}
export const Voice = Context.GenericTag<Voice>("core/Voice")
