/**
 * The HTTP contract: one HttpApi definition gives routing, decoding and the OpenAPI document.
 * Handlers live in handlers/*.ts; the platform middleware (envelope, request id, limits) in platform.ts.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { allScopes } from "../../core/auth/scopes.ts"
import { ContactDetail, ContactInput, ContactSummary } from "../../core/contacts/model.ts"
import { Activity, ConversationSummary, MessageSearchResult, ThreadStatus } from "../../core/conversations/model.ts"
import { PatchConversationInput } from "../../core/conversations/service.ts"
import { FailedPrecondition, InvalidArgument, Internal, NotFound, PermissionDenied, Unauthenticated } from "../../core/errors.ts"
import { SendMessageInput } from "../../core/messaging/outbound.ts"
import { NumberType, WorkspaceNumber } from "../../core/numbers.ts"
import type { E164 } from "../../core/phone.ts"
import { NonEmptyText, Text } from "../../core/text.ts"
import { Billing, BillingPatch, Workspace } from "../../core/workspaces/model.ts"
import { CreateEndpointInput, Delivery, UpdateEndpointInput, WebhookEndpoint, WebhookEndpointWithSecret } from "../../core/webhooks/model.ts"
import { MediaGroup } from "./media.ts"
import { patchOpenApi } from "./openapi.ts"
import { AdminAuthorization, Authorization } from "./security.ts"

export const API_VERSION = "2026-08-17"

/** Rejects unknown fields in request bodies, naming them (CONTRACT.md). */
const strict = { parseOptions: { onExcessProperty: "error" } } as const

const IdParam = Schema.Struct({ id: Schema.String })
const Deleted = Schema.Struct({ deleted: Schema.Literal(true) }).annotations({ examples: [{ deleted: true }] })

const limitParam = (max: number) =>
  Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(1, max),
    Schema.annotations({ message: () => `must be an integer from 1 to ${max}` })
  )

const contactExample = {
  id: "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22",
  firstName: "Ada",
  lastName: "Lovelace",
  company: "Analytical Engines",
  phones: [{ value: "+14155550100", label: "mobile" }],
  emails: [{ value: "ada@example.com" }],
  notes: ["Met at the expo"],
  properties: { plan: "gold" },
  tags: ["vip"],
  source: "manual",
  createdAt: "2026-08-17T10:00:00.000Z"
} as const

const ContactEnvelope = Schema.Struct({ contact: ContactDetail }).annotations({
  examples: [{ contact: contactExample }]
})

export class ContactsGroup extends HttpApiGroup.make("contacts")
  .add(
    HttpApiEndpoint.get("list", "/contacts")
      .setUrlParams(
        Schema.Struct({
          q: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
          limit: Schema.optional(limitParam(200)),
          cursor: Schema.optional(Schema.String)
        })
      )
      .addSuccess(
        Schema.Struct({ contacts: Schema.Array(ContactSummary), nextCursor: Schema.NullOr(Schema.String) }).annotations({
          examples: [{ contacts: [{ id: contactExample.id, firstName: "Ada", lastName: "Lovelace", company: "Analytical Engines", phone: "+14155550100", createdAt: contactExample.createdAt }], nextCursor: null }]
        })
      )
      .annotate(OpenApi.Description, "List or search contacts, newest created first. Scope `contacts:read`.")
  )
  .add(
    HttpApiEndpoint.post("create", "/contacts")
      .setPayload(ContactInput.annotations({ examples: [{ firstName: "Ada", lastName: "Lovelace", phone: "+14155550100", tags: ["vip"] }] }))
      .addSuccess(ContactEnvelope, { status: 201 })
      .annotate(OpenApi.Description, "Create a contact; a phone owned by a nameless auto-created contact adopts it. Scope `contacts:write`.")
  )
  .add(
    HttpApiEndpoint.get("get", "/contacts/:id")
      .setPath(IdParam)
      .addSuccess(ContactEnvelope)
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Retrieve a contact. Scope `contacts:read`.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/contacts/:id")
      .setPath(IdParam)
      .setPayload(ContactInput.annotations({ examples: [{ company: null, tags: ["customer"] }] }))
      .addSuccess(ContactEnvelope)
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Update the fields sent; arrays and `properties` are replaced wholesale; `null` clears names and company. Scope `contacts:write`.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/contacts/:id")
      .setPath(IdParam)
      .addSuccess(Deleted)
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Delete a contact permanently; its threads stay under the raw number. Scope `contacts:write`.")
  )
  .addError(InvalidArgument, { status: 400 })
  .addError(PermissionDenied, { status: 403 })
  .middleware(Authorization)
  .prefix("/v1/api")
  .annotate(OpenApi.Title, "Contacts") {}

