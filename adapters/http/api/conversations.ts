/** SPEC "Conversations". */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Activity, ConversationSummary } from "../../../core/conversations/model.ts"
import { PatchConversationInput } from "../../../core/conversations/service.ts"
import { ListConversationsInput } from "../../../core/conversations/model.ts"
import { NotFound } from "./errors.ts"
import { activity, conversation } from "./examples.ts"
import { IdParam, limitParam, publicGroup, requires } from "./shared.ts"

export class ConversationsGroup extends publicGroup(
  HttpApiGroup.make("conversations")
    .add(
      HttpApiEndpoint.get("list", "/conversations")
        .setUrlParams(Schema.Struct({ ...ListConversationsInput.fields, limit: Schema.optional(limitParam(100)) }))
        .addSuccess(Schema.Struct({ conversations: Schema.Array(ConversationSummary), nextCursor: Schema.NullOr(Schema.String) }).annotations({
          examples: [{ conversations: [conversation], nextCursor: null }]
        }))
        .annotate(OpenApi.Description, "List threads, most recent activity first.")
        .pipe(requires("conversations:read"))
    )
    .add(
      HttpApiEndpoint.get("get", "/conversations/:id")
        .setPath(IdParam)
        .addSuccess(Schema.Struct({ conversation: ConversationSummary, activities: Schema.Array(Activity) }).annotations({
          examples: [{ conversation, activities: [activity] }]
        }))
        .addError(NotFound)
        .annotate(OpenApi.Description, "A thread and its activities, oldest first, with signed media URLs.")
        .pipe(requires("conversations:read"))
    )
    .add(
      HttpApiEndpoint.patch("update", "/conversations/:id")
        .setPath(IdParam)
        .setPayload(PatchConversationInput.annotations({ examples: [{ status: "done" }] }))
        .addSuccess(Schema.Struct({ conversation: ConversationSummary }).annotations({ examples: [{ conversation: { ...conversation, status: "done" } }] }))
        .addError(NotFound)
        .annotate(OpenApi.Description, "Mark a thread open or done; resets `unread`.")
        .pipe(requires("conversations:write"))
    )
).annotate(OpenApi.Title, "Conversations") {}
