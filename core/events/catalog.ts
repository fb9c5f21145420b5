/**
 * The event catalog of SPEC "Events": one schema per event type's `data`. This is the single source
 * for emitters, GET /webhook-events and the OpenAPI document.
 */
import { Schema } from "effect"

export const ContactUpdated = Schema.Struct({
  contactId: Schema.UUID,
  change: Schema.Literal("created", "updated"),
  fields: Schema.optional(Schema.Array(Schema.String))
})

export const ContactDeleted = Schema.Struct({ contactId: Schema.UUID })

export const catalog = {
  "contact.updated": {
    description: "A contact is created or edited in the app, the API or MCP",
    data: ContactUpdated
  },
  "contact.deleted": { description: "A contact is deleted", data: ContactDeleted }
} as const

export type EventType = keyof typeof catalog
export type EventData<T extends EventType> = (typeof catalog)[T]["data"]["Type"]

export interface DomainEvent<T extends EventType = EventType> {
  readonly type: T
  readonly data: EventData<T>
}

export const event = <T extends EventType>(type: T, data: EventData<T>): DomainEvent<T> => ({ type, data })
