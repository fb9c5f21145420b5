/** Every stored record's table, derived from its schema in core (rows.ts); each decoder is compiled once, here. */
import { AgentRecord } from "../../core/agent/model.ts"
import { AuditRecord } from "../../core/audit/log.ts"
import { PaymentCustomer } from "../../core/billing/customers.ts"
import { InvoiceRecord } from "../../core/billing/invoices.ts"
import { ChargeRecord } from "../../core/billing/ledger.ts"
import { PendingChargeRecord } from "../../core/billing/pending.ts"
import { CallSession } from "../../core/calls/sessions.ts"
import { Contact, ContactSummary } from "../../core/contacts/model.ts"
import { ActivityRecord, Thread } from "../../core/conversations/model.ts"
import { SearchRow } from "../../core/conversations/store.ts"
import { OutboxEvent } from "../../core/events/outbox.ts"
import { MailRecord } from "../../core/mail/message.ts"
import { MemberRecord } from "../../core/members/model.ts"
import { SessionRecord, SignInLink } from "../../core/members/sessions.ts"
import { NumberRecord, WorkspaceNumber } from "../../core/numbers/model.ts"
import { OptOutRecord } from "../../core/optouts/model.ts"
import { Registration } from "../../core/registration/record.ts"
import { ScheduledRecord, SendRecord } from "../../core/scheduling/model.ts"
import { DeliveryRecord, EndpointRecord } from "../../core/webhooks/model.ts"
import { EndpointSubscription } from "../../core/webhooks/store.ts"
import { ApiKeyRecord, Workspace } from "../../core/workspaces/model.ts"
import { table } from "./rows.ts"

export const workspaces = table(Workspace)
export const apiKeys = table(ApiKeyRecord)
/** A `numbers` row holds the number and, beside it, whose it is. */
export const numbers = table(WorkspaceNumber)
export const numberOwners = table(NumberRecord.omit("number"))
export const contacts = table(Contact)
export const contactSummaries = table(ContactSummary)
export const outboxEvents = table(OutboxEvent)
export const threads = table(Thread)
export const activities = table(ActivityRecord)
/** Activities joined to their thread, selected as `activities.columns("a")`. */
export const joinedActivities = table(ActivityRecord, "a_")
/** A message search's hits (conversations.ts selects the columns). */
export const searchRows = table(SearchRow)
/** Secrets as stored: sealed (secrets.ts). */
export const webhookEndpoints = table(EndpointRecord)
export const webhookDeliveries = table(DeliveryRecord)
export const endpointSubscriptions = table(EndpointSubscription)
export const ledgerCharges = table(ChargeRecord)
export const paymentCustomers = table(PaymentCustomer)
export const mailMessages = table(MailRecord)
export const auditEntries = table(AuditRecord)
/** Business, campaign input, brand and campaign are jsonb; the registry ids beside them are generated from those. */
export const textingRegistrations = table(Registration)
/** The agent's draft and published configurations are jsonb. */
export const agents = table(AgentRecord)
/** A carrier call in progress; its route is jsonb. */
export const callSessions = table(CallSession)
export const optOuts = table(OptOutRecord)
export const members = table(MemberRecord)
export const signInLinks = table(SignInLink)
export const memberSessions = table(SessionRecord)
export const scheduledMessages = table(ScheduledRecord)
export const textSends = table(SendRecord)
/** A scheduled message's send beside it, selected as `joinedSends.columns("s")`. */
export const joinedSends = table(SendRecord, "s_")
export const invoices = table(InvoiceRecord)
export const pendingCharges = table(PendingChargeRecord)
