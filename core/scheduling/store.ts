/**
 * The port of scheduled messages, broadcasts and their send queue. Adapters: adapters/{memory,sql}/scheduling.ts,
 * held together by test/adapters/scheduling.contract.test.ts.
 *
 * A claim leases sends to one worker under a fresh `claimId`; every later step names it, so a
 * worker whose lease ran out (and whose sends another worker claimed) changes nothing.
 */
import { Context, type Effect, type Option } from "effect"
import type { QuietHours } from "../pacing/quietHours.ts"
import type { BroadcastCounts, BroadcastRecord, Failure, ScheduledRecord, SendRecord, SendState } from "./model.ts"

/** A claimed send with what sending it needs: its source's content and the workspace's settings. */
export interface ClaimedSend {
  readonly send: SendRecord
  readonly claimId: string
  readonly keyId: string
  readonly live: boolean
  readonly from: string | null
  readonly conversationId: string | null
  readonly body: string
  readonly mediaUrls: ReadonlyArray<string>
  readonly quietHours: QuietHours | null
  readonly segmentsPerMinute: number
  /** The workspace's zone (its agent's), for recipients outside +1. */
  readonly timeZone: string | null
  /** How far the workspace's clock is ahead of real time. */
  readonly clockOffsetMs: number
}

/** How a send ended; `skipped` carries why (`opted_out`, `canceled`). */
export interface Settlement {
  readonly state: Extract<SendState, "sent" | "failed" | "skipped">
  readonly messageId: string | null
  readonly failure: Failure | null
}

/** A broadcast whose last recipient was just settled. */
export interface Completed {
  readonly workspaceId: string
  readonly broadcastId: string
  readonly counts: BroadcastCounts
}

export interface SchedulingStore {
  readonly insertScheduled: (record: ScheduledRecord, send: SendRecord) => Effect.Effect<void>
  readonly getScheduled: (
    workspaceId: string,
    id: string
  ) => Effect.Effect<Option.Option<{ readonly record: ScheduledRecord; readonly send: SendRecord }>>
  /** Soonest first (`sendAt`, then id), after `after`; `states` filters. */
  readonly listScheduled: (q: {
    readonly workspaceId: string
    readonly states: ReadonlyArray<SendState> | null
    readonly after: { readonly sendAt: string; readonly id: string } | null
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<{ readonly record: ScheduledRecord; readonly send: SendRecord }>>

  /** The broadcast and its sends (counts as given: all pending). */
  readonly insertBroadcast: (record: BroadcastRecord, sends: ReadonlyArray<SendRecord>) => Effect.Effect<void>
  readonly getBroadcast: (workspaceId: string, id: string) => Effect.Effect<Option.Option<BroadcastRecord>>
  /** Newest first (`createdAt`, then id, descending). */
  readonly listBroadcasts: (q: {
    readonly workspaceId: string
    readonly after: { readonly createdAt: string; readonly id: string } | null
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<BroadcastRecord>>
  /** In `seq` order after `afterSeq`; `states` filters. */
  readonly listRecipients: (q: {
    readonly workspaceId: string
    readonly broadcastId: string
    readonly states: ReadonlyArray<SendState> | null
    readonly afterSeq: number | null
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<SendRecord>>

  /**
   * Cancels a source's pending sends (`skipped`, failure `canceled`), leased or not; sends already
   * `sending` finish. A broadcast's state becomes `canceled` and its counts follow. Answers how
   * many sends it skipped, and the broadcast's end when none is left in flight.
   */
  readonly cancel: (
    workspaceId: string,
    sourceId: string,
    at: string
  ) => Effect.Effect<{ readonly skipped: number; readonly completed: Option.Option<Completed> }>

  /**
   * Leases up to `limit` pending sends due by their workspace's clock (`now` plus its offset),
   * soonest first, skipping workspaces whose pace is booked beyond `paceHorizonMs` and sends another
   * worker holds. `now` is real time (ms).
   */
  readonly claimDue: (now: number, leaseMs: number, paceHorizonMs: number, limit: number) => Effect.Effect<
    ReadonlyArray<ClaimedSend>
  >
  /** Ends the lease of these sends; with `dueAt`, they next fall due then (quiet hours). */
  readonly release: (
    workspaceId: string,
    claimId: string,
    ids: ReadonlyArray<string>,
    dueAt: string | null
  ) => Effect.Effect<void>
  /**
   * Marks a claimed pending send `sending` until `until` (real time), committed before the carrier
   * is called. False when it is no longer this claim's to send (canceled, or claimed again).
   */
  readonly markSending: (workspaceId: string, id: string, claimId: string, until: number) => Effect.Effect<boolean>
  /**
   * Settles a claimed send (in the caller's transaction) and its broadcast's counts: from `pending`
   * or `sending`, or upgrades a swept `unknown_outcome` to what really happened. False when the
   * claim no longer holds it. `completed` when this was its broadcast's last pending recipient.
   */
  readonly settle: (
    workspaceId: string,
    id: string,
    claimId: string,
    outcome: Settlement,
    at: string
  ) => Effect.Effect<{ readonly settled: boolean; readonly completed: Option.Option<Completed> }>
  /**
   * Fails with `unknown_outcome` every `sending` send whose mark ran out by `now` (every one, with
   * `all`: at the start of the only worker, which also ends the leases of pending sends), never
   * sending it again. Answers the broadcasts this completed.
   */
  readonly sweep: (now: number, at: string, all: boolean) => Effect.Effect<ReadonlyArray<Completed>>
  /**
   * When the soonest pending send falls due (ms), for the worker's sleep; read without the workspace
   * clocks, which only make sends due sooner (the worker's poll bounds that wait).
   */
  readonly nextDue: () => Effect.Effect<Option.Option<number>>
}

export const SchedulingStore = Context.GenericTag<SchedulingStore>("core/SchedulingStore")

/** Counts after moving one recipient out of `pending` into its outcome's bucket. */
export const countSettled = (c: BroadcastCounts, from: "pending" | "failed", outcome: Settlement): BroadcastCounts => {
  const out = from === "pending" ? { ...c, pending: c.pending - 1 } : { ...c, failed: c.failed - 1 }
  return outcome.state === "sent"
    ? { ...out, sent: out.sent + 1 }
    : outcome.state === "failed"
    ? { ...out, failed: out.failed + 1 }
    : outcome.failure?.code === "canceled"
    ? { ...out, skippedCanceled: out.skippedCanceled + 1 }
    : { ...out, skippedOptedOut: out.skippedOptedOut + 1 }
}
