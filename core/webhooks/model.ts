/** Webhook endpoints and deliveries (SPEC "Webhook endpoint", CONTRACT.md webhook bodies). */
import { Schema } from "effect"
import { projection } from "../kernel/records.ts"
import { Text } from "../kernel/text.ts"
import { DateTime } from "../scheduling/model.ts"

export const EndpointStatus = Schema.Literal("enabled", "disabled")
export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed")

/** A secret replaced by a rotation, still signing until `expiresAt`. */
export const PreviousSecret = Schema.Struct({ secret: Schema.String, expiresAt: Schema.String })
export type PreviousSecret = typeof PreviousSecret.Type

/** A stored webhook endpoint, with its signing secrets and health. */
export const EndpointRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  label: Schema.NullOr(Schema.String),
  status: EndpointStatus,
  apiVersion: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  secret: Schema.String,
  /**
   * Secrets replaced by rotations, newest first: each keeps signing beside the current one for 24 h
   * after the rotation that replaced it (CONTRACT.md), however many rotations follow.
   */
  previousSecrets: Schema.Array(PreviousSecret),
  /** Start of the current run of failed attempts; cleared by any success. */
  failingSince: Schema.NullOr(Schema.String)
})
export type EndpointRecord = typeof EndpointRecord.Type

/** An endpoint as the API shows it: never its secrets. */
export const WebhookEndpoint = EndpointRecord.omit("workspaceId", "secret", "previousSecrets", "failingSince")
  .annotations({
    identifier: "WebhookEndpoint"
  })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

/** Create and rotate answers: the only places the secret is shown. */
export const WebhookEndpointWithSecret = Schema.Struct({
  ...WebhookEndpoint.fields,
  secret: EndpointRecord.fields.secret
}).annotations({
  identifier: "WebhookEndpointWithSecret"
})

/** A stored delivery of one event to one endpoint. */
export const DeliveryRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  endpointId: Schema.UUID,
  eventId: Schema.String,
  eventType: Schema.String,
  /** The exact body sent on every attempt: `{type, timestamp, data}`. */
  payload: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Number,
  responseStatus: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  lastAttemptAt: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.String)
})
export type DeliveryRecord = typeof DeliveryRecord.Type

export const Delivery = DeliveryRecord.omit("workspaceId", "endpointId", "payload").annotations({
  identifier: "WebhookDelivery"
})
export type Delivery = typeof Delivery.Type

const Events = Schema.Array(Schema.String.pipe(Schema.maxLength(100))).pipe(Schema.minItems(1), Schema.maxItems(100))
const Label = Schema.NullOr(Text(200))
const ApiVersion = Schema.NullOr(Text(32))
const Url = Text(2048)

export const CreateEndpointInput = Schema.Struct({
  url: Url,
  events: Events,
  label: Schema.optional(Label),
  apiVersion: Schema.optional(ApiVersion)
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type CreateEndpointInput = typeof CreateEndpointInput.Type

export const UpdateEndpointInput = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(Events),
  label: Schema.optional(Label),
  status: Schema.optional(EndpointStatus),
  apiVersion: Schema.optional(ApiVersion)
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type UpdateEndpointInput = typeof UpdateEndpointInput.Type

/** POST /webhooks/{id}/recover: from when (a date-time with its offset, at most 14 days back). */
export const RecoverInput = Schema.Struct({
  // The whole JSON Schema, since DateTime's own replaces any description set beside it.
  since: DateTime.annotations({
    jsonSchema: {
      type: "string",
      format: "date-time",
      description:
        "Deliveries created from this time on: a date-time with its offset (`2026-08-16T00:00:00Z`, `2026-08-15T19:00:00-05:00`), at most 14 days back, not in the future"
    }
  })
}).annotations({
  parseOptions: { onExcessProperty: "error" }
})

export const toPublic = projection(WebhookEndpoint)
export const toPublicDelivery = projection(Delivery)
