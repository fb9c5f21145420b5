/**
 * The payments port (CONTRACT.md "Billing cycle and payments"): the simulator and the ledger adapter.
 * The Stripe adapter has its own suite against the fake Stripe.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, TestClock } from "effect"
import * as LedgerPayments from "../../adapters/payments/ledger.ts"
import * as Simulated from "../../adapters/payments/simulated.ts"
import { Payments } from "../../core/billing/payments.ts"
import { defaultBilling } from "../../core/workspaces/model.ts"

const workspace = (cardDeclines = false) => ({
  id: crypto.randomUUID(),
  billing: { ...defaultBilling, paymentMethod: true, cardDeclines }
})

const request = (ws: ReturnType<typeof workspace>, amountCents: number, description: string, key?: string) => ({
  workspace: ws,
  amountCents,
  description,
  idempotencyKey: key ?? crypto.randomUUID(),
  metadata: { workspaceId: ws.id }
})

describe("simulated payments", () => {
  it.effect("collects a charge and records it for its workspace only", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2024-06-19T10:00:00.000Z"))
      const payments = yield* Payments
      const recorded = yield* Simulated.SimulatedPayments
      const ws = workspace()
      const payment = yield* payments.charge(request(ws, 200, "Local number +14155550100, prorated 12/30 days"))
      assert.deepStrictEqual(payment, {
        id: payment.id,
        workspaceId: ws.id,
        amountCents: 200,
        description: "Local number +14155550100, prorated 12/30 days",
        createdAt: "2024-06-19T10:00:00.000Z"
      })
      const second = yield* payments.charge(request(ws, 1000, "Toll-free number +18005550100, prorated 30/30 days"))
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
      const error = yield* Effect.flip(payments.charge(request(ws, 500, "Local number, prorated 30/30 days")))
      assert.strictEqual(error.reason, "declined")
      assert.strictEqual(error.message, "Your card was declined")
      assert.deepStrictEqual(yield* recorded.charges(ws.id), [])
      // the same workspace once its card works again, with a new key
      yield* payments.charge(request({ ...ws, billing: { ...ws.billing, cardDeclines: false } }, 500, "retry"))
      assert.strictEqual((yield* recorded.charges(ws.id)).length, 1)
    }).pipe(Effect.provide(Simulated.layer)))

  it.effect("a key asked again answers its first outcome and collects once, a decline included", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const recorded = yield* Simulated.SimulatedPayments
      const ws = workspace()
      const first = yield* payments.charge(request(ws, 700, "once", "key-1"))
      const again = yield* payments.charge(request(ws, 700, "once", "key-1"))
      assert.strictEqual(again.id, first.id)
      assert.strictEqual((yield* recorded.charges(ws.id)).length, 1)
      const declining = workspace(true)
      yield* Effect.flip(payments.charge(request(declining, 700, "no", "key-2")))
      // the card works now, but the key's answer stays the decline, as Stripe replays it
      const replay = yield* Effect.flip(
        payments.charge(request({ ...declining, billing: defaultBilling }, 700, "no", "key-2"))
      )
      assert.strictEqual(replay.reason, "declined")
    }).pipe(Effect.provide(Simulated.layer)))

  it.effect("a refund marks that payment only, and refunding twice changes nothing", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const recorded = yield* Simulated.SimulatedPayments
      const ws = workspace()
      const kept = yield* payments.charge(request(ws, 100, "kept"))
      const returned = yield* payments.charge(request(ws, 200, "returned"))
      yield* payments.refund(returned)
      yield* payments.refund(returned)
      assert.deepStrictEqual(
        (yield* recorded.charges(ws.id)).map((c) => [c.id, c.refunded]),
        [[kept.id, false], [returned.id, true]]
      )
    }).pipe(Effect.provide(Simulated.layer)))
})

describe.each(
  [
    ["simulated", Simulated.layer],
    ["ledger", LedgerPayments.layer]
  ] as const
)("payments (%s)", (_name, layer) => {
  it.effect("an amount that is not a positive integer of cents is a defect, not a charge", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const ws = workspace()
      for (const amount of [0, -500, 12.5, Number.NaN]) {
        const exit = yield* Effect.exit(payments.charge(request(ws, amount, "bad")))
        assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Die", String(amount))
      }
    }).pipe(Effect.provide(layer)))

  it.effect("the same key answers the same payment", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const ws = workspace()
      const a = yield* payments.charge(request(ws, 1500, "Plan standard, December 2026", "inv-1"))
      const b = yield* payments.charge(request(ws, 1500, "Plan standard, December 2026", "inv-1"))
      const c = yield* payments.charge(request(ws, 1500, "Plan standard, December 2026", "inv-2"))
      assert.strictEqual(a.id, b.id)
      assert.notStrictEqual(a.id, c.id)
    }).pipe(Effect.provide(layer)))
})

describe("ledger payments", () => {
  it.effect("never declines, whatever the billing state says", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const payment = yield* payments.charge(request(workspace(true), 400, "Messaging add-on"))
      assert.strictEqual(payment.amountCents, 400)
      yield* payments.refund(payment)
    }).pipe(Effect.provide(LedgerPayments.layer)))
})
