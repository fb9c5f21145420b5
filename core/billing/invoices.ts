/**
 * A month's invoice (CONTRACT.md "Billing cycle and payments"): one per workspace and month, with a
 * line per renewing item, charged in attempts (the first on the first of the month, the retries
 * after 3 and 7 days) until paid or given up.
 */
import { Context, type Effect, Option, Schema } from "effect"
import { E164 } from "../kernel/phone.ts"
import { projection } from "../kernel/records.ts"
import { ChargeKind, CURRENCY } from "./ledger.ts"

export const InvoiceLine = Schema.Struct({
  kind: ChargeKind,
  description: Schema.String,
  amountCents: Schema.Int,
  numberE164: Schema.NullOr(E164)
})
export type InvoiceLine = typeof InvoiceLine.Type

/**
 * `open`: made, its first attempt not settled yet; `paid`; `failed`: its last attempt declined (a
 * retry may follow); `void`: no longer owed (the workspace stopped being billed before it was paid);
 * `empty`: the month had nothing to bill (kept so the cycle does not look at it again).
 */
export const InvoiceStatus = Schema.Literal("open", "paid", "failed", "void", "empty")
export type InvoiceStatus = typeof InvoiceStatus.Type

export const InvoiceRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  /** The first instant of the month (UTC) it bills, and of the next. */
  periodStart: Schema.String,
  periodEnd: Schema.String,
  status: InvoiceStatus,
  amountCents: Schema.Int,
  currency: Schema.Literal(CURRENCY),
  lines: Schema.Array(InvoiceLine),
  /** Attempts started; the current one's idempotency key is `attemptKey(id, attempts)`. */
  attempts: Schema.Int,
  /** An attempt is between its charge and its settlement, held until `leaseUntil` (real time). */
  charging: Schema.Boolean,
  leaseUntil: Schema.NullOr(Schema.String),
  /** When the next attempt falls due, on the workspace's clock; null when none will. */
  nextAttemptAt: Schema.NullOr(Schema.String),
  paymentId: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type InvoiceRecord = typeof InvoiceRecord.Type

/** The admin API's view (`GET /v1/admin/workspaces/{id}/invoices`). */
export const Invoice = Schema.Struct({
  ...InvoiceRecord.pick("id", "periodStart", "periodEnd", "amountCents", "currency", "lines", "attempts", "createdAt")
    .fields,
  status: Schema.Literal("paid", "failed", "void")
})
export type Invoice = typeof Invoice.Type
const invoiceView = projection(Invoice)

/** What the admin API lists: an invoice still on its first attempt, or of an empty month, is not shown. */
export const publicInvoice = (r: InvoiceRecord): Option.Option<Invoice> =>
  r.status === "open" || r.status === "empty" ? Option.none() : Option.some(invoiceView({ ...r, status: r.status }))

/** The idempotency key of an invoice's attempt `n` (1-based): asked again after a crash, it collects at most once. */
export const attemptKey = (invoiceId: string, attempt: number) => `invoice_${invoiceId}_${attempt}`

/** One attempt, claimed by one process. */
export interface ClaimedAttempt {
  readonly invoice: InvoiceRecord
  /** The attempt's number: the same as before when an expired attempt is resumed. */
  readonly attempt: number
}

/** How an attempt ended. */
export type AttemptOutcome =
  | { readonly _tag: "paid"; readonly paymentId: string }
  | { readonly _tag: "failed"; readonly nextAttemptAt: string | null }
  | { readonly _tag: "void" }

export interface InvoiceStore {
  /**
   * Makes the invoice of a workspace's month unless it exists (another process, an earlier round):
   * answers it when this call made it. Lines of zero make it `empty`.
   */
  readonly create: (
    invoice: Omit<InvoiceRecord, "createdAt" | "updatedAt">
  ) => Effect.Effect<Option.Option<InvoiceRecord>>
  /**
   * Up to `limit` workspaces that may renew (a plan, billed by card, not canceled), created before
   * the month their clock (`now` plus their offset) is in, and without that month's invoice; with
   * that offset.
   */
  readonly unbilled: (
    now: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<{ readonly workspaceId: string; readonly offsetMs: number }>>
  /**
   * Claims up to `limit` attempts: new ones that fell due (`open` or `failed` with `nextAttemptAt`
   * at or before the workspace's clock, `now` plus its offset), each counted and leased until
   * `leaseUntil`; and attempts whose lease ran out (a process died between its charge and its
   * settlement), resumed with their number, so their key is asked again. One claim per attempt
   * across processes.
   */
  readonly claim: (now: number, leaseUntil: string, limit: number) => Effect.Effect<ReadonlyArray<ClaimedAttempt>>
  /** Settles attempt `attempt` if it is still the one in flight; answers the invoice, or none when it was settled already. */
  readonly settle: (
    workspaceId: string,
    invoiceId: string,
    attempt: number,
    outcome: AttemptOutcome,
    at: string
  ) => Effect.Effect<Option.Option<InvoiceRecord>>
  /** Makes a `failed` invoice due now (an operator's "pay now"); none when it is not failed. */
  readonly dueNow: (workspaceId: string, invoiceId: string, at: string) => Effect.Effect<Option.Option<InvoiceRecord>>
  readonly get: (workspaceId: string, invoiceId: string) => Effect.Effect<Option.Option<InvoiceRecord>>
  /** Newest month first. */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<InvoiceRecord>>
}
export const InvoiceStore = Context.GenericTag<InvoiceStore>("core/InvoiceStore")
