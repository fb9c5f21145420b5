/** Conversation and message capabilities (SPEC "Conversations", "Messages"). */
import { Effect, Schema } from "effect"
import { ListConversationsInput, SearchMessagesInput } from "../conversations/model.ts"
import { Conversations, PatchConversationInput } from "../conversations/service.ts"
import { SendMessageInput } from "../messaging/outbound.ts"
import { Messaging } from "../messaging/service.ts"
import { ById, Changes, tool } from "./tool.ts"

const conversationId = "01a20307-1c76-7000-ad98-06c77d1e0001"

export const listConversations = tool({
  name: "list_conversations",
  description: "List conversations (threads), most recent activity first, optionally only `open` or `done` ones; page with `cursor`.",
  input: ListConversationsInput,
  example: { status: "open" },
  scope: "conversations:read",
  run: (p, input) =>
    Effect.flatMap(Conversations, (c) => c.list(p, input)).pipe(Effect.map((page) => ({ conversations: page.items, nextCursor: page.nextCursor })))
})

export const getConversation = tool({
  name: "get_conversation",
  description: "A conversation and its timeline of activities (messages, calls, notes), oldest first, with signed media URLs.",
  input: ById,
  example: { id: conversationId },
  scope: "conversations:read",
  run: (p, { id }) => Effect.flatMap(Conversations, (c) => c.get(p, id))
})

export const updateConversation = tool({
  name: "update_conversation",
  description: "Mark a conversation open or done; resets its unread count.",
  input: Changes(PatchConversationInput),
  example: { id: conversationId, changes: { status: "done" } },
  scope: "conversations:write",
  run: (p, { id, changes }) => Effect.flatMap(Conversations, (c) => c.patch(p, id, changes)).pipe(Effect.map((conversation) => ({ conversation })))
})

export const sendMessage = tool({
  name: "send_message",
  description: "Send an SMS/MMS to `to` (or into `conversationId`), from `from` or the workspace's default number. Test keys record `simulated` and send nothing.",
  input: SendMessageInput,
  example: { to: "+14155550123", body: "Your table for two is ready." },
  scope: "messages:send",
  run: (p, input) => Effect.flatMap(Messaging, (m) => m.send(p, input))
})

export const searchMessages = tool({
  name: "search_messages",
  description: "Search message bodies and call/voicemail transcripts by words and word prefixes, newest first.",
  input: SearchMessagesInput,
  example: { q: "table ready" },
  scope: "conversations:read",
  run: (p, { q, limit }) => Effect.flatMap(Conversations, (c) => c.search(p, q, limit ?? 25)).pipe(Effect.map((results) => ({ results })))
})
