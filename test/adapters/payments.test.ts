/** The simulated payment processor (CONTRACT.md): collects unless `cardDeclines`, refunds, records per workspace. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, TestClock } from "effect"
import * as Simulated from "../../adapters/payments/simulated.ts"
import { Payments } from "../../core/billing/payments.ts"
import { defaultBilling } from "../../core/workspaces/model.ts"

const workspace = (cardDeclines = false) => ({
  id: crypto.randomUUID(),
  billing: { ...defaultBilling, paymentMethod: true, cardDeclines }
})

describe("simulated payments", () => {
  it.effect("collects a charge and records it for its workspace only", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2024-06-19T10:00:00.000Z"))
      const payments = yield* Payments
      const recorded = yield* Simulated.SimulatedPayments
      const ws = workspace()
      const payment = yield* payments.charge(ws, 200, "Local number +14155550100, prorated 12/30 days")
      assert.deepStrictEqual(payment, {
        id: payment.id,
        workspaceId: ws.id,
        amountCents: 200,
        description: "Local number +14155550100, prorated 12/30 days",
        createdAt: "2024-06-19T10:00:00.000Z"
      })
      const second = yield* payments.charge(ws, 1000, "Toll-free number +18005550100, prorated 30/30 days")
      assert.deepStrictEqual(yield* recorded.charges(ws.id), [{ ...payment, refunded: false }, {
        ...second,
        refunded: false
      }])
      assert.deepStrictEqual(yield* recorded.charges(workspace().id), [])
    }).pipe(Effect.provide(Simulated.layer)))

  it.effect("a declining card fails with 'Your card was declined' and collects nothing", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const recorded = yield* Simulated.SimulatedPayments
      const ws = workspace(true)
      const error = yield* Effect.flip(payments.charge(ws, 500, "Local number +14155550100, prorated 30/30 days"))
      assert.strictEqual(error._tag, "FailedPrecondition")
      assert.strictEqual(error.message, "Your card was declined")
      assert.deepStrictEqual(yield* recorded.charges(ws.id), [])
      // the same workspace once its card works again
      yield* payments.charge({ ...ws, billing: { ...ws.billing, cardDeclines: false } }, 500, "retry")
      assert.strictEqual((yield* recorded.charges(ws.id)).length, 1)
    }).pipe(Effect.provide(Simulated.layer)))

  it.effect("a refund marks that payment only, and refunding twice changes nothing", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const recorded = yield* Simulated.SimulatedPayments
      const ws = workspace()
      const kept = yield* payments.charge(ws, 100, "kept")
      const returned = yield* payments.charge(ws, 200, "returned")
      yield* payments.refund(returned)
      yield* payments.refund(returned)
      assert.deepStrictEqual(
        (yield* recorded.charges(ws.id)).map((c) => [c.id, c.refunded]),
        [[kept.id, false], [returned.id, true]]
      )
    }).pipe(Effect.provide(Simulated.layer)))

  it.effect("an amount that is not a positive integer of cents is a defect, not a charge", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const recorded = yield* Simulated.SimulatedPayments
      const ws = workspace()
      for (const amount of [0, -500, 12.5, Number.NaN]) {
        const exit = yield* Effect.exit(payments.charge(ws, amount, "bad"))
        assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Die", String(amount))
      }
      assert.deepStrictEqual(yield* recorded.charges(ws.id), [])
    }).pipe(Effect.provide(Simulated.layer)))
})
