/** Webhook endpoint capabilities (SPEC "Webhook endpoint", "Events"). */
import { Effect, Schema } from "effect"
import { requireScope } from "../auth/principal.ts"
import { subscribableEvents as events } from "../events/subscribable.ts"
import { CreateEndpointInput, UpdateEndpointInput } from "../webhooks/model.ts"
import { Webhooks } from "../webhooks/service.ts"
import { PageSize } from "../pagination.ts"
import { ById, Changes, NoInput, tool } from "./tool.ts"

const webhookId = "5f0c2a8e-7d7b-4f5e-8a51-2b7f3d9e6c10"

export const listWebhookEventTypes = tool({
  name: "list_webhook_event_types",
  description: "The event types a webhook endpoint can subscribe to.",
  input: NoInput,
  example: {},
  scope: "webhooks:manage",
  run: (p) => requireScope(p, "webhooks:manage").pipe(Effect.as({ events }))
})

export const listWebhooks = tool({
  name: "list_webhooks",
  description: "List webhook endpoints.",
  input: NoInput,
  example: {},
  scope: "webhooks:manage",
  run: (p) => Effect.flatMap(Webhooks, (w) => w.list(p)).pipe(Effect.map((webhooks) => ({ webhooks })))
})

export const createWebhook = tool({
  name: "create_webhook",
  description: "Register a webhook endpoint (`https`, public addresses only, no credentials in the URL) for some event types or `*`. The signing `secret` is returned only here and by rotate.",
  input: CreateEndpointInput,
  example: { url: "https://hooks.example.com/switchboard", events: ["*"], label: "CRM sync" },
  scope: "webhooks:manage",
  run: (p, input) => Effect.flatMap(Webhooks, (w) => w.create(p, input)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const getWebhook = tool({
  name: "get_webhook",
  description: "Retrieve a webhook endpoint.",
  input: ById,
  example: { id: webhookId },
  scope: "webhooks:manage",
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.get(p, id)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const updateWebhook = tool({
  name: "update_webhook",
  description: "Update a webhook endpoint's `url`, `events`, `label`, `status` or `apiVersion`.",
  input: Changes(UpdateEndpointInput),
  example: { id: webhookId, changes: { status: "disabled" } },
  scope: "webhooks:manage",
  run: (p, { id, changes }) => Effect.flatMap(Webhooks, (w) => w.update(p, id, changes)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const deleteWebhook = tool({
  name: "delete_webhook",
  description: "Delete a webhook endpoint and its delivery history.",
  input: ById,
  example: { id: webhookId },
  scope: "webhooks:manage",
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.remove(p, id))
})

export const rotateWebhookSecret = tool({
  name: "rotate_webhook_secret",
  description: "Issue a new signing secret; the previous one keeps signing beside it for 24 hours.",
  input: ById,
  example: { id: webhookId },
  scope: "webhooks:manage",
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.rotate(p, id)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const testWebhook = tool({
  name: "test_webhook",
  description: "Send a signed `ping` to a webhook endpoint now and return its delivery record.",
  input: ById,
  example: { id: webhookId },
  scope: "webhooks:manage",
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.test(p, id)).pipe(Effect.map((delivery) => ({ delivery })))
})

export const listWebhookDeliveries = tool({
  name: "list_webhook_deliveries",
  description: "A webhook endpoint's delivery history, newest first.",
  input: Schema.Struct({ id: Schema.String, limit: Schema.optional(PageSize(200)) }).annotations({ parseOptions: { onExcessProperty: "error" } }),
  example: { id: webhookId, limit: 20 },
  scope: "webhooks:manage",
  run: (p, { id, limit }) => Effect.flatMap(Webhooks, (w) => w.deliveries(p, id, limit ?? 50)).pipe(Effect.map((deliveries) => ({ deliveries })))
})
