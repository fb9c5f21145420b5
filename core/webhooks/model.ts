/** Webhook endpoints and deliveries (SPEC "Webhook endpoint", CONTRACT.md webhook bodies). */
import { Schema } from "effect"
import { Text } from "../text.ts"

export const EndpointStatus = Schema.Literal("enabled", "disabled")
export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed")

export const WebhookEndpoint = Schema.Struct({
  id: Schema.UUID,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  label: Schema.NullOr(Schema.String),
  status: EndpointStatus,
  apiVersion: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

/** Create and rotate answers: the only places the secret is shown. */
export const WebhookEndpointWithSecret = Schema.Struct({ ...WebhookEndpoint.fields, secret: Schema.String }).annotations({
  identifier: "WebhookEndpointWithSecret"
})

export interface PreviousSecret {
  readonly secret: string
  readonly expiresAt: string
}

export interface EndpointRecord extends WebhookEndpoint {
  readonly workspaceId: string
  readonly secret: string
  /**
   * Secrets replaced by rotations, newest first: each keeps signing beside the current one for 24 h
   * after the rotation that replaced it (CONTRACT.md), however many rotations follow.
   */
  readonly previousSecrets: ReadonlyArray<PreviousSecret>
  /** Start of the current run of failed attempts; cleared by any success. */
  readonly failingSince: string | null
}

export const Delivery = Schema.Struct({
  id: Schema.UUID,
  eventId: Schema.String,
  eventType: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Number,
  responseStatus: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  lastAttemptAt: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookDelivery" })
export type Delivery = typeof Delivery.Type

export interface DeliveryRecord extends Delivery {
  readonly workspaceId: string
  readonly endpointId: string
  /** The exact body sent on every attempt: `{type, timestamp, data}`. */
  readonly payload: string
}

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

export const toPublic = (e: EndpointRecord): WebhookEndpoint => ({
  id: e.id,
  url: e.url,
  events: e.events,
  label: e.label,
  status: e.status,
  apiVersion: e.apiVersion,
  createdAt: e.createdAt
})

export const toPublicDelivery = (d: DeliveryRecord): Delivery => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts,
  responseStatus: d.responseStatus,
  error: d.error,
  createdAt: d.createdAt,
  lastAttemptAt: d.lastAttemptAt,
  nextAttemptAt: d.nextAttemptAt
})
