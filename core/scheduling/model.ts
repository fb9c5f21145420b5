/**
 * Texts that leave later or to many recipients (CONTRACT "Scheduled messages and broadcasts"): a
 * scheduled message, a broadcast, and their sends, one per recipient. Every send is a row of one
 * queue (store.ts) that any process may claim; its state is what the resources show.
 */
import { Schema } from "effect"
import { Text } from "../kernel/text.ts"

/** An instant with its offset (RFC 3339), as a client writes it. */
export const DateTime = Schema.String.pipe(
  Schema.maxLength(40),
  Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i, {
    message: () => "must be a date-time with its offset, such as 2026-12-01T09:30:00-05:00"
  }),
  Schema.filter((s) => !Number.isNaN(Date.parse(s)) || "is not a valid date-time")
).annotations({ jsonSchema: { type: "string", format: "date-time" } })

const MediaUrlsInput = Schema.Array(Schema.String.pipe(Schema.maxLength(2048))).pipe(Schema.maxItems(10))

/** Where a refusal or failure is kept: the error envelope's `code` and `message`. */
export const Failure = Schema.Struct({ code: Schema.String, message: Schema.String }).annotations({
  identifier: "SendFailure"
})
export type Failure = typeof Failure.Type

/**
 * One text to one recipient, as queued. `pending` until claimed and sent; `sending` from just
 * before the carrier call until its record (a process that dies then leaves it to the sweep, which
 * fails it with `unknown_outcome` rather than send again); then `sent`, `failed` or `skipped`.
 */
export const SendState = Schema.Literal("pending", "sending", "sent", "failed", "skipped")
export type SendState = typeof SendState.Type

export const SendSource = Schema.Literal("scheduled", "broadcast")
export type SendSource = typeof SendSource.Type

/** Failure codes of the queue itself, beside the error envelope's. */
export const UNKNOWN_OUTCOME = "unknown_outcome"
export const OPTED_OUT = "opted_out"
export const CANCELED = "canceled"

export const SendRecord = Schema.Struct({
  workspaceId: Schema.UUID,
  id: Schema.UUID,
  source: SendSource,
  sourceId: Schema.UUID,
  /** The recipient's place in its broadcast (the order recipients are listed and sent in). */
  seq: Schema.Int,
  to: Schema.String,
  contactId: Schema.NullOr(Schema.UUID),
  /** Message segments, what pacing counts (core/pacing/segments.ts). */
  segments: Schema.Int,
  /** When it may leave, on the workspace's clock; quiet hours move it later. */
  dueAt: Schema.String,
  state: SendState,
  messageId: Schema.NullOr(Schema.UUID),
  failure: Schema.NullOr(Failure),
  updatedAt: Schema.String
})
export type SendRecord = typeof SendRecord.Type

// --- Scheduled messages ---

export const ScheduledStatus = Schema.Literal("scheduled", "sent", "failed", "canceled")

export const ScheduledMessage = Schema.Struct({
  id: Schema.UUID,
  to: Schema.String.annotations({ description: "E.164" }),
  from: Schema.NullOr(Schema.String).annotations({
    description: "The number it is sent from; null: the workspace's default number when it is sent"
  }),
  conversationId: Schema.NullOr(Schema.UUID),
  body: Schema.String,
  mediaUrls: Schema.Array(Schema.String),
  sendAt: Schema.String,
  status: ScheduledStatus,
  messageId: Schema.NullOr(Schema.UUID),
  failure: Schema.NullOr(Failure),
  createdAt: Schema.String
}).annotations({ identifier: "ScheduledMessage" })
export type ScheduledMessage = typeof ScheduledMessage.Type

/** As stored: what was asked, by which key. Its status is its send's state. */
/** What a scheduled message and a broadcast both store: whose, which key asked (test or live), what to send, when. */
const Queued = {
  workspaceId: Schema.UUID,
  id: Schema.UUID,
  keyId: Schema.UUID,
  live: Schema.Boolean,
  from: Schema.NullOr(Schema.String),
  body: Schema.String,
  mediaUrls: Schema.Array(Schema.String),
  sendAt: Schema.String,
  createdAt: Schema.String
}

export const ScheduledRecord = Schema.Struct({
  ...Queued,
  to: Schema.String,
  conversationId: Schema.NullOr(Schema.UUID)
})
export type ScheduledRecord = typeof ScheduledRecord.Type

export const scheduledStatusOf = (state: SendState): typeof ScheduledStatus.Type =>
  state === "sent" ? "sent" : state === "failed" ? "failed" : state === "skipped" ? "canceled" : "scheduled"

