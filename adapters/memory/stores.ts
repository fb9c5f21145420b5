/** In-memory layers of every store port, one file per port, kept honest by the contract suites in test/adapters. */
import { Layer } from "effect"
import * as Signal from "../../core/events/signal.ts"
import * as Agents from "./agents.ts"
import * as ApiKeys from "./apiKeys.ts"
import * as Audit from "./audit.ts"
import * as CallSessions from "./callSessions.ts"
import * as Clock from "./clock.ts"
import * as Contacts from "./contacts.ts"
import * as Conversations from "./conversations.ts"
import { layerDb } from "./db.ts"
import * as Health from "./health.ts"
import * as Idempotency from "./idempotency.ts"
import * as Invoices from "./invoices.ts"
import * as Ledger from "./ledger.ts"
import * as Mail from "./mail.ts"
import * as Members from "./members.ts"
import * as Numbers from "./numbers.ts"
import * as OptOuts from "./optOuts.ts"
import * as Outbox from "./outbox.ts"
import * as Pacer from "./pacer.ts"
import * as PaymentCustomers from "./paymentCustomers.ts"
import * as PendingCharges from "./pendingCharges.ts"
import * as Registrations from "./registrations.ts"
import * as Scheduling from "./scheduling.ts"
import * as Sessions from "./sessions.ts"
import * as Transactor from "./transactor.ts"
import * as Webhooks from "./webhooks.ts"
import * as Workspaces from "./workspaces.ts"

/** Every store port and the transactor, in memory, and the signal their commits give the outbox worker. */
export const layer = Layer.mergeAll(
  Workspaces.layer,
  ApiKeys.layer,
  Members.layer,
  Sessions.layer,
  Numbers.layer,
  Contacts.layer,
  Conversations.layer,
  Webhooks.layer,
  Outbox.layer,
  Idempotency.layer,
  Ledger.layer,
  Invoices.layer,
  PendingCharges.layer,
  PaymentCustomers.layer,
  Mail.layer,
  Audit.layer,
  Registrations.layer,
  Clock.layer,
  Agents.layer,
  CallSessions.layer,
  OptOuts.layer,
  Scheduling.layer,
  Pacer.layer,
  Transactor.layer,
  Health.layer
).pipe(Layer.provideMerge(Layer.merge(layerDb, Signal.layer)))
