/**
 * A round of the billing cycle claims each attempt just before its charge (core/billing/cycle.ts
 * `round`), so the lease of an attempt it has not reached yet cannot run out while it works through
 * the others: another process polling then finds those attempts open, claims them as its own, and
 * this round leaves them alone. No attempt is asked by two live processes. Each charge takes three
 * quarters of the lease on a TestClock; the other process polls at the end of each charge.
 */
import { Clock, Effect, Layer, TestClock, TestContext } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { monthStart } from "../../core/billing/cycle.ts"
import { BillingCycle } from "../../core/billing/cycle.ts"
import { attemptKey, InvoiceStore } from "../../core/billing/invoices.ts"
import { Payments } from "../../core/billing/payments.ts"
import { makeTestApp } from "../support/app.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"

const LEASE_MS = 60_000
const INVOICES = 4

const closers: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const close of closers) await close()
})

const roundLeavesOthersAlone = async (
  make: (payments: Layer.Layer<Payments>) => Promise<Awaited<ReturnType<typeof makeTestApp>>>
) => {
  // The keys each "process" asked Stripe for.
  const asked: Array<{ by: "round" | "other"; key: string }> = []
  let store: InvoiceStore | null = null
  /** Another process polling at `at`: what it claims, it charges. */
  const other = (at: number) =>
    Effect.map(store!.claim(at, new Date(at + LEASE_MS).toISOString(), INVOICES), (claimed) => {
      for (const c of claimed) asked.push({ by: "other", key: attemptKey(c.invoice.id, c.attempt) })
    })
  const payments = Layer.succeed(
    Payments,
    Payments.of({
      charge: (request) =>
        Effect.gen(function*() {
          asked.push({ by: "round", key: request.idempotencyKey })
          yield* TestClock.adjust(LEASE_MS * 0.75)
          yield* other(yield* Clock.currentTimeMillis)
          return {
            id: `pay_${request.idempotencyKey}`,
            workspaceId: request.workspace.id,
            amountCents: request.amountCents,
            description: request.description,
            createdAt: new Date().toISOString()
          }
        }),
      refund: () => Effect.void
    })
  )
  const app = await make(payments)
  const run = <A>(effect: Effect.Effect<A, unknown, BillingCycle | InvoiceStore>) => app.runtime.runPromise(effect)
  store = await run(InvoiceStore)

  // Invoices due now, of workspaces created this month (so the round makes none of its own).
  const periodStart = monthStart(Date.now()).toISOString()
  const ids: Array<string> = []
  for (let i = 0; i < INVOICES; i++) {
    const { workspaceId } = await app.createWorkspace(`Due ${i}`, {
      plan: "standard",
      trial: false,
      subscription: "active",
      paymentMethod: true
    })
    const id = crypto.randomUUID()
    ids.push(id)
    await run(Effect.flatMap(InvoiceStore, (s) =>
      s.create({
        id,
        workspaceId,
        periodStart,
        periodEnd: monthStart(Date.now(), 1).toISOString(),
        status: "open",
        amountCents: 1500,
        currency: "USD",
        lines: [{ kind: "plan", description: "Plan standard", amountCents: 1500, numberE164: null }],
        attempts: 0,
        charging: false,
        leaseUntil: null,
        nextAttemptAt: new Date(Date.now() - 1000).toISOString(),
        paymentId: null
      })))
  }
  await run(
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      yield* (yield* BillingCycle).round(INVOICES, false, LEASE_MS)
    }).pipe(Effect.provide(TestContext.TestContext))
  )

  // The round charged the first; polling at its end, the other took the rest as fresh claims (had the
  // round claimed them all at once, their lease would have run out during its second charge, and
  // both would ask their keys), and the round left them.
  const byRound = asked.filter((a) => a.by === "round").map((a) => a.key)
  const byOther = asked.filter((a) => a.by === "other").map((a) => a.key)
  expect(byRound).toHaveLength(1)
  expect(byOther).toHaveLength(INVOICES - 1)
  expect(byOther.filter((k) => byRound.includes(k)), "asked by both processes").toEqual([])
  expect(new Set([...byRound, ...byOther])).toEqual(new Set(ids.map((id) => attemptKey(id, 1))))
}

describe("a billing round claims each attempt just before its charge", () => {
  it("memory stores: attempts not reached yet are left to another process, not asked twice", async () => {
    await roundLeavesOthersAlone(async (payments) => {
      const app = await makeTestApp({ payments })
      closers.push(app.close)
      return app
    })
  })

  it("SQL stores: the same", async () => {
    await roundLeavesOthersAlone(async (payments) => {
      const { app, close } = await makeSqlTestApp("billing_leases", { payments })
      closers.push(close)
      return app
    })
  })
})
