/**
 * The event catalog of SPEC "Events": one schema per event type's `data`. This is the single source
 * for emitters, GET /webhook-events and the OpenAPI document. Handlers must tolerate unknown types,
 * so adding a type here is a compatible change.
 */
import { Schema } from "effect"
import { BroadcastCounts } from "../scheduling/model.ts"

const Uuid = Schema.UUID
const NullableString = Schema.NullOr(Schema.String)

const MessageDelivered = Schema.Struct({
  conversationId: Uuid,
  inboxId: Uuid,
  activityId: Uuid,
  deliveryStatus: Schema.optional(Schema.String)
})

const CallRef = {
  conversationId: Uuid,
  inboxId: Uuid,
  activityId: Uuid,
  numberE164: Schema.String,
  carrierCallId: NullableString
}

const FlowRef = {
  numberE164: Schema.String,
  flowId: Schema.String,
  flowName: Schema.String,
  flowVersion: Schema.Number,
  carrierCallId: NullableString
}

const OptOutChange = Schema.Struct({
  phone: Schema.String,
  contactId: Schema.NullOr(Uuid),
  source: Schema.Literal("keyword", "carrier", "api"),
  keyword: NullableString
})

const entry = <S extends Schema.Schema.Any>(description: string, data: S) => ({ description, data })

export const catalog = {
  "message.received": entry(
    "An inbound SMS/MMS is stored",
    Schema.Struct({ numberE164: Schema.String, conversationId: Uuid, inboxId: Uuid, activityId: Uuid, contactId: Uuid })
  ),
  "message.delivered": entry(
    "An outbound message is accepted by the carrier, and again on each delivery-status update",
    MessageDelivered
  ),
  "message.failed": entry("The carrier reports an outbound message failed", MessageDelivered),
  "call.ringing": entry(
    "An inbound call reaches a workspace number, before anyone answers",
    Schema.Struct({
      numberE164: Schema.String,
      from: NullableString,
      callerName: NullableString,
      carrierCallId: NullableString,
      direction: Schema.Literal("inbound"),
      routedBy: Schema.Literal("number", "flow")
    })
  ),
  "call.answered": entry(
    "Someone picks up",
    Schema.Struct({
      answeredBy: Schema.Literal("agent", "member", "callee"),
      direction: Schema.Literal("inbound", "outbound"),
      numberE164: Schema.optional(NullableString),
      from: NullableString,
      carrierCallId: NullableString,
      agentId: Schema.optional(Uuid),
      memberUid: Schema.optional(Schema.String),
      conversationId: Schema.optional(Uuid),
      inboxId: Schema.optional(Uuid),
      activityId: Schema.optional(Uuid)
    })
  ),
  "call.forwarded": entry(
    "An inbound call is sent to an outside number",
    Schema.Struct({
      forwardedTo: Schema.String,
      numberE164: Schema.String,
      from: NullableString,
      carrierCallId: NullableString,
      direction: Schema.Literal("inbound")
    })
  ),
  "call.completed": entry(
    "An answered call ends",
    Schema.Struct({ ...CallRef, answeredBy: Schema.optional(Schema.String) })
  ),
  "call.missed": entry("An inbound call ends unanswered", Schema.Struct(CallRef)),
  "call.recording.completed": entry("A recording is stored", Schema.Struct(CallRef)),
  "call.voicemail.completed": entry("A voicemail is stored", Schema.Struct(CallRef)),
  "call.transcript.completed": entry("A call or voicemail transcript is ready", Schema.Struct(CallRef)),
  "call.summary.completed": entry(
    "The AI summary is ready",
    Schema.Struct({
      conversationId: Uuid,
      activityId: Uuid,
      carrierCallId: NullableString,
      summaryText: Schema.optional(Schema.String)
    })
  ),
  "call.flow.started": entry("An inbound call enters a phone-menu call flow", Schema.Struct(FlowRef)),
  "call.flow.completed": entry(
    "A call flow reaches its final step",
    Schema.Struct({ ...FlowRef, terminal: Schema.String, nodeId: Schema.String })
  ),
  "call.flow.aborted": entry(
    "A call flow stops early",
    Schema.Struct({ ...FlowRef, reason: Schema.String, nodeId: Schema.String })
  ),
  "contact.updated": entry(
    "A contact is created or edited in the app, the API or MCP",
    Schema.Struct({
      contactId: Uuid,
      change: Schema.Literal("created", "updated"),
      fields: Schema.optional(Schema.Array(Schema.String))
    })
  ),
  "contact.deleted": entry("A contact is deleted", Schema.Struct({ contactId: Uuid })),
  "contact.opted_out": entry(
    "A phone opts out of the workspace's texts: its STOP keyword, the carrier's refusal, or a revocation recorded through the API",
    OptOutChange
  ),
  "contact.opted_in": entry(
    "An opted-out phone opts back in: its START keyword, or an opt-out recorded through the API removed",
    OptOutChange
  ),
  "broadcast.completed": entry(
    "A broadcast ends: every recipient sent, failed or skipped (opted out, or not yet sent when it was canceled)",
    Schema.Struct({ broadcastId: Uuid, counts: BroadcastCounts })
  )
} as const

export type EventType = keyof typeof catalog
export type EventData<T extends EventType> = (typeof catalog)[T]["data"]["Type"]

export const eventTypes = Object.keys(catalog) as ReadonlyArray<EventType>
export const isEventType = (s: string): s is EventType => s in catalog

/** `ping` is only sent by POST /webhooks/{id}/test: not in the catalog, not subscribable. */
export const PING = "ping"

export interface DomainEvent<T extends EventType = EventType> {
  readonly type: T
  readonly data: EventData<T>
}

export const event = <T extends EventType>(type: T, data: EventData<T>): DomainEvent<T> => ({ type, data })
