/** SPEC "Conversations". */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListConversationsInput } from "../../../core/conversations/model.ts"
import { PatchConversationInput } from "../../../core/conversations/service.ts"
import { getConversation, listConversations, updateConversation } from "../../../core/tools/conversations.ts"
import { activity, conversation } from "./examples.ts"
import { capability, IdParam, limitParam, publicGroup } from "./shared.ts"

export class ConversationsGroup extends publicGroup(
  HttpApiGroup.make("conversations")
    .add(
      HttpApiEndpoint.get("list", "/conversations")
        .setUrlParams(Schema.Struct({ ...ListConversationsInput.fields, limit: Schema.optional(limitParam(100)) }))
        .addSuccess(
          listConversations.output.annotations({ examples: [{ conversations: [conversation], nextCursor: null }] })
        )
        .annotate(OpenApi.Description, "List threads, most recent activity first.")
        .pipe(capability(listConversations))
    )
    .add(
      HttpApiEndpoint.get("get", "/conversations/:id")
        .setPath(IdParam)
        .addSuccess(getConversation.output.annotations({ examples: [{ conversation, activities: [activity] }] }))
        .annotate(OpenApi.Description, "A thread and its activities, oldest first, with signed media URLs.")
        .pipe(capability(getConversation))
    )
    .add(
      HttpApiEndpoint.patch("update", "/conversations/:id")
        .setPath(IdParam)
        .setPayload(PatchConversationInput.annotations({ examples: [{ status: "done" }] }))
        .addSuccess(
          updateConversation.output.annotations({ examples: [{ conversation: { ...conversation, status: "done" } }] })
        )
        .annotate(OpenApi.Description, "Mark a thread open or done; resets `unread`.")
        .pipe(capability(updateConversation))
    )
).annotate(OpenApi.Title, "Conversations").annotate(
  OpenApi.Description,
  "Threads with one outside number: messages, calls and voicemails in order."
) {}
