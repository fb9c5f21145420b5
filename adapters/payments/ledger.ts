/**
 * `PAYMENTS=ledger` (CONTRACT.md): for an operator who bills nobody. Every charge is recorded in the
 * ledger by the purchase or invoice that asked for it, and none is ever declined; nothing leaves the
 * process. A payment's id is its idempotency key, so asking again answers the same payment.
 */
import { Effect, Layer } from "effect"
import { checkAmount, Payments } from "../../core/billing/payments.ts"
import { nowIso } from "../../core/kernel/time.ts"

export const layer: Layer.Layer<Payments> = Layer.succeed(
  Payments,
  Payments.of({
    charge: ({ workspace, amountCents, description, idempotencyKey }) =>
      Effect.zipRight(
        checkAmount(amountCents),
        Effect.map(nowIso, (createdAt) => ({
          id: `ledger_${idempotencyKey}`,
          workspaceId: workspace.id,
          amountCents,
          description,
          createdAt
        }))
      ),
    refund: () => Effect.void
  })
)
