/**
 * The payments port: money collected from the workspace's card on file (CONTRACT.md: "Charges go
 * through a payments port; its simulator declines when `cardDeclines` is true").
 *
 * A purchase runs in this order, so that a declined card leaves nothing behind and a charge is never
 * written without the change it pays for:
 *   1. the gates (`numberPurchaseGate`), then the price (`numberCharge`), from the billing state read
 *      before anything is done;
 *   2. `Payments.charge`, outside any transaction: it calls the outside world, and a decline fails
 *      here, before anything is stored (skipped for a price of 0 and for test keys);
 *   3. one `Transactor.withTransaction`: the state change (insert the number), `LedgerStore.append`
 *      of the same charge, and `EventOutbox.append` of its events, which commit together;
 *   4. if that transaction fails after a collected charge, `Payments.refund` it, so a failed purchase
 *      costs nothing.
 */
import { Context, Effect } from "effect"
import { FailedPrecondition } from "../kernel/errors.ts"
import type { Workspace } from "../workspaces/model.ts"

/** Money collected for one charge. */
export interface Payment {
  readonly id: string
  readonly workspaceId: string
  readonly amountCents: number
  readonly description: string
  readonly createdAt: string
}

export const cardDeclined = new FailedPrecondition({ message: "Your card was declined" })

export interface Payments {
  /**
   * Collects `amountCents` (a positive integer, in US cents) from the workspace's card. A declined
   * card fails with `cardDeclined` and collects nothing. A non-positive or fractional amount is a
   * defect: a price of 0 is simply not charged.
   */
  readonly charge: (
    workspace: Pick<Workspace, "id" | "billing">,
    amountCents: number,
    description: string
  ) => Effect.Effect<Payment, FailedPrecondition>
  /** Returns a collected payment in full; refunding it again changes nothing. */
  readonly refund: (payment: Payment) => Effect.Effect<void>
}
export const Payments = Context.GenericTag<Payments>("core/Payments")

/** The adapters' check of `charge`'s amount. */
export const checkAmount = (amountCents: number): Effect.Effect<void> =>
  Number.isSafeInteger(amountCents) && amountCents > 0
    ? Effect.void
    : Effect.dieMessage(`Payments.charge needs a positive integer amount of cents, got ${amountCents}`)
