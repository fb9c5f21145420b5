/**
 * The billing cycle (CONTRACT.md "Billing cycle and payments"). Every workspace with a plan, billed
 * by card and not canceled, renews on the first of each month (UTC, on its clock): one invoice with
 * a line per renewing item, one charge, a ledger row per line, a receipt mailed to the owner.
 *
 * Once per workspace and month across processes: the invoice of a month is unique, and each charge
 * attempt is claimed by one process (`InvoiceStore.claim`). An attempt's charge runs outside any
 * transaction with the key `attemptKey(invoice, n)`; its outcome is settled in a transaction with
 * the ledger rows and the subscription. A process that dies between the two leaves the attempt
 * claimed: once the claim's lease runs out another process asks the provider again with the same key
 * (the same payment, nothing collected twice) and settles it.
 *
 * A declined attempt makes the subscription `past_due`, with retries 3 and 7 days after the first
 * decline; the third decline cancels it. A paid invoice makes it `active` again. Each outcome is
 * mailed to the owner and audit-logged. After downtime the months missed since the last paid
 * invoice are invoiced one by one.
 */
import { Context, Effect, Either, Layer, Option } from "effect"
import { AuditLog } from "../audit/store.ts"
import { NotFound } from "../kernel/errors.ts"
import { Ids, isUuid } from "../kernel/ids.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { Mailer, sendMail } from "../mail/mailer.ts"
import { NumberStore } from "../numbers/model.ts"
import { RegistrationStore } from "../registration/store.ts"
import { WorkspaceClock, workspaceNow } from "../workspaces/clock.ts"
import type { Billing, Workspace } from "../workspaces/model.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import {
  attemptKey,
  type AttemptOutcome,
  type ClaimedAttempt,
  type InvoiceLine,
  type InvoiceRecord,
  InvoiceStore,
  publicInvoice
} from "./invoices.ts"
import { CURRENCY } from "./ledger.ts"
import { type PaymentEvents, type PaymentFailed, paymentFailed, Payments } from "./payments.ts"
import { PendingCharges } from "./pending.ts"
import { isProration, prices } from "./pricing.ts"
import { LedgerStore } from "./store.ts"

const DAY_MS = 86_400_000
/** Declined attempts are retried this long after the first decline; the last one's decline cancels. */
export const RETRY_AFTER_DAYS = [3, 7] as const
/** How long an attempt's claim lasts by default: beyond the provider's call with its own retries. */
export const ATTEMPT_LEASE_MS = 120_000
/** Months invoiced at most in one catch-up. */
const MAX_CATCH_UP = 12

/** The first instant (UTC) of the month of `ms`, and of the `plus`th month after. */
export const monthStart = (ms: number, plus = 0): Date => {
  const d = new Date(ms)
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + plus, 1))
}

/** A month's invoice, not yet charged: due at `dueAt` when it bills something (`open`), else `empty` or `void`. */
const monthInvoice = (
  workspaceId: string,
  start: Date,
  lines: ReadonlyArray<InvoiceLine>,
  status: "open" | "empty" | "void",
  dueAt: string | null
) =>
  Effect.map(Ids, ({ uuid }): Omit<InvoiceRecord, "createdAt" | "updatedAt"> => ({
    id: uuid(),
    workspaceId,
    periodStart: start.toISOString(),
    periodEnd: monthStart(start.getTime(), 1).toISOString(),
    status,
    amountCents: lines.reduce((sum, l) => sum + l.amountCents, 0),
    currency: CURRENCY,
    lines,
    attempts: 0,
    charging: false,
    leaseUntil: null,
    nextAttemptAt: dueAt,
    paymentId: null
  }))

const monthName = (iso: string) =>
  new Date(iso).toLocaleString("en-US", { month: "long", year: "numeric", timeZone: "UTC" })

const dollars = (cents: number) => `${(cents / 100).toFixed(2)} USD`

/** Held by every change of a workspace's billing state made here, so none overwrites another. */
export const billingLock = (workspaceId: string) => `billing:${workspaceId}`

/** Whether the workspace renews: a plan, billed by card (an app store bills its own), not canceled. */
export const renews = (billing: Billing) =>
  billing.plan !== null && billing.billedVia === "card" && billing.subscription !== "canceled"

