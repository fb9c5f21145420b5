import { Context, Effect, Option, Schema } from "effect"
import type { DeliveryStatus } from "../messaging/deliveryStatus.ts"
import { ActivityRecord, type SearchQuery, Thread, type ThreadStatus, type ThreadView } from "./model.ts"

export interface ThreadListQuery {
  readonly workspaceId: string
  readonly status: ThreadStatus | null
  readonly limit: number
  /** Keyset position: most recent activity first, id breaking ties. */
  readonly after: { readonly lastActivityAt: string; readonly id: string } | null
}

export interface SearchHit {
  readonly activity: ActivityRecord
  readonly thread: Thread
}

/** What a message search reads of each hit: what it answers, not the whole activity (a call's transcript) and thread. */
export const SearchRow = Schema.Struct({
  ...ActivityRecord.pick("id", "conversationId", "type", "direction", "body", "createdAt").fields,
  ...Thread.pick("participant", "numberE164").fields
})
export type SearchRow = typeof SearchRow.Type

/**
 * What a new message sets on its thread. Only these columns are written, so what another writer
 * changed meanwhile (status, assignee, a deleted contact detached) survives.
 */
export type ThreadTouch = Pick<Thread, "lastActivityAt" | "preview" | "unread"> & {
  /** Inbound traffic reopens a done thread. */
  readonly status?: ThreadStatus
  /** Attaches a contact to a thread that has none. */
  readonly contactId?: string
}

/** Threads and activities; every method is tenant-scoped except the carrier-id lookup. */
export interface ConversationStore {
  readonly findThread: (
    workspaceId: string,
    numberE164: string,
    participant: string
  ) => Effect.Effect<Option.Option<Thread>>
  /** Inserts unless a thread for (number, participant) exists; returns the one that is stored. */
  readonly insertThread: (thread: Thread) => Effect.Effect<Thread>
  readonly getThread: (workspaceId: string, id: string) => Effect.Effect<Option.Option<ThreadView>>
  /** Rewrites every column but the thread's identity: read the thread under its participant's lock. */
  readonly updateThread: (thread: Thread) => Effect.Effect<void>
  readonly touchThread: (workspaceId: string, id: string, touch: ThreadTouch) => Effect.Effect<void>
  /**
   * An outbound message, stored with its thread in one step: the thread of `thread`'s line is
   * inserted as given when the line has none, otherwise it gets `thread`'s lastActivityAt, preview
   * and unread (only those columns); either way a thread with no contact is attached to the
   * participant's earliest contact, if one exists. `activity` is inserted on the stored thread (its
   * own conversationId is ignored). Returns the thread as stored. Callers hold the participant's lock.
   */
  readonly recordOutbound: (thread: Thread, activity: ActivityRecord) => Effect.Effect<Thread>
  readonly listThreads: (query: ThreadListQuery) => Effect.Effect<ReadonlyArray<ThreadView>>
  /** Detaches a deleted contact: its threads stay under the raw number. */
  readonly detachContact: (workspaceId: string, contactId: string) => Effect.Effect<void>
  /** Unassigns a removed member's threads (`assigneeUid` null); answers how many were theirs. */
  readonly unassignMember: (workspaceId: string, memberUid: string) => Effect.Effect<number>

  readonly insertActivity: (activity: ActivityRecord) => Effect.Effect<void>
  readonly getActivity: (workspaceId: string, id: string) => Effect.Effect<Option.Option<ActivityRecord>>
  /** Oldest first. */
  readonly listActivities: (workspaceId: string, conversationId: string) => Effect.Effect<ReadonlyArray<ActivityRecord>>
  /** Carrier ids are globally unique; status webhooks do not name the workspace. */
  readonly findByCarrierId: (carrierMessageId: string) => Effect.Effect<Option.Option<ActivityRecord>>
  readonly setDeliveryStatus: (workspaceId: string, id: string, status: DeliveryStatus) => Effect.Effect<void>
  /** A call's recording, arrived after the call was recorded (a carrier's webhook). */
  readonly setCallMedia: (workspaceId: string, id: string, media: ActivityRecord["media"]) => Effect.Effect<void>
  /** A call's transcript, arrived after the call was recorded (a carrier's webhook); searchable from then on. */
  readonly setCallTranscript: (
    workspaceId: string,
    id: string,
    transcript: NonNullable<ActivityRecord["callTranscript"]>
  ) => Effect.Effect<void>
  /** A call's AI summary (`call.summary`), arrived after the call was recorded (a carrier's webhook). */
  readonly setCallSummary: (workspaceId: string, id: string, summary: string) => Effect.Effect<void>
  /**
   * Minutes of the calls the AI agent answered (`call` activities with `call.answeredBy` `agent`,
   * not `call.simulated`: a test key's calls dial nothing), started in [`fromIso`, `toIso`): each call's `call.durationSeconds` rounded up to whole minutes
   * (`billedMinutes`), summed. The agent's credit usage (`GET /agent`).
   */
  readonly agentCallMinutes: (workspaceId: string, fromIso: string, toIso: string) => Effect.Effect<number>
  /** Call and voicemail activities with their threads, newest first (created, then id). */
  readonly listCalls: (workspaceId: string, limit: number) => Effect.Effect<ReadonlyArray<SearchHit>>
  /** Messages and calls whose body or transcript match the query (`matchesQuery`), newest first. */
  readonly search: (
    workspaceId: string,
    query: SearchQuery,
    limit: number
  ) => Effect.Effect<ReadonlyArray<SearchRow>>
}

/** A call's billed minutes: its seconds rounded up, a started minute counting whole. */
export const billedMinutes = (durationSeconds: number): number => Math.ceil(Math.max(0, durationSeconds) / 60)

export const ConversationStore = Context.GenericTag<ConversationStore>("core/ConversationStore")
