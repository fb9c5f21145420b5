/**
 * The payments port: money collected from the workspace's card on file (CONTRACT.md "Billing cycle
 * and payments"). Adapters: the simulator, the ledger (records, never declines) and Stripe.
 *
 * No charge runs inside a database transaction that holds a workspace lock: a purchase reserves its
 * charge first (core/billing/pending.ts), charges, then records what it bought and settles the
 * reservation in a second transaction; the billing cycle does the same with its invoices
 * (core/billing/cycle.ts). A charge is asked with an idempotency key that names that reservation or
 * invoice attempt, so asking again after a crash or a timeout answers the same payment and never
 * collects twice.
 */
import { Context, Effect, Schema } from "effect"
import { FailedPrecondition } from "../kernel/errors.ts"
import type { Workspace } from "../workspaces/model.ts"

/** Money collected for one charge. */
export interface Payment {
  /** The provider's id for it (a Stripe PaymentIntent id). */
  readonly id: string
  readonly workspaceId: string
  readonly amountCents: number
  readonly description: string
  readonly createdAt: string
}

export interface ChargeRequest {
  readonly workspace: Pick<Workspace, "id" | "billing">
  /** A positive integer of US cents. */
  readonly amountCents: number
  readonly description: string
  /**
   * The same key always answers the same outcome and collects at most once (Stripe's
   * Idempotency-Key): a pending charge's id, or an invoice's id and attempt.
   */
  readonly idempotencyKey: string
  /** Kept with the payment (Stripe metadata), so the provider's own events can be matched to it. */
  readonly metadata: Readonly<Record<string, string>>
}

/** Why a charge collected nothing. */
export class PaymentFailed extends Schema.TaggedError<PaymentFailed>()("PaymentFailed", {
  /**
   * `declined` and `authentication_required` are the card's answer; `unavailable` means the provider
   * did not answer, so the outcome is unknown until the same key is asked again.
   */
  reason: Schema.Literal("declined", "authentication_required", "unavailable"),
  message: Schema.String
}) {}

export const paymentMessages = {
  declined: "Your card was declined",
  authentication_required:
    "Your card was declined: the bank asks the card holder to authenticate this payment; add the card again through the payment method setup",
  unavailable: "The payment provider did not answer; nothing is recorded as paid. Try again in a minute"
} as const

export const paymentFailed = (reason: PaymentFailed["reason"]) =>
  new PaymentFailed({ reason, message: paymentMessages[reason] })

/** A failed charge as the API answers it: 409 with the card's message. */
export const asPrecondition = (e: PaymentFailed) => new FailedPrecondition({ message: e.message })

export interface Payments {
  /**
   * Collects `amountCents` from the workspace's card, at most once per `idempotencyKey`. A
   * non-positive or fractional amount is a defect: a price of 0 is simply not charged.
   */
  readonly charge: (request: ChargeRequest) => Effect.Effect<Payment, PaymentFailed>
  /** Returns a collected payment in full; refunding it again changes nothing. */
  readonly refund: (payment: Payment) => Effect.Effect<void, PaymentFailed>
}
export const Payments = Context.GenericTag<Payments>("core/Payments")

/** The adapters' check of `charge`'s amount. */
export const checkAmount = (amountCents: number): Effect.Effect<void> =>
  Number.isSafeInteger(amountCents) && amountCents > 0
    ? Effect.void
    : Effect.dieMessage(`Payments.charge needs a positive integer amount of cents, got ${amountCents}`)

/**
 * What a provider reports on its own (Stripe's webhooks), handed to the billing state: a card set up,
 * and a payment's outcome matched by the metadata its charge carried (core/billing/cycle.ts).
 */
export interface PaymentEvents {
  /** The workspace's card is set up: `billing.paymentMethod` becomes true. */
  readonly paymentMethodAdded: (workspaceId: string) => Effect.Effect<void>
  /** A charge asked with `metadata` was collected (again: answering twice changes nothing). */
  readonly paymentSucceeded: (metadata: Readonly<Record<string, string>>, paymentId: string) => Effect.Effect<void>
  /** A charge asked with `metadata` failed. */
  readonly paymentFailed: (
    metadata: Readonly<Record<string, string>>,
    reason: PaymentFailed["reason"]
  ) => Effect.Effect<void>
}
export const PaymentEvents = Context.GenericTag<PaymentEvents>("core/PaymentEvents")