const make = Effect.gen(function*() {
  const invoices = yield* InvoiceStore
  const workspaces = yield* WorkspaceStore
  const numbers = yield* NumberStore
  const registrations = yield* RegistrationStore
  const ledger = yield* LedgerStore
  const payments = yield* Payments
  const pendingCharges = yield* PendingCharges
  const audit = yield* AuditLog
  const tx = yield* Transactor
  const clock = yield* WorkspaceClock
  const mailer = yield* Mailer
  const wsNow = (workspaceId: string) => Effect.provideService(workspaceNow(workspaceId), WorkspaceClock, clock)

  /**
   * What renews for the month starting `periodStart`: the plan (not on a trial), each local number
   * after the first the plan includes, each toll-free line, and each local number's messaging add-on
   * once a live campaign is active. An item already charged since the month began (bought, filed or
   * approved during it, and prorated then) is not billed again for it.
   */
  const linesFor = (workspace: Workspace, periodStart: string) =>
    Effect.gen(function*() {
      const ws = workspace.id
      const chargedThisMonth = new Set(
        (yield* ledger.list(ws)).filter((c) => c.createdAt >= periodStart && isProration(c)).map((c) =>
          `${c.kind} ${c.numberE164}`
        )
      )
      const fresh = (line: InvoiceLine) => !chargedThisMonth.has(`${line.kind} ${line.numberE164}`)
      const month = monthName(periodStart)
      const held = (yield* numbers.listActive(ws)).filter((n) => n.ordered)
      const local = held.filter((n) => n.number.type === "local")
      const registration = yield* registrations.get(ws)
      const texting = Option.exists(registration, (r) => !r.mock && r.step === "campaign_active")
      const lines: Array<InvoiceLine> = [
        ...(workspace.billing.trial || workspace.billing.plan === null ? [] : [{
          kind: "plan" as const,
          description: `Plan ${workspace.billing.plan}, ${month}`,
          amountCents: prices.planMonthly,
          numberE164: null
        }]),
        ...local.slice(1).map((n) => ({
          kind: "local_number" as const,
          description: `Local number ${n.number.e164}, ${month}`,
          amountCents: prices.localNumberMonthly,
          numberE164: n.number.e164
        })),
        ...held.filter((n) => n.number.type === "toll_free").map((n) => ({
          kind: "toll_free_number" as const,
          description: `Toll-free number ${n.number.e164}, ${month}`,
          amountCents: prices.tollFreeMonthly,
          numberE164: n.number.e164
        })),
        ...(texting ? local : []).map((n) => ({
          kind: "messaging_addon" as const,
          description: `Messaging add-on for ${n.number.e164}, ${month}`,
          amountCents: prices.messagingMonthly,
          numberE164: n.number.e164
        }))
      ]
      return lines.filter(fresh)
    })

  /** Makes the invoices a workspace is due: this month's, and the months missed since its last paid one. */
  const invoiceWorkspace = (workspace: Workspace, now: number) =>
    Effect.gen(function*() {
      const current = monthStart(now)
      const last = yield* invoices.list(workspace.id)
      const lastPaid = last.find((i) => i.status !== "failed" && i.status !== "void")
      const created = monthStart(Date.parse(workspace.createdAt), 1)
      // A workspace's first month is prorated at purchase; catch-up never reaches past a failed or
      // void invoice (a cancellation in between), nor further back than MAX_CATCH_UP months.
      const from = lastPaid === undefined || last[0] !== lastPaid
        ? current
        : monthStart(Date.parse(lastPaid.periodStart), 1)
      const periods: Array<Date> = []
      for (let m = 0; m < MAX_CATCH_UP; m++) {
        const start = monthStart(current.getTime(), -m)
        if (start < from || start < created) break
        periods.unshift(start)
      }
      for (const start of periods) {
        const lines = yield* linesFor(workspace, start.toISOString())
        const bills = lines.some((l) => l.amountCents > 0)
        yield* invoices.create(
          yield* monthInvoice(
            workspace.id,
            start,
            lines,
            bills ? "open" : "empty",
            bills ? new Date(now).toISOString() : null
          )
        )
      }
    })

  const ownerMail = (workspace: Workspace, subject: string, text: string) =>
    workspace.billing.ownerEmail === null
      ? Effect.logWarning("Billing: the workspace has no owner email (billing.ownerEmail)", subject)
      : sendMail(workspace.id, { to: workspace.billing.ownerEmail, subject, text }).pipe(
        Effect.provideService(Mailer, mailer),
        Effect.catchAll((e) => Effect.logWarning("Billing: a mail to the owner was not sent", e.message))
      )

  const lineText = (i: InvoiceRecord) => [
    ...i.lines.map((l) => `  ${l.description}: ${dollars(l.amountCents)}`),
    `  Total: ${dollars(i.amountCents)}`
  ]

  /** Settles an attempt's outcome with its ledger rows, subscription and audit entry; then mails the owner. */
  const settle = (claimed: ClaimedAttempt, outcome: Either.Either<string, PaymentFailed> | "void") =>
    Effect.gen(function*() {
      const failure = outcome !== "void" && Either.isLeft(outcome) ? outcome.left : null
      const { attempt, invoice } = claimed
      const ws = invoice.workspaceId
      const now = yield* wsNow(ws)
      const at = new Date(now).toISOString()
      const result: AttemptOutcome = outcome === "void"
        ? { _tag: "void" }
        : Either.isRight(outcome)
        ? { _tag: "paid", paymentId: outcome.right }
        : {
          _tag: "failed",
          nextAttemptAt: attempt <= RETRY_AFTER_DAYS.length
            ? new Date(now + (RETRY_AFTER_DAYS[attempt - 1]! - (RETRY_AFTER_DAYS[attempt - 2] ?? 0)) * DAY_MS)
              .toISOString()
            : null
        }
      const done = yield* tx.withTransaction(
        Effect.gen(function*() {
          const settled = yield* invoices.settle(ws, invoice.id, attempt, result, yield* nowIso)
          if (Option.isNone(settled)) return Option.none()
          const workspace = Option.getOrThrow(yield* workspaces.get(ws))
          const subscription = result._tag === "paid"
            ? "active"
            : result._tag === "failed"
            ? (result.nextAttemptAt === null ? "canceled" : "past_due")
            : workspace.billing.subscription
          const updated = { ...workspace, billing: { ...workspace.billing, subscription } } as Workspace
          if (subscription !== workspace.billing.subscription) yield* workspaces.update(updated)
          if (result._tag === "paid") yield* ledger.append(ws, invoice.lines, at)
          // Paid after the subscription was canceled: the months it was canceled are not owed, and
          // no catch-up reaches back into them.
          if (result._tag === "paid" && workspace.billing.subscription === "canceled") {
            for (let m = 1; monthStart(Date.parse(invoice.periodStart), m).getTime() <= now; m++) {
              yield* invoices.create(
                yield* monthInvoice(ws, monthStart(Date.parse(invoice.periodStart), m), [], "void", null)
              )
            }
          }
          yield* audit.append(ws, {
            actor: "system",
            action: `billing.invoice.${result._tag}`,
            detail: {
              invoiceId: invoice.id,
              periodStart: invoice.periodStart,
              amountCents: invoice.amountCents,
              attempt,
              ...(result._tag === "failed" ? { reason: failure?.reason, nextAttemptAt: result.nextAttemptAt } : {})
            }
          })
          if (subscription === "canceled" && workspace.billing.subscription !== "canceled") {
            yield* audit.append(ws, {
              actor: "system",
              action: "billing.subscription.canceled",
              detail: { invoiceId: invoice.id, attempts: attempt }
            })
          }
          return Option.some({ invoice: settled.value, workspace: updated })
        }),
        billingLock(ws)
      )
      if (Option.isNone(done)) return
      const { invoice: settled, workspace } = done.value
      const month = monthName(settled.periodStart)
      if (result._tag === "paid") {
        yield* ownerMail(
          workspace,
          `Your Switchboard receipt for ${month}`,
          [
            `We charged ${dollars(settled.amountCents)} to the card on file for ${month}:`,
            ...lineText(settled)
          ].join("\n")
        )
      } else if (result._tag === "failed") {
        yield* ownerMail(
          workspace,
          result.nextAttemptAt === null
            ? `Your Switchboard subscription is canceled`
            : `Your payment for ${month} failed`,
          [
            `We could not charge ${dollars(settled.amountCents)} for ${month}: ${failure?.message}.`,
            ...lineText(settled),
            "",
            result.nextAttemptAt === null
              ? "That was the last attempt: the subscription is canceled. Paying the invoice reactivates it."
              : `We will try again on ${result.nextAttemptAt.slice(0, 10)}. Update the card on file before then.`
          ].join("\n")
        )
      }
    })

  /** Charges one claimed attempt (outside any transaction) and settles it; an unanswered charge is left to its lease. */
  const chargeAttempt = (claimed: ClaimedAttempt) =>
    Effect.gen(function*() {
      const { attempt, invoice } = claimed
      const workspace = Option.getOrThrow(yield* workspaces.get(invoice.workspaceId))
      if (workspace.billing.plan === null || workspace.billing.billedVia !== "card") {
        return yield* settle(claimed, "void")
      }
      const outcome = yield* Effect.either(payments.charge({
        workspace,
        amountCents: invoice.amountCents,
        description: `Switchboard, ${monthName(invoice.periodStart)}`,
        idempotencyKey: attemptKey(invoice.id, attempt),
        metadata: { workspaceId: invoice.workspaceId, invoiceId: invoice.id, attempt: String(attempt) }
      }))
      if (Either.isLeft(outcome) && outcome.left.reason === "unavailable") {
        yield* Effect.logWarning("Billing: the payment provider did not answer; the attempt is asked again later")
        return
      }
      yield* settle(claimed, Either.map(outcome, (p) => p.id))
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logError("Billing: an invoice attempt failed unexpectedly", cause)),
      Effect.annotateLogs({ workspaceId: claimed.invoice.workspaceId, invoiceId: claimed.invoice.id })
    )

  /**
   * One round: pending charges whose purchase died, the invoices workspaces are due, then up to
   * `limit` attempts, each claimed just before its charge: claims taken together would share one
   * lease, and the later ones' could run out while the earlier ones are charged, so that another
   * process would ask the same keys while this one still means to. With `sole` (no other process can
   * be charging: the embedded database), claims and pending charges left by the last run are taken
   * over at once. Answers whether more may wait.
   */
  const round = (limit: number, sole = false, leaseMs = ATTEMPT_LEASE_MS) =>
    Effect.gen(function*() {
      yield* pendingCharges.recover(limit, { all: sole })
      const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
      const due = yield* invoices.unbilled(now, limit)
      for (const { offsetMs, workspaceId } of due) {
        const workspace = yield* workspaces.get(workspaceId)
        if (Option.isSome(workspace) && renews(workspace.value.billing)) {
          yield* invoiceWorkspace(workspace.value, now + offsetMs)
        }
      }
      if (sole) {
        const claimed = yield* invoices.claim(Number.POSITIVE_INFINITY, new Date(now + leaseMs).toISOString(), limit)
        yield* Effect.forEach(claimed, chargeAttempt, { discard: true })
        return due.length === limit || claimed.length === limit
      }
      let charged = 0
      for (; charged < limit; charged++) {
        const at = yield* Effect.clockWith((c) => c.currentTimeMillis)
        const [next] = yield* invoices.claim(at, new Date(at + leaseMs).toISOString(), 1)
        if (next === undefined) break
        yield* chargeAttempt(next)
      }
      return due.length === limit || charged === limit
    })

  /** An operator's "pay now": a failed invoice (retrying or given up) is charged again within a round. */
  const payNow = (workspaceId: string, invoiceId: string) =>
    Effect.gen(function*() {
      if (!isUuid(invoiceId)) return yield* new NotFound({ message: `No invoice ${invoiceId} in this workspace` })
      const at = new Date(yield* wsNow(workspaceId)).toISOString()
      const due = yield* invoices.dueNow(workspaceId, invoiceId, at)
      if (Option.isSome(due)) return Option.getOrThrow(publicInvoice(due.value))
      const found = yield* invoices.get(workspaceId, invoiceId)
      return yield* Option.isNone(found) || Option.isNone(publicInvoice(found.value))
        ? new NotFound({ message: `No invoice ${invoiceId} in this workspace` })
        : new NotFound({
          message: `Invoice ${invoiceId} is ${found.value.status}: only a failed invoice can be paid again`
        })
    })

  const list = (workspaceId: string) =>
    Effect.map(invoices.list(workspaceId), (all) => all.flatMap((i) => Option.toArray(publicInvoice(i))))

  /** A provider reported an attempt's outcome on its own (Stripe's webhook): settles it if it is still in flight. */
  const reported = (metadata: Readonly<Record<string, string>>, outcome: Either.Either<string, PaymentFailed>) =>
    Effect.gen(function*() {
      const { attempt, invoiceId, workspaceId } = metadata
      if (invoiceId === undefined || workspaceId === undefined || attempt === undefined) return
      const invoice = yield* invoices.get(workspaceId, invoiceId)
      if (Option.isNone(invoice) || !invoice.value.charging || String(invoice.value.attempts) !== attempt) return
      yield* settle({ invoice: invoice.value, attempt: Number(attempt) }, outcome)
    })

  const events: Pick<PaymentEvents, "paymentSucceeded" | "paymentFailed"> = {
    paymentSucceeded: (metadata, paymentId) => reported(metadata, Either.right(paymentId)),
    paymentFailed: (metadata, reason) => reported(metadata, Either.left(paymentFailed(reason)))
  }

  return { round, payNow, list, linesFor, events } as const
})

export class BillingCycle extends Context.Tag("core/BillingCycle")<
  BillingCycle,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(BillingCycle, make)
