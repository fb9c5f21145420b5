/**
 * PaymentEvents (core/billing/payments.ts): what a payment provider's webhooks report, applied to
 * the billing state. A card set up turns `billing.paymentMethod` on; a charge's outcome settles the
 * invoice attempt it was for when that attempt is still in flight (its process died or timed out:
 * core/billing/cycle.ts). A purchase's charge needs nothing: its pending charge is settled by the
 * purchase or by recovery (core/billing/pending.ts).
 */
import { Effect, Layer, Option } from "effect"
import { AuditLog } from "../audit/store.ts"
import { Transactor } from "../kernel/transactor.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import { BillingCycle, billingLock } from "./cycle.ts"
import { PaymentEvents } from "./payments.ts"

export const layer = Layer.effect(
  PaymentEvents,
  Effect.gen(function*() {
    const workspaces = yield* WorkspaceStore
    const audit = yield* AuditLog
    const tx = yield* Transactor
    const cycle = yield* BillingCycle
    return PaymentEvents.of({
      paymentMethodAdded: (workspaceId) =>
        tx.withTransaction(
          Effect.gen(function*() {
            const found = yield* workspaces.get(workspaceId)
            // A customer whose workspace is gone (another database, a test account's): nothing to set.
            if (Option.isNone(found)) {
              return yield* Effect.logWarning("Payment provider: a card was set up for an unknown workspace").pipe(
                Effect.annotateLogs({ workspaceId })
              )
            }
            const workspace = found.value
            yield* workspaces.update({ ...workspace, billing: { ...workspace.billing, paymentMethod: true } })
            yield* audit.append(workspaceId, { actor: "system", action: "billing.payment_method.added", detail: {} })
          }),
          billingLock(workspaceId)
        ),
      paymentSucceeded: cycle.events.paymentSucceeded,
      paymentFailed: cycle.events.paymentFailed
    })
  })
)
