/**
 * A carrier's call in progress (Telnyx: one per `call_session_id`), from its first webhook to the
 * activity that records it. The webhooks of a call arrive one by one and may repeat: the session
 * holds what the first one decided (the route, who answers) for the later ones, and `activityId`
 * says the call is already recorded.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import { Route } from "../agent/hours.ts"
import { StoredMedia } from "../media/model.ts"
import { AnsweredBy, CallDirection } from "./model.ts"

/** One teammate's phone rung for an `app` call (CONTRACT "Members and the console": the team is rung at once). */
export const RingLeg = Schema.Struct({
  memberUid: Schema.String,
  phone: Schema.String,
  /** The dialled leg (Telnyx `call_control_id`) once the carrier named it (the dial's answer or the leg's first webhook). */
  callControlId: Schema.NullOr(Schema.String),
  /** The leg is over: it rang out, was refused or hung up, or was hung up by us. */
  ended: Schema.Boolean
})
export type RingLeg = typeof RingLeg.Type

/** How long the team's phones ring before the caller is taken to voicemail (CONTRACT: 25 seconds). */
export const RING_SECONDS = 25

export const CallSession = Schema.Struct({
  /** The carrier's id of the whole call (Telnyx `call_session_id`): the `carrierCallId` of its events. */
  carrierCallId: Schema.String,
  /** The leg commands go to (Telnyx `call_control_id`). */
  callControlId: Schema.String,
  workspaceId: Schema.UUID,
  /** The workspace number. */
  numberE164: Schema.String,
  /** The other party, E.164: the caller (inbound; `withheld` when the caller sent no number) or the callee (outbound). */
  participant: Schema.String,
  callerName: Schema.NullOr(Schema.String),
  direction: CallDirection,
  /** Where an inbound call was routed when it arrived; null for an outbound call. */
  route: Schema.NullOr(Route),
  startedAt: Schema.String,
  /** When the call was picked up (by the agent, the callee, the forward line, or us to take a voicemail). */
  answeredAt: Schema.NullOr(Schema.String),
  /** Who picked up; null when nobody did or the call was taken for a voicemail. */
  answeredBy: Schema.NullOr(AnsweredBy),
  /** The teammate who took an `app` call (`call.answered`'s `memberUid`). */
  memberUid: Schema.NullOr(Schema.String),
  /**
   * The team's phones rung for an `app` call, one leg each; null when none was rung. When every leg
   * is over and nobody took the call, the route becomes `voicemail` and the caller leaves one.
   */
  ringLegs: Schema.NullOr(Schema.Array(RingLeg)),
  agentId: Schema.NullOr(Schema.UUID),
  job: Schema.NullOr(Schema.String),
  /** The call's activity once it ended and was recorded. */
  activityId: Schema.NullOr(Schema.UUID),
  /** The id `POST /calls` answered for an outbound call: its activity takes it when recorded. */
  reservedActivityId: Schema.NullOr(Schema.UUID),
  /** The AI assistant's conversation on the call (Telnyx `conversation_id`), once the carrier named it (either event of it): its insights find the call by it. */
  conversationId: Schema.NullOr(Schema.String),
  /** The recording was larger than MAX_RECORDING_BYTES and is not kept: the transcript does not wait for it. */
  recordingRefused: Schema.Boolean,
  /**
   * A voicemail's progress at the carrier: `greeting` once the greeting was sent, `recording` once the
   * recording was started; a repeated webhook sends neither again.
   */
  voicemailStep: Schema.NullOr(Schema.Literal("greeting", "recording")),
  /**
   * The recording, stored before the call's activity existed (its webhook came before the hangup's):
   * attached, with its event, once the hangup is recorded.
   */
  pendingRecording: Schema.NullOr(StoredMedia),
  /**
   * The voicemail's transcription as the carrier sent it, kept until the voicemail's recording is on
   * the activity (SPEC's order: `call.voicemail.completed` before `call.transcript.completed`).
   */
  voicemailTranscript: Schema.NullOr(Schema.String),
  /**
   * The carrier said the assistant's conversation ended (its transcript can be fetched), and that
   * its insights were made (its summary can be fetched): each is fetched in its turn in SPEC's event
   * order, as soon as the steps before it are recorded (now, or when they arrive).
   */
  conversationEnded: Schema.Boolean,
  insightsGenerated: Schema.Boolean
})
export type CallSession = typeof CallSession.Type

/** What a call's webhooks fill in as it goes: nothing yet when its session is stored. */
type Progress =
  | "answeredAt"
  | "answeredBy"
  | "memberUid"
  | "activityId"
  | "conversationId"
  | "recordingRefused"
  | "voicemailStep"
  | "pendingRecording"
  | "voicemailTranscript"
  | "conversationEnded"
  | "insightsGenerated"

/** A call's session as it starts: what is known of the call, none of its progress. */
export const startSession = (known: Omit<CallSession, Progress>): CallSession => ({
  ...known,
  answeredAt: null,
  answeredBy: null,
  memberUid: null,
  activityId: null,
  conversationId: null,
  recordingRefused: false,
  voicemailStep: null,
  pendingRecording: null,
  voicemailTranscript: null,
  conversationEnded: false,
  insightsGenerated: false
})

/** The lock a call's steps take (its session's key). */
export const callLock = (carrierCallId: string) => `call:${carrierCallId}`

/**
 * The key of a call we dial until the carrier names it: the session is stored under it before the
 * dial is sent, so a webhook that beats the dial's answer finds the call (by our id in its
 * `client_state`) and names it (`rename`).
 */
export const dialingId = (callId: string) => `dialing:${callId}`

export interface CallSessionStore {
  /** Stores a new session; false (and nothing changed) when one with its `carrierCallId` exists. */
  readonly insert: (session: CallSession) => Effect.Effect<boolean>
  readonly get: (carrierCallId: string) => Effect.Effect<Option.Option<CallSession>>
  /** The session whose assistant conversation is `conversationId`. */
  readonly findByConversation: (conversationId: string) => Effect.Effect<Option.Option<CallSession>>
  /** The session of the outbound call `POST /calls` answered as `callId` (its `reservedActivityId`). */
  readonly findByCallId: (callId: string) => Effect.Effect<Option.Option<CallSession>>
  /** Replaces the session with the same `carrierCallId`. */
  readonly put: (session: CallSession) => Effect.Effect<void>
  /**
   * Gives the session stored as `from` the carrier's ids (`callControlId` kept when null), and
   * answers it; none when no session is stored as `from`.
   */
  readonly rename: (
    from: string,
    carrierCallId: string,
    callControlId: string | null
  ) => Effect.Effect<Option.Option<CallSession>>
  /** Forgets a session: a dial the carrier refused. */
  readonly remove: (carrierCallId: string) => Effect.Effect<void>
}
export const CallSessionStore = Context.GenericTag<CallSessionStore>("core/CallSessionStore")