// ---- Webhooks (SPEC "Webhook endpoint", "Events") ----

const webhookExample = {
  id: "5f0c2a8e-7d7b-4f5e-8a51-2b7f3d9e6c10",
  url: "https://hooks.example.com/switchboard",
  events: ["contact.updated", "contact.deleted"],
  label: "CRM sync",
  status: "enabled",
  apiVersion: null,
  createdAt: "2026-08-17T10:00:00.000Z"
} as const
const secretExample = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const deliveryExample = {
  id: "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22",
  eventId: "evt_01a203071c767000ad9806c77d1e19e9",
  eventType: "contact.updated",
  status: "succeeded",
  attempts: 1,
  responseStatus: 200,
  error: null,
  createdAt: "2026-08-17T10:00:00.000Z",
  lastAttemptAt: "2026-08-17T10:00:00.120Z",
  nextAttemptAt: null
} as const

const WebhookEnvelope = Schema.Struct({ webhook: WebhookEndpoint }).annotations({ examples: [{ webhook: webhookExample }] })
const WebhookWithSecretEnvelope = Schema.Struct({ webhook: WebhookEndpointWithSecret }).annotations({
  examples: [{ webhook: { ...webhookExample, secret: secretExample } }]
})

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("events", "/webhook-events")
      .addSuccess(Schema.Struct({ events: Schema.Array(Schema.Struct({ type: Schema.String, description: Schema.String })) }).annotations({
        examples: [{ events: [{ type: "contact.updated", description: "A contact is created or edited in the app, the API or MCP" }] }]
      }))
      .annotate(OpenApi.Description, "The subscribable event types. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.get("list", "/webhooks")
      .addSuccess(Schema.Struct({ webhooks: Schema.Array(WebhookEndpoint) }).annotations({ examples: [{ webhooks: [webhookExample] }] }))
      .annotate(OpenApi.Description, "List webhook endpoints. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.post("create", "/webhooks")
      .setPayload(CreateEndpointInput.annotations({ examples: [{ url: webhookExample.url, events: ["*"], label: "CRM sync" }] }))
      .addSuccess(WebhookWithSecretEnvelope, { status: 201 })
      .annotate(OpenApi.Description, "Register an endpoint: `https`, public addresses only. The signing `secret` is returned only here and by rotate. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.get("get", "/webhooks/:id").setPath(IdParam).addSuccess(WebhookEnvelope).addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Retrieve an endpoint. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/webhooks/:id")
      .setPath(IdParam)
      .setPayload(UpdateEndpointInput.annotations({ examples: [{ status: "disabled" }] }))
      .addSuccess(WebhookEnvelope)
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Update `url`, `events`, `label`, `status` or `apiVersion`. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/webhooks/:id").setPath(IdParam).addSuccess(Deleted).addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Delete an endpoint and its delivery history. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.post("rotate", "/webhooks/:id/rotate").setPath(IdParam).addSuccess(WebhookWithSecretEnvelope).addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Issue a new signing secret; the previous one keeps signing beside it for 24 hours. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.post("test", "/webhooks/:id/test").setPath(IdParam)
      .addSuccess(Schema.Struct({ delivery: Delivery }).annotations({ examples: [{ delivery: { ...deliveryExample, eventId: "evt_test_01a203071c767000ad9806c77d1e19e9", eventType: "ping" } }] }))
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Send a signed `ping` now and return its delivery record. Scope `webhooks:manage`.")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries")
      .setPath(IdParam)
      .setUrlParams(Schema.Struct({ limit: Schema.optional(limitParam(200)) }))
      .addSuccess(Schema.Struct({ deliveries: Schema.Array(Delivery) }).annotations({ examples: [{ deliveries: [deliveryExample] }] }))
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Delivery history, newest first. Scope `webhooks:manage`.")
  )
  .addError(InvalidArgument, { status: 400 })
  .addError(PermissionDenied, { status: 403 })
  .middleware(Authorization)
  .prefix("/v1/api")
  .annotate(OpenApi.Title, "Webhooks") {}

// ---- Conversations and messages (SPEC "Conversations", "Messages") ----

