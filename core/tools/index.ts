/** The capability table: every tool the MCP endpoint lists and the agent may call. */
import * as Agent from "./agent.ts"
import * as Calls from "./calls.ts"
import * as Contacts from "./contacts.ts"
import * as Conversations from "./conversations.ts"
import * as Numbers from "./numbers.ts"
import * as OptOuts from "./optOuts.ts"
import * as Registration from "./registration.ts"
import * as Scheduling from "./scheduling.ts"
import type { AnyTool, Tool } from "./tool.ts"
import * as Webhooks from "./webhooks.ts"

export * from "./tool.ts"
export { Agent, Calls, Contacts, Conversations, Numbers, OptOuts, Registration, Scheduling, Webhooks }

// Listed by name: a module may export other things (its input schemas) beside its tools.
export const tools: ReadonlyArray<AnyTool> = [
  Contacts.listContacts,
  Contacts.getContact,
  Contacts.createContact,
  Contacts.updateContact,
  Contacts.deleteContact,
  OptOuts.listOptOuts,
  OptOuts.createOptOut,
  OptOuts.deleteOptOut,
  Conversations.listConversations,
  Conversations.getConversation,
  Conversations.updateConversation,
  Conversations.sendMessage,
  Conversations.searchMessages,
  Scheduling.createScheduledMessage,
  Scheduling.listScheduledMessages,
  Scheduling.getScheduledMessage,
  Scheduling.cancelScheduledMessage,
  Scheduling.createBroadcast,
  Scheduling.listBroadcasts,
  Scheduling.getBroadcast,
  Scheduling.listBroadcastRecipients,
  Scheduling.cancelBroadcast,
  Calls.listCalls,
  Calls.placeCall,
  Numbers.listNumbers,
  Numbers.searchAvailableNumbers,
  Numbers.buyNumber,
  Registration.getMessagingStatus,
  Registration.fileMessagingRegistration,
  Registration.refreshMessagingStatus,
  Registration.verifyMessagingOtp,
  Registration.resendMessagingOtp,
  Agent.getAgent,
  Agent.updateAgent,
  Agent.publishAgent,
  Agent.connectNumber,
  Agent.disconnectNumber,
  Webhooks.listWebhookEventTypes,
  Webhooks.listWebhooks,
  Webhooks.createWebhook,
  Webhooks.getWebhook,
  Webhooks.updateWebhook,
  Webhooks.deleteWebhook,
  Webhooks.rotateWebhookSecret,
  Webhooks.testWebhook,
  Webhooks.listWebhookDeliveries,
  Webhooks.retryWebhookDelivery,
  Webhooks.recoverWebhook
]

type ServicesOf<M> = { [K in keyof M]: M[K] extends Tool<any, any, any, any, infer R> ? R : never }[keyof M]

/** Every service the table's use cases need: what a transport running any tool must provide. */
export type ToolServices =
  | ServicesOf<typeof Agent>
  | ServicesOf<typeof Calls>
  | ServicesOf<typeof Contacts>
  | ServicesOf<typeof Conversations>
  | ServicesOf<typeof Registration>
  | ServicesOf<typeof Numbers>
  | ServicesOf<typeof OptOuts>
  | ServicesOf<typeof Scheduling>
  | ServicesOf<typeof Webhooks>