export const CreateScheduledMessageInput = Schema.Struct({
  to: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  conversationId: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  from: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  body: Text(1600).pipe(Schema.minLength(1)),
  mediaUrls: Schema.optional(MediaUrlsInput),
  sendAt: DateTime
}).annotations({ identifier: "CreateScheduledMessageInput", parseOptions: { onExcessProperty: "error" } })
export type CreateScheduledMessageInput = typeof CreateScheduledMessageInput.Type

export const ListScheduledMessagesInput = Schema.Struct({
  status: Schema.optional(ScheduledStatus.annotations({ description: "Only the scheduled messages with this status" })),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(1024)))
}).annotations({ identifier: "ListScheduledMessagesInput", parseOptions: { onExcessProperty: "error" } })
export type ListScheduledMessagesInput = typeof ListScheduledMessagesInput.Type

// --- Broadcasts ---

export const MAX_RECIPIENTS = 10_000

export const BroadcastCounts = Schema.Struct({
  total: Schema.Int,
  sent: Schema.Int,
  failed: Schema.Int,
  skippedOptedOut: Schema.Int,
  skippedCanceled: Schema.Int.annotations({
    description: "Recipients not yet sent when the broadcast was canceled"
  }),
  pending: Schema.Int
}).annotations({
  identifier: "BroadcastCounts",
  description: "`total` is every recipient after dedupe: sent + failed + skippedOptedOut + skippedCanceled + pending"
})
export type BroadcastCounts = typeof BroadcastCounts.Type

export const BroadcastStatus = Schema.Literal("scheduled", "sending", "completed", "canceled")

export const Broadcast = Schema.Struct({
  id: Schema.UUID,
  from: Schema.NullOr(Schema.String).annotations({
    description: "The number it is sent from; null: the workspace's default number at each send"
  }),
  body: Schema.String,
  mediaUrls: Schema.Array(Schema.String),
  status: BroadcastStatus,
  sendAt: Schema.String,
  counts: BroadcastCounts,
  createdAt: Schema.String,
  completedAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Broadcast" })
export type Broadcast = typeof Broadcast.Type

/** As stored. `state` is `active` until every recipient is settled (`completed`) or it is canceled. */
export const BroadcastRecord = Schema.Struct({
  ...Queued,
  state: Schema.Literal("active", "completed", "canceled"),
  counts: BroadcastCounts,
  completedAt: Schema.NullOr(Schema.String)
})
export type BroadcastRecord = typeof BroadcastRecord.Type

export const RecipientStatus = Schema.Literal("pending", "sent", "failed", "skipped")

export const BroadcastRecipient = Schema.Struct({
  phone: Schema.String,
  contactId: Schema.NullOr(Schema.UUID),
  status: RecipientStatus,
  messageId: Schema.NullOr(Schema.UUID),
  failure: Schema.NullOr(Failure)
}).annotations({ identifier: "BroadcastRecipient" })
export type BroadcastRecipient = typeof BroadcastRecipient.Type

export const recipientOf = (s: SendRecord): BroadcastRecipient => ({
  phone: s.to,
  contactId: s.contactId,
  status: s.state === "sending" ? "pending" : s.state,
  messageId: s.messageId,
  failure: s.failure
})

export const BroadcastRecipientsInput = Schema.Struct({
  phones: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(32))).pipe(Schema.maxItems(MAX_RECIPIENTS))),
  contactIds: Schema.optional(
    Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(MAX_RECIPIENTS))
  ),
  tags: Schema.optional(Schema.Array(Text(64).pipe(Schema.minLength(1))).pipe(Schema.maxItems(50)))
}).annotations({ identifier: "BroadcastRecipients", parseOptions: { onExcessProperty: "error" } })

export const CreateBroadcastInput = Schema.Struct({
  from: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  body: Text(1600).pipe(Schema.minLength(1)),
  mediaUrls: Schema.optional(MediaUrlsInput),
  recipients: BroadcastRecipientsInput,
  sendAt: Schema.optional(DateTime)
}).annotations({ identifier: "CreateBroadcastInput", parseOptions: { onExcessProperty: "error" } })
export type CreateBroadcastInput = typeof CreateBroadcastInput.Type

export const ListBroadcastsInput = Schema.Struct({
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(1024)))
}).annotations({ identifier: "ListBroadcastsInput", parseOptions: { onExcessProperty: "error" } })
export type ListBroadcastsInput = typeof ListBroadcastsInput.Type

export const ListRecipientsInput = Schema.Struct({
  status: Schema.optional(RecipientStatus.annotations({ description: "Only the recipients with this status" })),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 200))),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(1024)))
}).annotations({ identifier: "ListBroadcastRecipientsInput", parseOptions: { onExcessProperty: "error" } })
export type ListRecipientsInput = typeof ListRecipientsInput.Type
