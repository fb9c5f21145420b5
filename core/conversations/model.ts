/** Threads and their activities (SPEC "Conversation summary", "Activity"). */
import { Schema } from "effect"
import { PageSize } from "../kernel/pagination.ts"
import { nullable, projectionWith, withDefault } from "../kernel/records.ts"
import { StoredMedia } from "../media/model.ts"
import { DeliveryStatus } from "../messaging/deliveryStatus.ts"

/** A JSON object of any shape; documented explicitly (Schema.Unknown would emit a duplicate `$id`). */
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  jsonSchema: { type: "object", description: "call metadata: status, duration and more" }
})

export const ThreadStatus = Schema.Literal("open", "done")
export type ThreadStatus = typeof ThreadStatus.Type

export const ActivityType = Schema.Literal("message", "call", "voicemail", "internal_note", "system")

/** A stored media file as clients see it: a signed URL in place of its blob key. */
export const Media = Schema.Struct({ url: Schema.NullOr(Schema.String), ...StoredMedia.omit("key").fields })

export const TranscriptEntry = Schema.Struct({
  speaker: Schema.Literal("agent", "caller", "member", "callee"),
  text: Schema.String,
  offsetSeconds: Schema.Number
})

const Direction = Schema.NullOr(Schema.Literal("inbound", "outbound"))

/**
 * The participant of the thread a workspace number's withheld callers share: a caller who sent no
 * phone number (a carrier's `anonymous`, `restricted`, `private`, empty, or a SIP address). Not a
 * phone number, so no contact owns the thread and nothing can be texted or called back there.
 */
export const WITHHELD = "withheld"
/** The name such a thread shows. */
export const WITHHELD_NAME = "Withheld caller"

/** A thread's participants as clients see them: its phone number, none for withheld callers. */
export const participantsOf = (participant: string): Array<string> => (participant === WITHHELD ? [] : [participant])

/** One thread per workspace number and participant (an E.164 number, or `WITHHELD`). */
export const Thread = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  inboxId: Schema.UUID,
  numberE164: Schema.String,
  participant: Schema.String,
  /** The contact whose phone the thread involves; null after that contact was deleted, and for withheld callers. */
  contactId: Schema.NullOr(Schema.UUID),
  status: ThreadStatus,
  assigneeUid: Schema.NullOr(Schema.String),
  lastActivityAt: Schema.String,
  preview: Schema.NullOr(Schema.String),
  unread: Schema.Number,
  createdAt: Schema.String
})
export type Thread = typeof Thread.Type

/** A thread as listed: with the name of its contact, or its raw number when it has none. */
export type ThreadView = Thread & { readonly contactName: string }

const { id, inboxId, status, assigneeUid, lastActivityAt, preview, unread } = Thread.fields

/** SPEC "Conversation summary": a thread names its participants as a list (one today). */
export const ConversationSummary = Schema.Struct({
  id,
  inboxId,
  numberE164: Schema.NullOr(Schema.String),
  participants: Schema.Array(Schema.String),
  contactName: Schema.String,
  status,
  assigneeUid,
  lastActivityAt,
  preview,
  unread
}).annotations({ identifier: "ConversationSummary" })
export type ConversationSummary = typeof ConversationSummary.Type

/** A stored activity of a thread: messages, calls, voicemails, notes. */
export const ActivityRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  conversationId: Schema.UUID,
  type: ActivityType,
  direction: Direction,
  authorUid: nullable(Schema.String),
  body: nullable(Schema.String),
  media: withDefault(Schema.Array(StoredMedia), () => []),
  deliveryStatus: nullable(DeliveryStatus),
  carrierMessageId: nullable(Schema.String),
  call: nullable(JsonObject),
  aiTags: withDefault(Schema.Array(Schema.String), () => []),
  callTranscript: nullable(Schema.Array(TranscriptEntry)),
  createdAt: Schema.String
})
export type ActivityRecord = typeof ActivityRecord.Type

/**
 * A new activity: fields not given start at their defaults. Not validated: its ids come from the Ids
 * port, and an outbound message gets its thread id only inside the transaction.
 */
export const newActivity = (fields: Parameters<typeof ActivityRecord.make>[0]): ActivityRecord =>
  ActivityRecord.make(fields, { disableValidation: true })

