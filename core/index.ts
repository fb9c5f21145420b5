/**
 * The Switchboard domain core for embedders: pure rules, schemas, ports (Context tags), services and
 * the capability table. Provide the ports a service needs (adapters/memory or adapters/sql for the
 * stores, a CursorCodec, and for messaging the outside world), then call the use cases or the tools.
 */
export * from "./kernel/errors.ts"
export * from "./kernel/findOr404.ts"
export * from "./kernel/records.ts"
export * from "./auth/apiKey.ts"
export * from "./auth/principal.ts"
export * from "./auth/scopes.ts"
export * from "./kernel/phone.ts"
export * from "./kernel/pagination.ts"
export * from "./ratelimit/bucket.ts"
export * from "./kernel/ids.ts"
export * from "./kernel/time.ts"
export * from "./kernel/transactor.ts"
export * from "./numbers/model.ts"
export {
  AvailableNumber,
  AvailableNumbersInput,
  inventoryError,
  inventoryQuery,
  type InventoryQuery,
  NumberInventory,
  numberTaken,
  NumberUnavailable,
  type OrderedNumber,
  RETAIL_MONTHLY_CENTS,
  retailCost
} from "./numbers/inventory.ts"
export * from "./media/model.ts"
export * from "./egress/guard.ts"
export * from "./kernel/display.ts"

// Events and the outbox.
export * as Events from "./events/catalog.ts"
export { EventOutbox, type OutboxEvent } from "./events/outbox.ts"
export * as OutboxSignal from "./events/signal.ts"

// Idempotency: the store port and the transport-neutral runner.
export * from "./idempotency/store.ts"
export * as Idempotency from "./idempotency/runner.ts"

// Contacts.
export * as ContactModel from "./contacts/model.ts"
export * as ContactRules from "./contacts/rules.ts"
export { ContactStore, type ContactListQuery } from "./contacts/store.ts"
export { Contacts, layer as ContactsLive } from "./contacts/service.ts"

// Conversations and messaging.
export * as ConversationModel from "./conversations/model.ts"
export { ConversationStore } from "./conversations/store.ts"
export { Conversations, layer as ConversationsLive, PatchConversationInput } from "./conversations/service.ts"
export { Messaging, layer as MessagingLive } from "./messaging/service.ts"
export { SendMessageInput, SendMessageResult } from "./messaging/outbound.ts"
export { Simulator, layer as SimulatorLive } from "./messaging/simulator.ts"
export { ActivityViews, layer as ActivityViewsLive } from "./messaging/views.ts"
export { Carrier, CarrierError, type InboundMessage, type OutboundMessage, type StatusReport } from "./messaging/carrier.ts"
export { layerNotFiled, RegistrationGate, type TextingState } from "./registration/gate.ts"
export {
  type BrandReport,
  type BrandStatus,
  type CampaignReport,
  type CampaignStatus,
  OTP_TTL_MILLIS,
  OtpRejected,
  Registry,
  RegistryError
} from "./registration/registry.ts"
export * as DeliveryStatus from "./messaging/deliveryStatus.ts"

// Calls.
export * as CallModel from "./calls/model.ts"
export * as CallEvents from "./calls/events.ts"
export { Calls, type InboundCall, layer as CallsLive } from "./calls/service.ts"
export { type CallEnd, type DialRequest, type Dialed, Voice, VoiceError } from "./calls/voice.ts"

// Carrier callbacks: the port a carrier's webhooks come in through, and the use case behind it.
export { type CallbackRequest, CarrierCallbacks, CarrierEvent, type RegistryChange } from "./carrier/callbacks.ts"
export { dispatch as dispatchCarrierEvent, receiveCallback } from "./carrier/receive.ts"

// Webhooks.
export * as WebhookModel from "./webhooks/model.ts"
export { WebhookSender, WebhookStore } from "./webhooks/store.ts"
export { Webhooks, layer as WebhooksLive } from "./webhooks/service.ts"

// Workspaces and keys.
export * as WorkspaceModel from "./workspaces/model.ts"
export { ApiKeyStore, WorkspaceStore, type ApiKeyRecord } from "./workspaces/store.ts"
export { Workspaces, layer as WorkspacesLive, type CreatedKey } from "./workspaces/service.ts"

// Billing: the gates, prices, the payments port and the ledger.
export * as BillingGates from "./billing/gates.ts"
export * as Pricing from "./billing/pricing.ts"
export * as LedgerModel from "./billing/ledger.ts"
export { chargeRecords, LedgerStore } from "./billing/store.ts"
export { cardDeclined, type Payment, Payments } from "./billing/payments.ts"

// Mail to a workspace's owner: the Mailer port (`sendMail`), its outbox and the outbox-only default.
export * as MailModel from "./mail/message.ts"
export { MailOutbox, mailRecord } from "./mail/store.ts"
export { layerOutbox as MailerOutboxLive, MailError, Mailer, sendMail } from "./mail/mailer.ts"

// The AI call agent: its record and views, who answers a call, the store port and the use cases.
export * as AgentModel from "./agent/model.ts"
export * as AgentHours from "./agent/hours.ts"
export { AgentStore } from "./agent/store.ts"
export { Agents, layer as AgentsLive } from "./agent/service.ts"

// The capability table (REST, MCP and the agent call the same entries).
export * as Tools from "./tools/index.ts"

export { CoreLive } from "./layer.ts"

// US 10DLC registration: the pure pipeline (imports only effect) and the application's rules.
export * as Registration from "./registration/machine.ts"
export * as RegistrationInput from "./registration/input.ts"
