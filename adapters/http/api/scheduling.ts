/** CONTRACT "Scheduled messages and broadcasts": texts that go out later or to many recipients. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CreateBroadcastInput,
  CreateScheduledMessageInput,
  ListBroadcastsInput,
  ListRecipientsInput,
  ListScheduledMessagesInput
} from "../../../core/scheduling/model.ts"
import * as Tools from "../../../core/tools/scheduling.ts"
import { broadcast, broadcastRecipient, scheduledMessage } from "./examples.ts"
import { capability, IdempotencyHeaders, IdParam, limitParam, publicGroup } from "./shared.ts"

export class SchedulingGroup extends publicGroup(
  HttpApiGroup.make("scheduling")
    .add(
      HttpApiEndpoint.post("createScheduled", "/scheduled-messages")
        .setPayload(CreateScheduledMessageInput.annotations({
          examples: [{ to: scheduledMessage.to, body: scheduledMessage.body, sendAt: scheduledMessage.sendAt }]
        }))
        .addSuccess(Tools.createScheduledMessage.output.annotations({ examples: [{ scheduledMessage }] }), {
          status: 201
        })
        .annotate(
          OpenApi.Description,
          "Schedule a text for `sendAt` (1 minute to 30 days ahead). Input is checked now (400); at its time it is sent exactly as `POST /messages` would send it then (gates, opt-outs, test or live by this key), after the recipient's quiet hours and at the workspace's texting pace. A refusal is kept in `failure`."
        )
        .setHeaders(IdempotencyHeaders)
        .pipe(capability(Tools.createScheduledMessage))
    )
    .add(
      HttpApiEndpoint.get("listScheduled", "/scheduled-messages")
        .setUrlParams(Schema.Struct({ ...ListScheduledMessagesInput.fields, limit: Schema.optional(limitParam(100)) }))
        .addSuccess(Tools.listScheduledMessages.output.annotations({
          examples: [{ scheduledMessages: [scheduledMessage], nextCursor: null }]
        }))
        .annotate(OpenApi.Description, "Scheduled messages, soonest first; `status` filters.")
        .pipe(capability(Tools.listScheduledMessages))
    )
    .add(
      HttpApiEndpoint.get("getScheduled", "/scheduled-messages/:id").setPath(IdParam)
        .addSuccess(Tools.getScheduledMessage.output.annotations({ examples: [{ scheduledMessage }] }))
        .annotate(OpenApi.Description, "A scheduled message: its status, and its `messageId` or `failure`.")
        .pipe(capability(Tools.getScheduledMessage))
    )
    .add(
      HttpApiEndpoint.del("cancelScheduled", "/scheduled-messages/:id").setPath(IdParam)
        .addSuccess(Tools.cancelScheduledMessage.output.annotations({
          examples: [{ scheduledMessage: { ...scheduledMessage, status: "canceled" } }]
        }))
        .annotate(
          OpenApi.Description,
          "Cancel it before it is sent (200, status `canceled`, again on a repeat); `409` once it is being sent, sent or failed."
        )
        .pipe(capability(Tools.cancelScheduledMessage))
    )
    .add(
      HttpApiEndpoint.post("createBroadcast", "/broadcasts")
        .setPayload(CreateBroadcastInput.annotations({
          examples: [{ body: broadcast.body, recipients: { phones: ["+14155550123"], tags: ["patients"] } }]
        }))
        .addSuccess(
          Tools.createBroadcast.output.annotations({
            examples: [{
              broadcast: {
                ...broadcast,
                counts: { total: 240, sent: 0, failed: 0, skippedOptedOut: 0, skippedCanceled: 0, pending: 240 }
              }
            }]
          }),
          { status: 201 }
        )
        .annotate(
          OpenApi.Description,
          "One text to many: recipients from `phones`, `contactIds` and `tags` (a contact's first phone), deduplicated, at most 10,000. Each gets its own message in its own conversation, as `POST /messages` would send it; opted-out recipients are skipped and counted. Starts at `sendAt` or now, waits for each recipient's quiet hours, goes at the workspace's texting pace; `broadcast.completed` when it ends."
        )
        .setHeaders(IdempotencyHeaders)
        .pipe(capability(Tools.createBroadcast))
    )
    .add(
      HttpApiEndpoint.get("listBroadcasts", "/broadcasts")
        .setUrlParams(Schema.Struct({ ...ListBroadcastsInput.fields, limit: Schema.optional(limitParam(100)) }))
        .addSuccess(
          Tools.listBroadcasts.output.annotations({ examples: [{ broadcasts: [broadcast], nextCursor: null }] })
        )
        .annotate(OpenApi.Description, "Broadcasts, newest first.")
        .pipe(capability(Tools.listBroadcasts))
    )
    .add(
      HttpApiEndpoint.get("getBroadcast", "/broadcasts/:id").setPath(IdParam)
        .addSuccess(Tools.getBroadcast.output.annotations({ examples: [{ broadcast }] }))
        .annotate(OpenApi.Description, "A broadcast: its status and counts.")
        .pipe(capability(Tools.getBroadcast))
    )
    .add(
      HttpApiEndpoint.get("listRecipients", "/broadcasts/:id/recipients").setPath(IdParam)
        .setUrlParams(Schema.Struct({ ...ListRecipientsInput.fields, limit: Schema.optional(limitParam(200)) }))
        .addSuccess(Tools.listBroadcastRecipients.output.annotations({
          examples: [{ recipients: [broadcastRecipient], nextCursor: null }]
        }))
        .annotate(
          OpenApi.Description,
          "The recipients in sending order, with their status, `messageId` and `failure` (`unknown_outcome`: the sending process stopped before the carrier's answer was recorded; it is never sent twice)."
        )
        .pipe(capability(Tools.listBroadcastRecipients))
    )
    .add(
      HttpApiEndpoint.del("cancelBroadcast", "/broadcasts/:id").setPath(IdParam)
        .addSuccess(
          Tools.cancelBroadcast.output.annotations({ examples: [{ broadcast: { ...broadcast, status: "canceled" } }] })
        )
        .annotate(
          OpenApi.Description,
          "Cancel: recipients not yet sent are skipped (`skippedCanceled`); texts on their way finish. `409` once completed."
        )
        .pipe(capability(Tools.cancelBroadcast))
    )
).annotate(OpenApi.Title, "Scheduled messages and broadcasts").annotate(
  OpenApi.Description,
  "Texts that go out later or to many recipients: durable, paced in message segments per minute, held in each recipient's quiet hours."
) {}
