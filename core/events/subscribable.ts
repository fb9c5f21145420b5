/** GET /webhook-events: the event types an endpoint can subscribe to, read from the catalog. */
import { Schema } from "effect"
import { catalog } from "./catalog.ts"

export const SubscribableEvent = Schema.Struct({ type: Schema.String, description: Schema.String })
export type SubscribableEvent = typeof SubscribableEvent.Type

export const subscribableEvents: ReadonlyArray<SubscribableEvent> = Object.entries(catalog).map(([type, e]) => ({
  type,
  description: e.description
}))