/** SPEC "Activity": the stored activity without its tenant, thread and carrier id, media as signed URLs. */
export const Activity = Schema.Struct({
  ...ActivityRecord.omit("workspaceId", "conversationId", "carrierMessageId").fields,
  media: Schema.Array(Media)
}).annotations({ identifier: "Activity" })
export type Activity = typeof Activity.Type

export const MessageSearchResult = Schema.Struct({
  activityId: Schema.UUID,
  conversationId: Schema.UUID,
  type: ActivityType,
  direction: Direction,
  body: Schema.NullOr(Schema.String),
  participants: Schema.Array(Schema.String),
  numberE164: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "MessageSearchResult" })
export type MessageSearchResult = typeof MessageSearchResult.Type

const summaryOf = projectionWith(ConversationSummary)
export const toSummary = (t: ThreadView): ConversationSummary =>
  summaryOf(t, { participants: participantsOf(t.participant) })

/** The preview line of a thread: the text, or a media note for a text-less MMS. */
export const previewOf = (body: string | null, mediaCount: number): string | null =>
  body !== null && body.length > 0
    ? body.slice(0, 160)
    : mediaCount > 0
    ? `[${mediaCount} attachment${mediaCount > 1 ? "s" : ""}]`
    : null

/** Display name of a contact, falling back to the raw number (`Withheld caller` for withheld callers). */
export const contactNameOf = (
  c: { readonly firstName: string | null; readonly lastName: string | null; readonly company: string | null } | null,
  participant: string
): string => {
  const fallback = participant === WITHHELD ? WITHHELD_NAME : participant
  if (c === null) return fallback
  const name = [c.firstName, c.lastName].filter((s): s is string => s !== null && s.length > 0).join(" ")
  return name || c.company || fallback
}

// ---- Message search semantics (CONTRACT.md): words and prefixes, case-insensitive ----

/** Words of a text as search sees them: lower-cased runs of letters and digits. */
export const words = (text: string): ReadonlyArray<string> =>
  text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

/**
 * Words too common to expand as a prefix: `the` would also match `there`, `them`, `then`... which
 * is rarely what was typed and makes the index read every word beginning with it. They still
 * match as whole words.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  ("a an and are as at be but by for from had has have he her his i if in is it its me my no not of on or our " +
    "she so than that the their them then there they this to us was we were what when will with you your")
    .split(" ")
)

/**
 * A message search: every word must be a word of the message, and the last may also begin one, as
 * a person types (`prefix`), unless it is a stop word.
 */
export interface SearchQuery {
  readonly words: ReadonlyArray<string>
  readonly prefix: boolean
}

/** The query of `q`'s first 8 words; none: no query. */
export const searchQuery = (q: string): SearchQuery | null => {
  const found = words(q).slice(0, 8)
  return found.length === 0 ? null : { words: found, prefix: !STOP_WORDS.has(found[found.length - 1]!) }
}

export const matchesQuery = (document: string, query: SearchQuery): boolean => {
  const doc = new Set(words(document))
  const last = query.words.length - 1
  return query.words.every((q, i) =>
    doc.has(q) || (i === last && query.prefix && [...doc].some((w) => w.startsWith(q)))
  )
}

/** The searchable text of an activity: its body and its transcript. */
export const searchableText = (a: Pick<ActivityRecord, "body" | "callTranscript">): string =>
  [a.body ?? "", ...(a.callTranscript ?? []).map((t) => t.text)].join(" ")

/** Listing threads (`GET /conversations`, the `conversations_list` tool); REST reads `limit` from text. */
export const ListConversationsInput = Schema.Struct({
  status: Schema.optional(ThreadStatus).annotations({ description: "Only threads in this state; all when absent" }),
  limit: Schema.optional(PageSize(100)),
  cursor: Schema.optional(Schema.String)
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type ListConversationsInput = typeof ListConversationsInput.Type

/** Searching messages (`GET /messages/search`, the `messages_search` tool); REST reads `limit` from text. */
export const SearchMessagesInput = Schema.Struct({
  q: Schema.propertySignature(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).annotations({
    description:
      "Words to find in message bodies and call and voicemail transcripts; the last word also matches as the beginning of a word"
  }),
  limit: Schema.optional(PageSize(100))
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type SearchMessagesInput = typeof SearchMessagesInput.Type
