/** SPEC "Messages": send and search. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SearchMessagesInput } from "../../../core/conversations/model.ts"
import { SendMessageInput } from "../../../core/messaging/outbound.ts"
import { searchMessages, sendMessage } from "../../../core/tools/conversations.ts"
import { activity, conversation } from "./examples.ts"
import { capability, IdempotencyHeaders, limitParam, publicGroup } from "./shared.ts"

const searchResult = {
  activityId: activity.id,
  conversationId: conversation.id,
  type: activity.type,
  direction: activity.direction,
  body: activity.body,
  participants: conversation.participants,
  numberE164: conversation.numberE164,
  createdAt: activity.createdAt
}

export class MessagesGroup extends publicGroup(
  HttpApiGroup.make("messages")
    .add(
      HttpApiEndpoint.post("send", "/messages")
        .setPayload(
          SendMessageInput.annotations({ examples: [{ to: conversation.participants[0], body: activity.body }] })
        )
        .addSuccess(
          sendMessage.output.annotations({
            examples: [{
              message: { ...activity, deliveryStatus: "simulated" },
              conversationId: conversation.id,
              simulated: true
            }]
          }),
          { status: 201 }
        )
        .annotate(
          OpenApi.Description,
          "Send an SMS/MMS (`Idempotency-Key` supported). Test keys record `simulated` and send nothing. Live keys need a registration filed live and approved, and a number ordered with a live key (without `from`, such a number is chosen first) and, once the campaign is active, assigned to it (`+1... is not yet assigned to the texting campaign` until the registry confirms the assignment); otherwise 409. A `conversationId` of a withheld callers' thread (`participants` empty) is a 409: there is no number to text."
        )
        .setHeaders(IdempotencyHeaders)
        .pipe(capability(sendMessage))
    )
    .add(
      HttpApiEndpoint.get("search", "/messages/search")
        .setUrlParams(Schema.Struct({ ...SearchMessagesInput.fields, limit: Schema.optional(limitParam(100)) }))
        .addSuccess(searchMessages.output.annotations({ examples: [{ results: [searchResult] }] }))
        .annotate(
          OpenApi.Description,
          "Search message bodies and call/voicemail transcripts by words and prefixes, newest first."
        )
        .pipe(capability(searchMessages))
    )
).annotate(OpenApi.Title, "Messages").annotate(
  OpenApi.Description,
  "Send SMS/MMS and search message and transcript text."
) {}
