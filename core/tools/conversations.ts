/** Conversation and message capabilities (SPEC "Conversations", "Messages"). */
import { Effect, Schema } from "effect"
import {
  Activity,
  ConversationSummary,
  ListConversationsInput,
  MessageSearchResult,
  SearchMessagesInput
} from "../conversations/model.ts"
import { Conversations, PatchConversationInput } from "../conversations/service.ts"
import { FailedPrecondition, NotFound } from "../kernel/errors.ts"
import { SendMessageInput, SendMessageResult } from "../messaging/outbound.ts"
import { Messaging } from "../messaging/service.ts"
import { ById, read, tool, WithId } from "./tool.ts"

const conversationId = "01a20307-1c76-7000-ad98-06c77d1e0001"

export const listConversations = tool({
  name: "conversations_list",
  title: "List conversations",
  description:
    "List the inbox's conversations (one thread per contact and workspace number), most recent activity first, with a preview and unread count; `status` `open` or `done` filters. Use conversations_get for a thread's messages and calls, messages_search to find words in them. Page with `limit` (1 to 100, default 50) and the answer's `nextCursor` as `cursor`.",
  input: ListConversationsInput,
  output: Schema.Struct({ conversations: Schema.Array(ConversationSummary), nextCursor: Schema.NullOr(Schema.String) }),
  example: { status: "open" },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p, input) =>
    Effect.flatMap(Conversations, (c) => c.list(p, input)).pipe(
      Effect.map((page) => ({ conversations: page.items, nextCursor: page.nextCursor }))
    )
})

export const getConversation = tool({
  name: "conversations_get",
  title: "Get a conversation and its timeline",
  description:
    "A conversation by `id` and its timeline of activities, oldest first: messages (with signed media URLs valid 1 hour), calls and voicemails (with transcripts and summaries) and notes.",
  input: ById,
  output: Schema.Struct({ conversation: ConversationSummary, activities: Schema.Array(Activity) }),
  example: { id: conversationId },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Conversations, (c) => c.get(p, id))
})

export const updateConversation = tool({
  name: "conversations_update",
  title: "Mark a conversation open or done",
  description: "Set a conversation's `status` to `open` or `done`; either resets its unread count.",
  input: WithId(PatchConversationInput),
  output: Schema.Struct({ conversation: ConversationSummary }),
  example: { id: conversationId, status: "done" },
  scope: "conversations:write",
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id, ...changes }) =>
    Effect.flatMap(Conversations, (c) => c.patch(p, id, changes)).pipe(Effect.map((conversation) => ({ conversation })))
})

export const sendMessage = tool({
  name: "messages_send",
  title: "Send a text message",
  description:
    "Send an SMS (or MMS with `mediaUrls`) to the phone number `to`, or into an existing conversation by `conversationId`, from `from` or the workspace's default number. It reaches a real phone: send only what the user asked for. A live key needs an approved texting registration (messaging_status). Test keys record the message as `simulated` and send nothing. Pass `idempotencyKey` to make a retry safe.",
  input: SendMessageInput,
  output: SendMessageResult,
  example: { to: "+14155550123", body: "Your table for two is ready." },
  scope: "messages:send",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: true,
  errors: [NotFound, FailedPrecondition],
  run: (p, input) => Effect.flatMap(Messaging, (m) => m.send(p, input))
})

export const searchMessages = tool({
  name: "messages_search",
  title: "Search messages and call transcripts",
  description:
    "Find messages and call/voicemail transcripts containing the words (or word prefixes) of `q`, newest first, each with its conversation; `limit` 1 to 100, default 25.",
  input: SearchMessagesInput,
  output: Schema.Struct({ results: Schema.Array(MessageSearchResult) }),
  example: { q: "table ready" },
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p, { q, limit }) =>
    Effect.flatMap(Conversations, (c) => c.search(p, q, limit ?? 25)).pipe(Effect.map((results) => ({ results })))
})
