/**
 * The Switchboard domain core for embedders: pure rules, schemas, ports (Context tags), services and
 * the capability table. Provide the ports a service needs (adapters/memory or adapters/sql for the
 * stores, a CursorCodec, and for messaging the outside world), then call the use cases or the tools.
 */
export * from "./auth/apiKey.ts"
export * from "./auth/principal.ts"
export * from "./auth/scopes.ts"
export * from "./egress/guard.ts"
export * from "./kernel/display.ts"
export * from "./kernel/errors.ts"
export * from "./kernel/findOr404.ts"
export * from "./kernel/ids.ts"
export * from "./kernel/pagination.ts"
export * from "./kernel/phone.ts"
export * from "./kernel/records.ts"
export * from "./kernel/time.ts"
export * from "./kernel/transactor.ts"
export * from "./media/model.ts"
export {
  AvailableNumber,
  AvailableNumbersInput,
  inventoryError,
  type InventoryQuery,
  inventoryQuery,
  NumberInventory,
  numberTaken,
  NumberUnavailable,
  type OrderedNumber,
  RETAIL_MONTHLY_CENTS,
  retailCost
} from "./numbers/inventory.ts"
export * from "./numbers/model.ts"
export * from "./ratelimit/bucket.ts"

// Events and the outbox.
export * as Events from "./events/catalog.ts"
export { EventOutbox, type OutboxEvent } from "./events/outbox.ts"
export * as OutboxSignal from "./events/signal.ts"

// Idempotency: the store port and the transport-neutral runner.
export * as Idempotency from "./idempotency/runner.ts"
export * from "./idempotency/store.ts"

// Contacts.
export * as ContactModel from "./contacts/model.ts"
export * as ContactRules from "./contacts/rules.ts"
export { Contacts, layer as ContactsLive } from "./contacts/service.ts"
export { type ContactListQuery, ContactStore } from "./contacts/store.ts"

// Conversations and messaging.
export * as ConversationModel from "./conversations/model.ts"
export { Conversations, layer as ConversationsLive, PatchConversationInput } from "./conversations/service.ts"
export { ConversationStore } from "./conversations/store.ts"
export {
  Carrier,
  CarrierError,
  type InboundMessage,
  type OutboundMessage,
  type StatusReport
} from "./messaging/carrier.ts"
export * as DeliveryStatus from "./messaging/deliveryStatus.ts"
export { SendMessageInput, SendMessageResult } from "./messaging/outbound.ts"
export { layer as MessagingLive, Messaging } from "./messaging/service.ts"
export { layer as SimulatorLive, Simulator } from "./messaging/simulator.ts"
export { ActivityViews, layer as ActivityViewsLive } from "./messaging/views.ts"
export { layerNotFiled, RegistrationGate, type TextingState } from "./registration/gate.ts"
export {
  type BrandReport,
  type BrandStatus,
  type CampaignReport,
  type CampaignStatus,
  IdentityStatus,
  OTP_TTL_MILLIS,
  OtpRejected,
  Registry,
  RegistryError
} from "./registration/registry.ts"

// Calls.
export * as CallEvents from "./calls/events.ts"
export * as CallModel from "./calls/model.ts"
export { Calls, type InboundCall, layer as CallsLive } from "./calls/service.ts"
export { type CallEnd, type Dialed, type DialRequest, Voice, VoiceError } from "./calls/voice.ts"

// Carrier callbacks: the port a carrier's webhooks come in through, and the use case behind it.
export { type CallbackRequest, CarrierCallbacks, CarrierEvent, type RegistryChange } from "./carrier/callbacks.ts"
export { dispatch as dispatchCarrierEvent, receiveCallback } from "./carrier/receive.ts"

// Webhooks.
export * as WebhookModel from "./webhooks/model.ts"
export { layer as WebhooksLive, Webhooks } from "./webhooks/service.ts"
export { WebhookSender, WebhookStore } from "./webhooks/store.ts"

// Workspaces and keys.
export * as WorkspaceModel from "./workspaces/model.ts"
export { type CreatedKey, layer as WorkspacesLive, Workspaces } from "./workspaces/service.ts"
export { type ApiKeyRecord, ApiKeyStore, WorkspaceStore } from "./workspaces/store.ts"

// Members: the people of a workspace and their roles.
export * as MemberModel from "./members/model.ts"
export { layer as MembersLive, Members } from "./members/service.ts"
export { MemberStore } from "./members/store.ts"

// Billing: the gates, prices, the payments port and the ledger.
export * as BillingGates from "./billing/gates.ts"
export * as LedgerModel from "./billing/ledger.ts"
export { type ChargeRequest, type Payment, PaymentFailed, Payments } from "./billing/payments.ts"
export * as Pricing from "./billing/pricing.ts"
export { chargeRecords, LedgerStore } from "./billing/store.ts"

// Mail to a workspace's owner: the Mailer port (`sendMail`), its outbox and the outbox-only default.
export { layerOutbox as MailerOutboxLive, Mailer, MailError, sendMail } from "./mail/mailer.ts"
export * as MailModel from "./mail/message.ts"
export { MailOutbox, mailRecord } from "./mail/store.ts"

// The AI call agent: its record and views, who answers a call, the store port and the use cases.
export * as AgentHours from "./agent/hours.ts"
export * as AgentModel from "./agent/model.ts"
export { Agents, layer as AgentsLive } from "./agent/service.ts"
export { AgentStore } from "./agent/store.ts"

// The capability table (REST, MCP and the agent call the same entries).
export * as Tools from "./tools/index.ts"

export { CoreLive } from "./layer.ts"

// US 10DLC registration: the pure pipeline (imports only effect) and the application's rules.
export * as RegistrationInput from "./registration/input.ts"
export * as Registration from "./registration/machine.ts"

// Pacing: what a text costs in segments, and when quiet hours let it leave on its recipient's clock.
export * as QuietHours from "./pacing/quietHours.ts"
export * as Segments from "./pacing/segments.ts"