const activityExample = {
  id: "01a20307-1c76-7000-ad98-06c77d1e19e9",
  type: "message",
  direction: "outbound",
  authorUid: null,
  body: "Your table for two is ready.",
  media: [],
  deliveryStatus: "queued",
  call: null,
  aiTags: [],
  callTranscript: null,
  createdAt: "2026-08-17T10:00:00.000Z"
} as const
const conversationExample = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0001",
  inboxId: "01a20307-1c76-7000-ad98-06c77d1e0002",
  numberE164: "+14155550100",
  participants: ["+14155550123"],
  contactName: "Ada Lovelace",
  status: "open",
  assigneeUid: null,
  lastActivityAt: "2026-08-17T10:00:00.000Z",
  preview: "Your table for two is ready.",
  unread: 0
} as const

const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String)
})

export class ConversationsGroup extends HttpApiGroup.make("conversations")
  .add(
    HttpApiEndpoint.get("list", "/conversations")
      .setUrlParams(Schema.Struct({ status: Schema.optional(ThreadStatus), limit: Schema.optional(limitParam(100)), cursor: Schema.optional(Schema.String) }))
      .addSuccess(Schema.Struct({ conversations: Schema.Array(ConversationSummary), nextCursor: Schema.NullOr(Schema.String) }).annotations({
        examples: [{ conversations: [conversationExample], nextCursor: null }]
      }))
      .annotate(OpenApi.Description, "List threads, most recent activity first. Scope `conversations:read`.")
  )
  .add(
    HttpApiEndpoint.get("get", "/conversations/:id")
      .setPath(IdParam)
      .addSuccess(Schema.Struct({ conversation: ConversationSummary, activities: Schema.Array(Activity) }).annotations({
        examples: [{ conversation: conversationExample, activities: [activityExample] }]
      }))
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "A thread and its activities, oldest first, with signed media URLs. Scope `conversations:read`.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/conversations/:id")
      .setPath(IdParam)
      .setPayload(PatchConversationInput.annotations({ examples: [{ status: "done" }] }))
      .addSuccess(Schema.Struct({ conversation: ConversationSummary }).annotations({ examples: [{ conversation: { ...conversationExample, status: "done" } }] }))
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Mark a thread open or done; resets `unread`. Scope `conversations:write`.")
  )
  .addError(InvalidArgument, { status: 400 })
  .addError(PermissionDenied, { status: 403 })
  .middleware(Authorization)
  .prefix("/v1/api")
  .annotate(OpenApi.Title, "Conversations") {}

export class MessagesGroup extends HttpApiGroup.make("messages")
  .add(
    HttpApiEndpoint.post("send", "/messages")
      .setHeaders(IdempotencyHeaders)
      .setPayload(SendMessageInput.annotations({ examples: [{ to: "+14155550123", body: "Your table for two is ready." }] }))
      .addSuccess(
        Schema.Struct({ message: Activity, conversationId: Schema.UUID, simulated: Schema.optional(Schema.Literal(true)) }).annotations({
          examples: [{ message: { ...activityExample, deliveryStatus: "simulated" }, conversationId: conversationExample.id, simulated: true }]
        }),
        { status: 201 }
      )
      .addError(NotFound, { status: 404 })
      .addError(FailedPrecondition, { status: 409 })
      .annotate(OpenApi.Description, "Send an SMS/MMS (`Idempotency-Key` supported). Test keys record `simulated` and send nothing. Scope `messages:send`.")
  )
  .add(
    HttpApiEndpoint.get("search", "/messages/search")
      .setUrlParams(Schema.Struct({ q: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)), limit: Schema.optional(limitParam(100)) }))
      .addSuccess(Schema.Struct({ results: Schema.Array(MessageSearchResult) }).annotations({
        examples: [{ results: [{ activityId: activityExample.id, conversationId: conversationExample.id, type: "message", direction: "outbound", body: activityExample.body, participants: ["+14155550123"], numberE164: "+14155550100", createdAt: activityExample.createdAt }] }]
      }))
      .annotate(OpenApi.Description, "Search message bodies and call/voicemail transcripts by words and prefixes, newest first. Scope `conversations:read`.")
  )
  .addError(InvalidArgument, { status: 400 })
  .addError(PermissionDenied, { status: 403 })
  .middleware(Authorization)
  .prefix("/v1/api")
  .annotate(OpenApi.Title, "Messages") {}

