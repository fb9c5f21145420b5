/**
 * One example of each resource for the OpenAPI document; the groups build their request and
 * response examples from these, so each example is written once.
 */
import { ContactDetail } from "../../../core/contacts/model.ts"
import type { E164 } from "../../../core/kernel/phone.ts"

const createdAt = "2026-08-17T10:00:00.000Z"

// Built with the record's `make`, so a field added to the record shows in the example with its default.
export const contact = ContactDetail.make({
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
  createdAt
})

export const webhook = {
  id: "5f0c2a8e-7d7b-4f5e-8a51-2b7f3d9e6c10",
  url: "https://hooks.example.com/switchboard",
  events: ["contact.updated", "contact.deleted"],
  label: "CRM sync",
  status: "enabled",
  apiVersion: null,
  createdAt
} as const

export const webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

export const delivery = {
  id: "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22",
  eventId: "evt_01a203071c767000ad9806c77d1e19e9",
  eventType: "contact.updated",
  status: "succeeded",
  attempts: 1,
  responseStatus: 200,
  error: null,
  createdAt,
  lastAttemptAt: "2026-08-17T10:00:00.120Z",
  nextAttemptAt: null
} as const

export const activity = {
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
  createdAt
} as const

export const conversation = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0001",
  inboxId: "01a20307-1c76-7000-ad98-06c77d1e0002",
  numberE164: "+14155550100",
  participants: ["+14155550123"],
  contactName: "Ada Lovelace",
  status: "open",
  assigneeUid: null,
  lastActivityAt: createdAt,
  preview: "Your table for two is ready.",
  unread: 0
} as const

export const workspace = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0003",
  name: "Acme Dental",
  billing: {
    plan: "standard",
    trial: true,
    subscription: "active",
    paymentMethod: false,
    identity: "none",
    mobileVerified: false,
    billedVia: "card",
    cardDeclines: false,
    ownerEmail: "owner@acme.example"
  },
  textingSegmentsPerMinute: 75,
  quietHours: { start: "21:00", end: "08:00" },
  createdAt
} as const

export const createdKey = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0004",
  kind: "live",
  scopes: ["contacts:read", "contacts:write"],
  name: "CRM sync",
  token: "svc_live_9fK2mQ7xLp3vR8sT1wY4zA6bC0dE5gH2jN7uV3xZ",
  createdAt
} as const

export const apiKey = {
  id: createdKey.id,
  workspaceId: workspace.id,
  kind: createdKey.kind,
  scopes: createdKey.scopes,
  name: createdKey.name,
  createdAt,
  revokedAt: null
} as const

export const member = {
  id: "01a20307-1c76-7000-ad98-06c77d1e000c",
  email: "grace@acme.example",
  name: "Grace Hopper",
  role: "admin",
  phone: "+14155550123",
  createdAt
} as const

export const number = {
  e164: "+14155550100" as E164,
  type: "local",
  voiceMode: "app",
  agentId: null,
  forwardTo: null,
  assignedUserId: null,
  status: "active"
} as const

/** A second local number bought on 17 August: 15 of August's 31 days of 5.00 USD. */
export const ledgerCharge = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0009",
  kind: "local_number",
  description: "Local number +14155550100, prorated 15/31 days",
  amountCents: 242,
  currency: "USD",
  numberE164: "+14155550100" as E164,
  createdAt
} as const

export const invoice = {
  id: "01a20307-1c76-7000-ad98-06c77d1e000c",
  periodStart: "2026-12-01T00:00:00.000Z",
  periodEnd: "2027-01-01T00:00:00.000Z",
  status: "paid",
  amountCents: 2400,
  currency: "USD",
  lines: [
    { kind: "plan", description: "Plan standard, December 2026", amountCents: 1500, numberE164: null },
    {
      kind: "messaging_addon",
      description: "Messaging add-on for +14155550100, December 2026",
      amountCents: 400,
      numberE164: "+14155550100" as E164
    },
    {
      kind: "local_number",
      description: "Local number +14155550101, December 2026",
      amountCents: 500,
      numberE164: "+14155550101" as E164
    }
  ],
  attempts: 1,
  createdAt
} as const

export const auditEntry = {
  id: "01a20307-1c76-7000-ad98-06c77d1e000b",
  actor: "api",
  action: "registration.filed",
  detail: { mock: false },
  createdAt
} as const

export const mail = {
  id: "01a20307-1c76-7000-ad98-06c77d1e000a",
  to: "owner@acme.example",
  subject: "Your texting registration receipt",
  text: "...",
  createdAt
} as const

/** A call the AI agent answered, as `GET /calls` lists it. */
export const call = {
  id: "01a20307-1c76-7000-ad98-06c77d1e000c",
  conversationId: conversation.id,
  type: "call",
  direction: "inbound",
  status: "completed",
  from: "+14155550123",
  to: "+14155550100",
  numberE164: "+14155550100",
  durationSeconds: 60,
  answeredBy: "agent",
  agentId: "01a20307-1c76-7000-ad98-06c77d1e000d",
  carrierCallId: "sim_call_01a20307-1c76-7000-ad98-06c77d1e000e",
  recordingUrl:
    "https://api.example.com/v1/media/01a20307-1c76-7000-ad98-06c77d1e0003/call_01a20307-1c76-7000-ad98-06c77d1e000c.wav?expires=1786960800&signature=abc",
  transcript: [
    { speaker: "agent", text: "Thanks for calling, how can I help?", offsetSeconds: 0 },
    { speaker: "caller", text: "I would like to book a table for two tonight at seven.", offsetSeconds: 15 }
  ],
  summary: "The caller booked a table for two tonight at seven.",
  createdAt,
  endedAt: "2026-08-17T10:01:00.000Z"
} as const

export const optOut = {
  phone: "+14155550123",
  source: "keyword",
  keyword: "STOP",
  note: null,
  createdAt
} as const

export const apiOptOut = {
  phone: "+14155550124",
  source: "api",
  keyword: null,
  note: "Asked on the phone not to be texted",
  createdAt
} as const

export const scheduledMessage = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0100",
  to: "+14155550123",
  from: null,
  conversationId: null,
  body: "Reminder: your cleaning is tomorrow at 9:00.",
  mediaUrls: [],
  sendAt: "2026-08-18T16:00:00.000Z",
  status: "scheduled",
  messageId: null,
  failure: null,
  createdAt
} as const

export const broadcast = {
  id: "01a20307-1c76-7000-ad98-06c77d1e0101",
  from: null,
  body: "We're closed Friday for the holiday. Reply STOP to opt out.",
  mediaUrls: [],
  status: "sending",
  sendAt: createdAt,
  counts: { total: 240, sent: 180, failed: 1, skippedOptedOut: 3, skippedCanceled: 0, pending: 56 },
  createdAt,
  completedAt: null
} as const

export const broadcastRecipient = {
  phone: "+14155550123",
  contactId: "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22",
  status: "sent",
  messageId: "01a20307-1c76-7000-ad98-06c77d1e0102",
  failure: null
} as const
