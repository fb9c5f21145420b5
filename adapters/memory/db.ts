/**
 * The in-memory twin of the database: every store shares one state object, so a transaction can
 * roll back by restoring a snapshot (transactor.ts).
 */
import { Context, Layer } from "effect"
import type { AgentRecord } from "../../core/agent/model.ts"
import type { AuditRecord } from "../../core/audit/log.ts"
import type { PaymentCustomer } from "../../core/billing/customers.ts"
import type { InvoiceRecord } from "../../core/billing/invoices.ts"
import type { ChargeRecord } from "../../core/billing/ledger.ts"
import type { PendingChargeRecord } from "../../core/billing/pending.ts"
import type { CallSession } from "../../core/calls/sessions.ts"
import type { Contact } from "../../core/contacts/model.ts"
import type { ActivityRecord, Thread } from "../../core/conversations/model.ts"
import type { OutboxEvent } from "../../core/events/outbox.ts"
import type { MailRecord } from "../../core/mail/message.ts"
import type { MemberRecord } from "../../core/members/model.ts"
import type { SessionRecord, SignInLink } from "../../core/members/sessions.ts"
import type { NumberRecord } from "../../core/numbers/model.ts"
import type { OptOutRecord } from "../../core/optouts/model.ts"
import type { Registration } from "../../core/registration/record.ts"
import type { BroadcastRecord, ScheduledRecord } from "../../core/scheduling/model.ts"
import type { DeliveryRecord, EndpointRecord } from "../../core/webhooks/model.ts"
import type { AttemptRecord } from "../../core/webhooks/store.ts"
import type { Workspace } from "../../core/workspaces/model.ts"
import type { ApiKeyRecord } from "../../core/workspaces/store.ts"
import type { QueuedSend } from "./scheduling.ts"

export interface MemoryState {
  workspaces: Map<string, Workspace>
  keys: Map<string, ApiKeyRecord>
  members: Map<string, MemberRecord>
  /** By digest. */
  signInLinks: Map<string, SignInLink>
  memberSessions: Map<string, SessionRecord>
  numbers: Map<string, NumberRecord>
  contacts: Map<string, Contact>
  outbox: Array<OutboxEvent>
  dispatched: Set<string>
  endpoints: Map<string, EndpointRecord>
  deliveries: Map<string, DeliveryRecord>
  leases: Map<string, string>
  attempts: Array<AttemptRecord>
  threads: Map<string, Thread>
  activities: Map<string, ActivityRecord>
  ledger: Array<ChargeRecord>
  /** By id. */
  invoices: Map<string, InvoiceRecord>
  pendingCharges: Map<string, PendingChargeRecord>
  /** By workspace id. */
  paymentCustomers: Map<string, PaymentCustomer>
  mail: Array<MailRecord>
  audit: Array<AuditRecord>
  registrations: Map<string, Registration>
  /** Registry leases' ends, by workspace. */
  registrationLeases: Map<string, string>
  clockOffsets: Map<string, number>
  agents: Map<string, AgentRecord>
  callSessions: Map<string, CallSession>
  /** By `${workspaceId} ${phone}`. */
  optOuts: Map<string, OptOutRecord>
  /** By `${workspaceId} ${id}`. */
  scheduled: Map<string, ScheduledRecord>
  broadcasts: Map<string, BroadcastRecord>
  /** The send queue by send id. */
  sends: Map<string, QueuedSend>
  /** Each workspace's next free texting time (ms). */
  pace: Map<string, number>
  seq: number
}

const empty = (): MemoryState => ({
  workspaces: new Map(),
  keys: new Map(),
  members: new Map(),
  signInLinks: new Map(),
  memberSessions: new Map(),
  numbers: new Map(),
  contacts: new Map(),
  outbox: [],
  dispatched: new Set(),
  endpoints: new Map(),
  deliveries: new Map(),
  leases: new Map(),
  attempts: [],
  threads: new Map(),
  activities: new Map(),
  ledger: [],
  invoices: new Map(),
  pendingCharges: new Map(),
  paymentCustomers: new Map(),
  mail: [],
  audit: [],
  registrations: new Map(),
  registrationLeases: new Map(),
  clockOffsets: new Map(),
  agents: new Map(),
  callSessions: new Map(),
  optOuts: new Map(),
  scheduled: new Map(),
  broadcasts: new Map(),
  sends: new Map(),
  pace: new Map(),
  seq: 0
})

export const clone = (s: MemoryState): MemoryState => ({
  workspaces: new Map(s.workspaces),
  keys: new Map(s.keys),
  members: new Map(s.members),
  signInLinks: new Map(s.signInLinks),
  memberSessions: new Map(s.memberSessions),
  numbers: new Map(s.numbers),
  contacts: new Map(s.contacts),
  outbox: [...s.outbox],
  dispatched: new Set(s.dispatched),
  endpoints: new Map(s.endpoints),
  deliveries: new Map(s.deliveries),
  leases: new Map(s.leases),
  attempts: [...s.attempts],
  threads: new Map(s.threads),
  activities: new Map(s.activities),
  ledger: [...s.ledger],
  invoices: new Map(s.invoices),
  pendingCharges: new Map(s.pendingCharges),
  paymentCustomers: new Map(s.paymentCustomers),
  mail: [...s.mail],
  audit: [...s.audit],
  registrations: new Map(s.registrations),
  registrationLeases: new Map(s.registrationLeases),
  clockOffsets: new Map(s.clockOffsets),
  agents: new Map(s.agents),
  callSessions: new Map(s.callSessions),
  optOuts: new Map(s.optOuts),
  scheduled: new Map(s.scheduled),
  broadcasts: new Map(s.broadcasts),
  sends: new Map(s.sends),
  pace: new Map(s.pace),
  seq: s.seq
})

/** The order of the SQL stores' `ORDER BY created_at DESC, id DESC`. */
export const newestFirst = (
  a: { readonly createdAt: string; readonly id: string },
  b: { readonly createdAt: string; readonly id: string }
) => a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1

/** The order of the SQL stores' `ORDER BY created_at, id`. */
export const oldestFirst = (
  a: { readonly createdAt: string; readonly id: string },
  b: { readonly createdAt: string; readonly id: string }
) => -newestFirst(a, b)

export class MemoryDb extends Context.Tag("adapters/memory/MemoryDb")<MemoryDb, { state: MemoryState }>() {}

export const layerDb = Layer.sync(MemoryDb, () => ({ state: empty() }))
