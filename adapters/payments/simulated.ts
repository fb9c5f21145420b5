/**
 * The simulated payment processor (CONTRACT.md): a charge succeeds unless the workspace's billing
 * state says `cardDeclines`. It keeps what it collected and refunded, for tests and the test helpers.
 */
import { Context, Effect, Layer, Ref } from "effect"
import { cardDeclined, checkAmount, type Payment, Payments } from "../../core/billing/payments.ts"
import { Ids } from "../../core/kernel/ids.ts"
import { nowIso } from "../../core/kernel/time.ts"

export interface SimulatedCharge extends Payment {
  readonly refunded: boolean
}

/** What the simulator collected. */
export class SimulatedPayments extends Context.Tag("adapters/payments/SimulatedPayments")<
  SimulatedPayments,
  {
    /** The workspace's charges, oldest first, refunded ones marked. */
    readonly charges: (workspaceId: string) => Effect.Effect<ReadonlyArray<SimulatedCharge>>
  }
>() {}

/** `Payments` and the simulator's record of it, sharing one state. */
export const layer: Layer.Layer<Payments | SimulatedPayments> = Layer.effectContext(
  Effect.gen(function*() {
    const collected = yield* Ref.make<ReadonlyArray<SimulatedCharge>>([])
    const payments = Payments.of({
      charge: (workspace, amountCents, description) =>
        Effect.gen(function*() {
          yield* checkAmount(amountCents)
          if (workspace.billing.cardDeclines) return yield* cardDeclined
          const payment: Payment = {
            id: (yield* Ids).uuid(),
            workspaceId: workspace.id,
            amountCents,
            description,
            createdAt: yield* nowIso
          }
          yield* Ref.update(collected, (all) => [...all, { ...payment, refunded: false }])
          return payment
        }),
      refund: (payment) =>
        Ref.update(collected, (all) => all.map((c) => (c.id === payment.id ? { ...c, refunded: true } : c)))
    })
    const record = SimulatedPayments.of({
      charges: (workspaceId) =>
        Effect.map(Ref.get(collected), (all) => all.filter((c) => c.workspaceId === workspaceId))
    })
    return Context.make(Payments, payments).pipe(Context.add(SimulatedPayments, record))
  })
)
