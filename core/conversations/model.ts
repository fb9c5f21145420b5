/** Threads and their activities (SPEC "Conversation summary", "Activity"). */
import { Schema } from "effect"
import { DeliveryStatus } from "../messaging/deliveryStatus.ts"
import type { StoredMedia } from "../media.ts"

/** A JSON object of any shape; documented explicitly (Schema.Unknown would emit a duplicate `$id`). */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  jsonSchema: { type: "object", description: "call metadata: status, duration and more" }
})

export const ThreadStatus = Schema.Literal("open", "done")
export type ThreadStatus = typeof ThreadStatus.Type

export const ConversationSummary = Schema.Struct({
  id: Schema.UUID,
  inboxId: Schema.UUID,
  numberE164: Schema.NullOr(Schema.String),
  participants: Schema.Array(Schema.String),
  contactName: Schema.String,
  status: ThreadStatus,
  assigneeUid: Schema.NullOr(Schema.String),
  lastActivityAt: Schema.String,
  preview: Schema.NullOr(Schema.String),
  unread: Schema.Number
}).annotations({ identifier: "ConversationSummary" })
export type ConversationSummary = typeof ConversationSummary.Type

export const ActivityType = Schema.Literal("message", "call", "voicemail", "internal_note", "system")

export const Media = Schema.Struct({
  url: Schema.NullOr(Schema.String),
  contentType: Schema.String,
  size: Schema.Number,
  filename: Schema.String
})

export const TranscriptEntry = Schema.Struct({
  speaker: Schema.Literal("agent", "caller", "member", "callee"),
  text: Schema.String,
  offsetSeconds: Schema.Number
})

export const Activity = Schema.Struct({
  id: Schema.UUID,
  type: ActivityType,
  direction: Schema.NullOr(Schema.Literal("inbound", "outbound")),
  authorUid: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String),
  media: Schema.Array(Media),
  deliveryStatus: Schema.NullOr(DeliveryStatus),
  call: Schema.NullOr(JsonObject),
  aiTags: Schema.Array(Schema.String),
  callTranscript: Schema.NullOr(Schema.Array(TranscriptEntry)),
  createdAt: Schema.String
}).annotations({ identifier: "Activity" })
export type Activity = typeof Activity.Type

/** One thread per workspace number and participant. */
export interface Thread {
  readonly id: string
  readonly workspaceId: string
  readonly inboxId: string
  readonly numberE164: string
  readonly participant: string
  /** The contact whose phone the thread involves; null after that contact was deleted. */
  readonly contactId: string | null
  readonly status: ThreadStatus
  readonly assigneeUid: string | null
  readonly lastActivityAt: string
  readonly preview: string | null
  readonly unread: number
  readonly createdAt: string
}

/** A thread as listed: with the name of its contact, or its raw number when it has none. */
export interface ThreadView extends Thread {
  readonly contactName: string
}

export interface ActivityRecord {
  readonly id: string
  readonly workspaceId: string
  readonly conversationId: string
  readonly type: Activity["type"]
  readonly direction: "inbound" | "outbound" | null
  readonly authorUid: string | null
  readonly body: string | null
  readonly media: ReadonlyArray<StoredMedia>
  readonly deliveryStatus: DeliveryStatus | null
  readonly carrierMessageId: string | null
  readonly call: Readonly<Record<string, unknown>> | null
  readonly aiTags: ReadonlyArray<string>
  readonly callTranscript: ReadonlyArray<typeof TranscriptEntry.Type> | null
  readonly createdAt: string
}

export const MessageSearchResult = Schema.Struct({
  activityId: Schema.UUID,
  conversationId: Schema.UUID,
  type: ActivityType,
  direction: Schema.NullOr(Schema.Literal("inbound", "outbound")),
  body: Schema.NullOr(Schema.String),
  participants: Schema.Array(Schema.String),
  numberE164: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "MessageSearchResult" })
export type MessageSearchResult = typeof MessageSearchResult.Type

export const toSummary = (t: ThreadView): ConversationSummary => ({
  id: t.id,
  inboxId: t.inboxId,
  numberE164: t.numberE164,
  participants: [t.participant],
  contactName: t.contactName,
  status: t.status,
  assigneeUid: t.assigneeUid,
  lastActivityAt: t.lastActivityAt,
  preview: t.preview,
  unread: t.unread
})

/** The preview line of a thread: the text, or a media note for a text-less MMS. */
export const previewOf = (body: string | null, mediaCount: number): string | null =>
  body !== null && body.length > 0 ? body.slice(0, 160) : mediaCount > 0 ? `[${mediaCount} attachment${mediaCount > 1 ? "s" : ""}]` : null

/** Display name of a contact, falling back to the raw number. */
export const contactNameOf = (
  c: { readonly firstName: string | null; readonly lastName: string | null; readonly company: string | null } | null,
  participant: string
): string => {
  if (c === null) return participant
  const name = [c.firstName, c.lastName].filter((s): s is string => s !== null && s.length > 0).join(" ")
  return name || c.company || participant
}

// ---- Message search semantics (CONTRACT.md): words and prefixes, case-insensitive ----

/** Words of a text as search sees them: lower-cased runs of letters and digits. */
export const words = (text: string): ReadonlyArray<string> => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

/** Every query word must begin some word of the document. */
export const matchesQuery = (document: string, queryWords: ReadonlyArray<string>): boolean => {
  const doc = words(document)
  return queryWords.length > 0 && queryWords.every((q) => doc.some((w) => w.startsWith(q)))
}

/** The searchable text of an activity: its body and its transcript. */
export const searchableText = (a: Pick<ActivityRecord, "body" | "callTranscript">): string =>
  [a.body ?? "", ...(a.callTranscript ?? []).map((t) => t.text)].join(" ")
