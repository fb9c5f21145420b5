/**
 * The simulated payment processor (CONTRACT.md): a charge succeeds unless the workspace's billing
 * state says `cardDeclines`. It keeps what it collected and refunded, for tests and the test helpers.
 * Like Stripe, a key asked again answers its first outcome, a decline included, and never collects
 * twice; the record lives in this process only.
 */
import { Context, Effect, Either, Layer, Ref } from "effect"
import { checkAmount, type Payment, type PaymentFailed, paymentFailed, Payments } from "../../core/billing/payments.ts"
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
    const answered = new Map<string, Either.Either<Payment, PaymentFailed>>()
    const payments = Payments.of({
      charge: ({ workspace, amountCents, description, idempotencyKey }) =>
        Effect.gen(function*() {
          yield* checkAmount(amountCents)
          const before = answered.get(idempotencyKey)
          if (before !== undefined) return yield* before
          const outcome: Either.Either<Payment, PaymentFailed> = workspace.billing.cardDeclines
            ? Either.left(paymentFailed("declined"))
            : Either.right({
              id: (yield* Ids).uuid(),
              workspaceId: workspace.id,
              amountCents,
              description,
              createdAt: yield* nowIso
            })
          answered.set(idempotencyKey, outcome)
          if (Either.isRight(outcome)) {
            yield* Ref.update(collected, (all) => [...all, { ...outcome.right, refunded: false }])
          }
          return yield* outcome
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
