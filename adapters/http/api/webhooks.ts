/** SPEC "Webhook endpoint", "Events". */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { catalog } from "../../../core/events/catalog.ts"
import * as Tools from "../../../core/tools/webhooks.ts"
import { CreateEndpointInput, RecoverInput, UpdateEndpointInput } from "../../../core/webhooks/model.ts"
import { MAX_RECOVER } from "../../../core/webhooks/service.ts"
import { delivery, webhook, webhookSecret } from "./examples.ts"
import { capability, IdParam, limitParam, publicGroup } from "./shared.ts"

const withSecret = { webhook: { ...webhook, secret: webhookSecret } }

export class WebhooksGroup extends publicGroup(
  HttpApiGroup.make("webhooks")
    .add(
      HttpApiEndpoint.get("events", "/webhook-events")
        .addSuccess(Tools.listWebhookEventTypes.output.annotations({
          examples: [{ events: [{ type: "contact.updated", description: catalog["contact.updated"].description }] }]
        }))
        .annotate(OpenApi.Description, "The subscribable event types.")
        .pipe(capability(Tools.listWebhookEventTypes))
    )
    .add(
      HttpApiEndpoint.get("list", "/webhooks")
        .addSuccess(Tools.listWebhooks.output.annotations({ examples: [{ webhooks: [webhook] }] }))
        .annotate(OpenApi.Description, "List webhook endpoints.")
        .pipe(capability(Tools.listWebhooks))
    )
    .add(
      HttpApiEndpoint.post("create", "/webhooks")
        .setPayload(
          CreateEndpointInput.annotations({ examples: [{ url: webhook.url, events: ["*"], label: "CRM sync" }] })
        )
        .addSuccess(Tools.createWebhook.output.annotations({ examples: [withSecret] }), { status: 201 })
        .annotate(
          OpenApi.Description,
          "Register an endpoint: `https`, public addresses only, no credentials (`user:pass@`) in the URL. The signing `secret` is returned only here and by rotate."
        )
        .pipe(capability(Tools.createWebhook))
    )
    .add(
      HttpApiEndpoint.get("get", "/webhooks/:id").setPath(IdParam).addSuccess(
        Tools.getWebhook.output.annotations({ examples: [{ webhook }] })
      )
        .annotate(OpenApi.Description, "Retrieve an endpoint.")
        .pipe(capability(Tools.getWebhook))
    )
    .add(
      HttpApiEndpoint.patch("update", "/webhooks/:id")
        .setPath(IdParam)
        .setPayload(UpdateEndpointInput.annotations({ examples: [{ status: "disabled" }] }))
        .addSuccess(Tools.updateWebhook.output.annotations({ examples: [{ webhook }] }))
        .annotate(OpenApi.Description, "Update `url`, `events`, `label`, `status` or `apiVersion`.")
        .pipe(capability(Tools.updateWebhook))
    )
    .add(
      HttpApiEndpoint.del("delete", "/webhooks/:id").setPath(IdParam).addSuccess(
        Tools.deleteWebhook.output.annotations({ examples: [{ deleted: true }] })
      )
        .annotate(OpenApi.Description, "Delete an endpoint and its delivery history.")
        .pipe(capability(Tools.deleteWebhook))
    )
    .add(
      HttpApiEndpoint.post("rotate", "/webhooks/:id/rotate").setPath(IdParam).addSuccess(
        Tools.rotateWebhookSecret.output.annotations({ examples: [withSecret] })
      )
        .annotate(
          OpenApi.Description,
          "Issue a new signing secret; the previous one keeps signing beside it for 24 hours."
        )
        .pipe(capability(Tools.rotateWebhookSecret))
    )
    .add(
      HttpApiEndpoint.post("test", "/webhooks/:id/test").setPath(IdParam)
        .addSuccess(
          Tools.testWebhook.output.annotations({
            examples: [{
              delivery: { ...delivery, eventId: "evt_test_01a203071c767000ad9806c77d1e19e9", eventType: "ping" }
            }]
          })
        )
        .annotate(OpenApi.Description, "Send a signed `ping` now and return its delivery record.")
        .pipe(capability(Tools.testWebhook))
    )
    .add(
      HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries")
        .setPath(IdParam)
        .setUrlParams(Schema.Struct({ limit: Schema.optional(limitParam(200)) }))
        .addSuccess(Tools.listWebhookDeliveries.output.annotations({ examples: [{ deliveries: [delivery] }] }))
        .annotate(OpenApi.Description, "Delivery history, newest first.")
        .pipe(capability(Tools.listWebhookDeliveries))
    )
    .add(
      HttpApiEndpoint.post("retryDelivery", "/webhooks/:id/deliveries/:deliveryId/retry")
        .setPath(Schema.Struct({ id: Schema.String, deliveryId: Schema.String }))
        .addSuccess(
          Tools.retryWebhookDelivery.output.annotations({
            examples: [{
              delivery: { ...delivery, attempts: 9, lastAttemptAt: "2026-08-18T09:12:00.120Z" }
            }]
          })
        )
        .annotate(
          OpenApi.Description,
          "Send one delivery's event again now, whatever its status, as its next attempt with the same `webhook-id`, and return the delivery with this attempt's outcome. A delivery waiting for a retry is sent now instead of later. If this attempt fails, the delivery keeps its retry schedule; one that had used all 8 attempts is `failed` again. `409` when the endpoint is disabled (enable it first) or an attempt of this delivery is in flight."
        )
        .pipe(capability(Tools.retryWebhookDelivery))
    )
    .add(
      HttpApiEndpoint.post("recover", "/webhooks/:id/recover")
        .setPath(IdParam)
        .setPayload(RecoverInput.annotations({ examples: [{ since: "2026-08-16T00:00:00Z" }] }))
        .addSuccess(Tools.recoverWebhook.output.annotations({ examples: [{ queued: 42 }] }), { status: 202 })
        .annotate(
          OpenApi.Description,
          `Queue again, due now, the endpoint's deliveries created since \`since\` (at most 14 days back, not in the future) whose last attempt failed, of the event types it subscribes to now: \`failed\` ones, and \`pending\` ones waiting for a retry. The worker sends each as its next attempt, with its \`webhook-id\`. At most ${
            MAX_RECOVER.toLocaleString("en-US")
          } per request, oldest first: when \`queued\` is ${
            MAX_RECOVER.toLocaleString("en-US")
          }, repeat the request with the same \`since\`. \`409\` when the endpoint is disabled: enable it first.`
        )
        .pipe(capability(Tools.recoverWebhook))
    )
).annotate(OpenApi.Title, "Webhooks").annotate(
  OpenApi.Description,
  "Endpoints that receive signed event deliveries (see `webhooks` for each event's body), and their delivery history."
) {}
