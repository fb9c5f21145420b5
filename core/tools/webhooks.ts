/** Webhook endpoint capabilities (SPEC "Webhook endpoint", "Events"). */
import { Effect, Schema } from "effect"
import { SubscribableEvent, subscribableEvents as events } from "../events/subscribable.ts"
import { FailedPrecondition, NotFound } from "../kernel/errors.ts"
import { PageSize } from "../kernel/pagination.ts"
import {
  CreateEndpointInput,
  Delivery,
  RecoverInput,
  UpdateEndpointInput,
  WebhookEndpoint,
  WebhookEndpointWithSecret
} from "../webhooks/model.ts"
import { MAX_RECOVER, Webhooks } from "../webhooks/service.ts"
import { ById, Deleted, NoInput, read, tool, WithId } from "./tool.ts"

const webhookId = "5f0c2a8e-7d7b-4f5e-8a51-2b7f3d9e6c10"
const deliveryId = "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22"

/** The answer of get and update; create and rotate add the signing secret. */
const WebhookAnswer = Schema.Struct({ webhook: WebhookEndpoint })
const WebhookWithSecretAnswer = Schema.Struct({ webhook: WebhookEndpointWithSecret })

export const listWebhookEventTypes = tool({
  name: "webhooks_event_types",
  title: "List webhook event types",
  description:
    "The event types a webhook endpoint can subscribe to, each with what triggers it; pass them (or `*`) as `events` to webhooks_create.",
  input: NoInput,
  output: Schema.Struct({ events: Schema.Array(SubscribableEvent) }),
  example: {},
  scope: "webhooks:manage",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: () => Effect.succeed({ events })
})

export const listWebhooks = tool({
  name: "webhooks_list",
  title: "List webhook endpoints",
  description: "The workspace's webhook endpoints: URL, subscribed events, label, status. Secrets are not shown.",
  input: NoInput,
  output: Schema.Struct({ webhooks: Schema.Array(WebhookEndpoint) }),
  example: {},
  scope: "webhooks:manage",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p) => Effect.flatMap(Webhooks, (w) => w.list(p)).pipe(Effect.map((webhooks) => ({ webhooks })))
})

export const createWebhook = tool({
  name: "webhooks_create",
  title: "Create a webhook endpoint",
  description:
    "Register a webhook endpoint `url` (`https`, public addresses only, no credentials in the URL) for some event types (webhooks_event_types) or `*`. The signing `secret` is returned only here and by webhooks_rotate: hand it to the user.",
  input: CreateEndpointInput,
  output: WebhookWithSecretAnswer,
  example: { url: "https://hooks.example.com/switchboard", events: ["*"], label: "CRM sync" },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: false,
  errors: [],
  run: (p, input) => Effect.flatMap(Webhooks, (w) => w.create(p, input)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const getWebhook = tool({
  name: "webhooks_get",
  title: "Get a webhook endpoint",
  description: "A webhook endpoint by `id`, without its secret.",
  input: ById,
  output: WebhookAnswer,
  example: { id: webhookId },
  scope: "webhooks:manage",
  hints: read,
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.get(p, id)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const updateWebhook = tool({
  name: "webhooks_update",
  title: "Update a webhook endpoint",
  description:
    "Change a webhook endpoint's `url`, `events` (replaced wholesale), `label`, `status` (`enabled` or `disabled`) or `apiVersion`; fields left out stay.",
  input: WithId(UpdateEndpointInput),
  output: WebhookAnswer,
  example: { id: webhookId, status: "disabled" },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: true },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id, ...changes }) =>
    Effect.flatMap(Webhooks, (w) => w.update(p, id, changes)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const deleteWebhook = tool({
  name: "webhooks_delete",
  title: "Delete a webhook endpoint",
  description:
    "Delete a webhook endpoint and its delivery history permanently; to pause it instead, set `status` `disabled` with webhooks_update.",
  input: ById,
  output: Deleted,
  example: { id: webhookId },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.remove(p, id))
})

export const rotateWebhookSecret = tool({
  name: "webhooks_rotate",
  title: "Rotate a webhook's signing secret",
  description:
    "Issue a new signing secret for a webhook endpoint and return it; the previous one keeps signing beside it for 24 hours, then stops.",
  input: ById,
  output: WebhookWithSecretAnswer,
  example: { id: webhookId },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.rotate(p, id)).pipe(Effect.map((webhook) => ({ webhook })))
})

export const testWebhook = tool({
  name: "webhooks_test",
  title: "Send a test ping to a webhook",
  description:
    "Send a signed `ping` event to a webhook endpoint's URL now and return its delivery record (status, response code, error).",
  input: ById,
  output: Schema.Struct({ delivery: Delivery }),
  example: { id: webhookId },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Webhooks, (w) => w.test(p, id)).pipe(Effect.map((delivery) => ({ delivery })))
})

export const listWebhookDeliveries = tool({
  name: "webhooks_deliveries",
  title: "List a webhook's deliveries",
  description:
    "A webhook endpoint's delivery history, newest first (`limit` 1 to 200, default 50): event, status, attempts, the receiver's response code or error, the next retry.",
  input: WithId(Schema.Struct({ limit: Schema.optional(PageSize(200)) })),
  output: Schema.Struct({ deliveries: Schema.Array(Delivery) }),
  example: { id: webhookId, limit: 20 },
  scope: "webhooks:manage",
  hints: read,
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id, limit }) =>
    Effect.flatMap(Webhooks, (w) => w.deliveries(p, id, limit ?? 50)).pipe(Effect.map((deliveries) => ({ deliveries })))
})