export class TestHelpersGroup extends HttpApiGroup.make("testHelpers")
  .add(
    HttpApiEndpoint.post("inboundMessage", "/inbound-messages")
      .setPayload(
        Schema.Struct({
          from: Schema.String.pipe(Schema.maxLength(32)),
          to: Schema.String.pipe(Schema.maxLength(32)),
          body: Schema.optional(Text(1600)),
          mediaUrls: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(2048))).pipe(Schema.maxItems(10)))
        }).annotations({ parseOptions: { onExcessProperty: "error" }, examples: [{ from: "+14155550123", to: "+14155550100", body: "Is the table ready?" }] })
      )
      .addSuccess(
        Schema.Struct({ message: Activity, conversationId: Schema.UUID, contactId: Schema.UUID }).annotations({
          examples: [{ message: { ...activityExample, direction: "inbound", deliveryStatus: "received", body: "Is the table ready?" }, conversationId: conversationExample.id, contactId: contactExample.id }]
        }),
        { status: 201 }
      )
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Simulate an inbound SMS/MMS to workspace number `to`. Test keys only.")
  )
  .add(
    HttpApiEndpoint.post("deliveryStatus", "/delivery-status")
      .setPayload(
        Schema.Struct({ activityId: Schema.String, status: Schema.Literal("queued", "sending", "sent", "delivered", "sending_failed", "delivery_failed", "delivery_unconfirmed", "expired") }).annotations({
          parseOptions: { onExcessProperty: "error" },
          examples: [{ activityId: activityExample.id, status: "delivered" }]
        })
      )
      .addSuccess(Schema.Struct({ message: Activity }).annotations({ examples: [{ message: { ...activityExample, deliveryStatus: "delivered" } }] }))
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Simulate a carrier status report for an outbound message. Test keys only.")
  )
  .addError(InvalidArgument, { status: 400 })
  .addError(PermissionDenied, { status: 403 })
  .middleware(Authorization)
  .prefix("/v1/api/test-helpers")
  .annotate(OpenApi.Title, "Test helpers")
  .annotate(OpenApi.Description, "Drive the simulated carrier end to end. Present when TEST_HELPERS is on; test keys only (live keys get 403).") {}

/** Carrier webhooks: signed by the carrier (Ed25519 for Telnyx), not by an API key. */
export class CarrierGroup extends HttpApiGroup.make("carrier")
  .add(
    HttpApiEndpoint.post("telnyx", "/telnyx")
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true) }).annotations({ examples: [{ ok: true }] }))
      .addError(NotFound, { status: 404 })
      .annotate(OpenApi.Description, "Telnyx v2 messaging webhooks (message.received, message.sent, message.finalized), verified with the account's Ed25519 public key. 404 unless CARRIER=telnyx.")
  )
  .addError(InvalidArgument, { status: 400 })
  .addError(Unauthenticated, { status: 401 })
  .prefix("/v1/carrier")
  .annotate(OpenApi.Title, "Carrier webhooks") {}

// ---- Admin API (CONTRACT.md), bearer ADMIN_TOKEN ----

