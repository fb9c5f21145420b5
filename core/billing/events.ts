/**
 * PaymentEvents (core/billing/payments.ts): what a payment provider's webhooks report, applied to
 * the billing state. A card set up turns `billing.paymentMethod` on; a charge's outcome is only
 * logged for now, as the charge's own caller already recorded it (`paymentSucceeded` and
 * `paymentFailed` below are where the billing cycle's invoices will take it).
 */
import { Effect, Layer, Option } from "effect"
import { AuditLog } from "../audit/store.ts"
import { Transactor } from "../kernel/transactor.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import { PaymentEvents, type PaymentFailed } from "./payments.ts"

/** A charge the provider reports collected. */
export const paymentSucceeded = (metadata: Readonly<Record<string, string>>, paymentId: string) =>
  Effect.logInfo("Payment provider: charge collected").pipe(Effect.annotateLogs({ paymentId, ...metadata }))

/** A charge the provider reports failed. */
export const paymentFailed = (metadata: Readonly<Record<string, string>>, reason: PaymentFailed["reason"]) =>
  Effect.logInfo("Payment provider: charge failed").pipe(Effect.annotateLogs({ reason, ...metadata }))

export const layer = Layer.effect(
  PaymentEvents,
  Effect.gen(function*() {
    const workspaces = yield* WorkspaceStore
    const audit = yield* AuditLog
    const tx = yield* Transactor
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
          })
        ),
      paymentSucceeded,
      paymentFailed
    })
  })
)