export const retryWebhookDelivery = tool({
  name: "webhooks_deliveries_retry",
  title: "Retry a webhook delivery",
  description:
    "Send one delivery (`deliveryId`, from webhooks_deliveries) of the webhook endpoint `id` again now, whatever its status, as its next attempt with the same `webhook-id`, and return the delivery record with this attempt's outcome. A delivery waiting for a retry is sent now instead. If this attempt fails, the delivery keeps its retry schedule; one that had used all its attempts is `failed` again. A disabled endpoint must be enabled first (webhooks_update); a delivery with an attempt in flight is refused.",
  input: WithId(Schema.Struct({ deliveryId: Schema.String })),
  output: Schema.Struct({ delivery: Delivery }),
  example: { id: webhookId, deliveryId },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: false,
  errors: [NotFound, FailedPrecondition],
  run: (p, { deliveryId, id }) =>
    Effect.flatMap(Webhooks, (w) => w.retry(p, id, deliveryId)).pipe(Effect.map((delivery) => ({ delivery })))
})

export const recoverWebhook = tool({
  name: "webhooks_recover",
  title: "Recover a webhook's failed deliveries",
  description:
    `Queue again every delivery of the webhook endpoint \`id\` since \`since\` (a date-time with its offset, at most 14 days back) whose last attempt failed, of the event types the endpoint subscribes to now: failed ones, and ones waiting for a retry (sent now instead). The worker sends them shortly, each as its next attempt with its \`webhook-id\`. Answers how many were queued, at most ${
      MAX_RECOVER.toLocaleString("en-US")
    } per call, oldest first: when \`queued\` is ${
      MAX_RECOVER.toLocaleString("en-US")
    }, call again with the same \`since\` for the next ones. Use it once the receiver works again; a disabled endpoint must be enabled first (webhooks_update).`,
  input: WithId(RecoverInput),
  output: Schema.Struct({ queued: Schema.Int.pipe(Schema.nonNegative()) }),
  example: { id: webhookId, since: "2026-08-17T09:00:00Z" },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: false,
  errors: [NotFound, FailedPrecondition],
  run: (p, { id, since }) => Effect.flatMap(Webhooks, (w) => w.recover(p, id, since))
})