const workspaceExample = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0003",
  name: "Acme Dental",
  billing: { plan: "standard", trial: true, subscription: "active", paymentMethod: false, identity: "none", mobileVerified: false, billedVia: "card", cardDeclines: false, ownerEmail: "owner@acme.example" },
  createdAt: "2026-08-17T10:00:00.000Z"
} as const
const WorkspaceEnvelope = Schema.Struct({ workspace: Workspace }).annotations({ examples: [{ workspace: workspaceExample }] })
const KeyScopes = Schema.Array(Schema.Literal(...allScopes)).pipe(Schema.minItems(1))

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createWorkspace", "/workspaces")
      .setPayload(Schema.Struct({ name: NonEmptyText(200), billing: Schema.optional(BillingPatch) }).annotations({ ...strict, examples: [{ name: "Acme Dental", billing: { ownerEmail: "owner@acme.example" } }] }))
      .addSuccess(WorkspaceEnvelope, { status: 201 })
  )
  .add(HttpApiEndpoint.get("getWorkspace", "/workspaces/:id").setPath(IdParam).addSuccess(WorkspaceEnvelope))
  .add(
    HttpApiEndpoint.patch("updateWorkspace", "/workspaces/:id")
      .setPath(IdParam)
      .setPayload(Schema.Struct({ name: Schema.optional(NonEmptyText(200)), billing: Schema.optional(BillingPatch) }).annotations({ ...strict, examples: [{ billing: { paymentMethod: true, trial: false } }] }))
      .addSuccess(WorkspaceEnvelope)
  )
  .add(
    HttpApiEndpoint.post("createKey", "/workspaces/:id/keys")
      .setPath(IdParam)
      .setPayload(
        Schema.Struct({
          kind: Schema.Literal("live", "test"),
          scopes: Schema.optional(KeyScopes),
          name: Schema.optional(Text(200))
        }).annotations({ ...strict, examples: [{ kind: "live", scopes: ["contacts:read", "contacts:write"], name: "CRM sync" }] })
      )
      .addSuccess(
        Schema.Struct({
          key: Schema.Struct({
            id: Schema.UUID,
            kind: Schema.Literal("live", "test"),
            scopes: Schema.Array(Schema.String),
            name: Schema.NullOr(Schema.String),
            token: Schema.String,
            createdAt: Schema.String
          })
        }).annotations({
          examples: [{ key: { id: "01a20307-1c76-7000-ad98-06c77d1e0004", kind: "live", scopes: ["contacts:read", "contacts:write"], name: "CRM sync", token: "svc_live_9fK2mQ7xLp3vR8sT1wY4zA6bC0dE5gH2jN7uV3xZ", createdAt: "2026-08-17T10:00:00.000Z" } }]
        }),
        { status: 201 }
      )
  )
  .add(
    HttpApiEndpoint.del("revokeKey", "/keys/:keyId")
      .setPath(Schema.Struct({ keyId: Schema.String }))
      .addSuccess(Schema.Struct({ revoked: Schema.Literal(true) }).annotations({ examples: [{ revoked: true }] }))
  )
  .add(
    HttpApiEndpoint.post("addNumber", "/workspaces/:id/numbers")
      .setPath(IdParam)
      .setPayload(Schema.Struct({ e164: Schema.String, type: Schema.optional(NumberType) }).annotations({ ...strict, examples: [{ e164: "+14155550100" }] }))
      .addSuccess(
        Schema.Struct({ number: WorkspaceNumber }).annotations({
          examples: [{ number: { e164: "+14155550100" as E164, type: "local", voiceMode: "app", agentId: null, forwardTo: null, assignedUserId: null, status: "active" } }]
        }),
        { status: 201 }
      )
      .addError(FailedPrecondition, { status: 409 })
  )
  .add(
    HttpApiEndpoint.get("ledger", "/workspaces/:id/ledger")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({
          charges: Schema.Array(
            Schema.Struct({
              id: Schema.String,
              kind: Schema.String,
              description: Schema.String,
              amountCents: Schema.Number,
              currency: Schema.String,
              numberE164: Schema.NullOr(Schema.String),
              createdAt: Schema.String
            })
          )
        }).annotations({ examples: [{ charges: [{ id: "chg_1", kind: "number_setup", description: "10DLC setup fee for +14155550100", amountCents: 2000, currency: "USD", numberE164: "+14155550100", createdAt: "2026-08-17T10:00:00.000Z" }] }] })
      )
  )
  .add(
    HttpApiEndpoint.get("auditLog", "/workspaces/:id/audit-log")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({
          entries: Schema.Array(
            Schema.Struct({ id: Schema.String, actor: Schema.String, action: Schema.String, detail: Schema.Unknown.annotations({ jsonSchema: { description: "any JSON value" } }), createdAt: Schema.String })
          )
        }).annotations({ examples: [{ entries: [{ id: "aud_1", actor: "api", action: "registration.filed", detail: { mock: false }, createdAt: "2026-08-17T10:00:00.000Z" }] }] })
      )
  )
  .add(
    HttpApiEndpoint.get("mail", "/workspaces/:id/mail")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({
          mail: Schema.Array(
            Schema.Struct({ id: Schema.String, to: Schema.String, subject: Schema.String, text: Schema.String, createdAt: Schema.String })
          )
        }).annotations({ examples: [{ mail: [{ id: "mail_1", to: "owner@acme.example", subject: "Your texting registration receipt", text: "...", createdAt: "2026-08-17T10:00:00.000Z" }] }] })
      )
  )
  .addError(InvalidArgument, { status: 400 })
  .addError(NotFound, { status: 404 })
  .middleware(AdminAuthorization)
  .prefix("/v1/admin")
  .annotate(OpenApi.Title, "Admin")
  .annotate(OpenApi.Description, "Operator API: workspaces, billing state, keys, seeded numbers. Bearer `ADMIN_TOKEN`; absent (404) when unset.") {}

export class Api extends HttpApi.make("switchboard")
  .add(ContactsGroup)
  .add(ConversationsGroup)
  .add(MessagesGroup)
  .add(WebhooksGroup)
  .add(TestHelpersGroup)
  .add(MediaGroup)
  .add(CarrierGroup)
  .add(AdminGroup)
  .addError(Internal, { status: 500 })
  .annotate(OpenApi.Title, "Switchboard API")
  .annotate(OpenApi.Version, API_VERSION)
  .annotate(OpenApi.Description, "Messaging and telephony for business workspaces.")
  .annotate(OpenApi.Transform, patchOpenApi) {}

export { Billing }
