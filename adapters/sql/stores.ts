/**
 * One SqlClient implementation of every store port (Postgres dialect; runs on Postgres and PGlite),
 * one file per port, composed here. Rows decode through each record's schema (tables.ts).
 * Infrastructure failures are defects (answered 500 with the request id logged); domain outcomes
 * such as "number taken" are typed.
 */
import { Layer } from "effect"
import * as Signal from "../../core/events/signal.ts"
import * as Agents from "./agents.ts"
import * as ApiKeys from "./apiKeys.ts"
import * as Audit from "./audit.ts"
import * as CallSessions from "./callSessions.ts"
import * as Clock from "./clock.ts"
import * as Contacts from "./contacts.ts"
import * as Conversations from "./conversations.ts"
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

/** What the stores need besides a SqlClient, re-exported for embedders: migrations and the sealer of secrets. */
export * as Migrate from "./migrate.ts"
export * as Secrets from "./secrets.ts"

/**
 * Every store port and the transactor over one SqlClient, and the signal their commits give the
 * outbox worker. Needs `Secrets.layer(key)`, after `Migrate.layer` has run.
 */
export const layer = Layer.mergeAll(
  Workspaces.layer,
  ApiKeys.layer,
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
  Members.layer,
  Sessions.layer,
  Scheduling.layer,
  Pacer.layer,
  Transactor.layer,
  Health.layer
).pipe(Layer.provideMerge(Signal.layer))

/** Whether commits NOTIFY other processes' webhook workers (on by default; outbox.ts). */
export { OutboxNotifies } from "./outbox.ts"

/** The server secrets `Secrets.layer` opens at boot, and the cursor codec keyed by one of them. */
export { CursorCodecLive, ServerSecrets } from "./serverSecrets.ts"
