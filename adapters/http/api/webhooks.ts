/** SPEC "Webhook endpoint", "Events". */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { catalog } from "../../../core/events/catalog.ts"
import { SubscribableEvent } from "../../../core/events/subscribable.ts"
import { CreateEndpointInput, Delivery, UpdateEndpointInput, WebhookEndpoint, WebhookEndpointWithSecret } from "../../../core/webhooks/model.ts"
import { NotFound } from "./errors.ts"
import { delivery, webhook, webhookSecret } from "./examples.ts"
import { Deleted, IdParam, limitParam, publicGroup, requires } from "./shared.ts"

const WebhookEnvelope = Schema.Struct({ webhook: WebhookEndpoint }).annotations({ examples: [{ webhook }] })
const WebhookWithSecretEnvelope = Schema.Struct({ webhook: WebhookEndpointWithSecret }).annotations({
  examples: [{ webhook: { ...webhook, secret: webhookSecret } }]
})

export class WebhooksGroup extends publicGroup(
  HttpApiGroup.make("webhooks")
    .add(
      HttpApiEndpoint.get("events", "/webhook-events")
        .addSuccess(Schema.Struct({ events: Schema.Array(SubscribableEvent) }).annotations({
          examples: [{ events: [{ type: "contact.updated", description: catalog["contact.updated"].description }] }]
        }))
        .annotate(OpenApi.Description, "The subscribable event types.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.get("list", "/webhooks")
        .addSuccess(Schema.Struct({ webhooks: Schema.Array(WebhookEndpoint) }).annotations({ examples: [{ webhooks: [webhook] }] }))
        .annotate(OpenApi.Description, "List webhook endpoints.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.post("create", "/webhooks")
        .setPayload(CreateEndpointInput.annotations({ examples: [{ url: webhook.url, events: ["*"], label: "CRM sync" }] }))
        .addSuccess(WebhookWithSecretEnvelope, { status: 201 })
        .annotate(OpenApi.Description, "Register an endpoint: `https`, public addresses only, no credentials (`user:pass@`) in the URL. The signing `secret` is returned only here and by rotate.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.get("get", "/webhooks/:id").setPath(IdParam).addSuccess(WebhookEnvelope).addError(NotFound)
        .annotate(OpenApi.Description, "Retrieve an endpoint.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.patch("update", "/webhooks/:id")
        .setPath(IdParam)
        .setPayload(UpdateEndpointInput.annotations({ examples: [{ status: "disabled" }] }))
        .addSuccess(WebhookEnvelope)
        .addError(NotFound)
        .annotate(OpenApi.Description, "Update `url`, `events`, `label`, `status` or `apiVersion`.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.del("delete", "/webhooks/:id").setPath(IdParam).addSuccess(Deleted).addError(NotFound)
        .annotate(OpenApi.Description, "Delete an endpoint and its delivery history.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.post("rotate", "/webhooks/:id/rotate").setPath(IdParam).addSuccess(WebhookWithSecretEnvelope).addError(NotFound)
        .annotate(OpenApi.Description, "Issue a new signing secret; the previous one keeps signing beside it for 24 hours.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.post("test", "/webhooks/:id/test").setPath(IdParam)
        .addSuccess(Schema.Struct({ delivery: Delivery }).annotations({ examples: [{ delivery: { ...delivery, eventId: "evt_test_01a203071c767000ad9806c77d1e19e9", eventType: "ping" } }] }))
        .addError(NotFound)
        .annotate(OpenApi.Description, "Send a signed `ping` now and return its delivery record.")
        .pipe(requires("webhooks:manage"))
    )
    .add(
      HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries")
        .setPath(IdParam)
        .setUrlParams(Schema.Struct({ limit: Schema.optional(limitParam(200)) }))
        .addSuccess(Schema.Struct({ deliveries: Schema.Array(Delivery) }).annotations({ examples: [{ deliveries: [delivery] }] }))
        .addError(NotFound)
        .annotate(OpenApi.Description, "Delivery history, newest first.")
        .pipe(requires("webhooks:manage"))
    )
).annotate(OpenApi.Title, "Webhooks") {}
