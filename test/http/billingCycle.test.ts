/**
 * CONTRACT.md "Billing cycle and payments" through the HTTP API, on real Postgres when the suite has
 * one (PGlite otherwise), with the workspace clock moved month by month (the `clock` test helper) and
 * the cycle's rounds run by hand: a workspace that buys numbers, files, is approved, adds a toll-free
 * line mid-month, has its card declined and recovers, against a table computed by hand; and one
 * whose retries run out, canceled, then paid again.
 */
import { Clock, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SimulatedPayments } from "../../adapters/payments/simulated.ts"
import { BillingCycle } from "../../core/billing/cycle.ts"
import { InvoiceStore } from "../../core/billing/invoices.ts"
import { PaymentEvents } from "../../core/billing/payments.ts"
import type { makeTestApp } from "../support/app.ts"
import { business, readyBilling } from "../support/registration.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { bearer } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let app: App
let close: () => Promise<void>
beforeAll(async () => {
  ;({ app, close } = await makeSqlTestApp("billing_cycle_http"))
}, 60_000)
afterAll(() => close())

const ok = async (res: Response, status = 200) => {
  expect(res.status, await res.clone().text()).toBe(status)
  return (await res.json()) as any
}
const post = (token: string, path: string, json?: unknown) =>
  app.fetch(`/v1/api${path}`, { method: "POST", headers: bearer(token), ...(json === undefined ? {} : { json }) })
const admin = async (path: string, init: RequestInit & { json?: unknown } = {}, status = 200) =>
  ok(await app.admin(path, init), status)

/** One round of the billing worker, as it runs every few seconds in the server. */
const round = () => app.runtime.runPromise(Effect.flatMap(BillingCycle, (c) => c.round(25)))

interface Ws {
  readonly workspaceId: string
  readonly live: string
  readonly test: string
  offsetSeconds: number
}

const workspace = async (billing: Record<string, unknown>): Promise<Ws> => {
  const { workspaceId } = await app.createWorkspace("Billed", billing)
  const live = (await app.createKey(workspaceId, { kind: "live" })).token
  const test = (await app.createKey(workspaceId, { kind: "test" })).token
  return { workspaceId, live, test, offsetSeconds: 0 }
}

/** Moves the workspace's clock forward to `iso` (the dates are years ahead, so any day the suite runs works). */
const moveTo = async (ws: Ws, iso: string) => {
  let seconds = Math.ceil((Date.parse(iso) - (Date.now() + ws.offsetSeconds * 1000)) / 1000)
  expect(seconds).toBeGreaterThan(0)
  while (seconds > 0) {
    // The helper moves at most a year at a time.
    const step = Math.min(seconds, 365 * 86_400)
    ws.offsetSeconds = (await ok(await post(ws.test, "/test-helpers/clock", { advanceSeconds: step }))).clock
      .offsetSeconds
    seconds -= step
  }
}

const billing = async (ws: Ws) => (await admin(`/workspaces/${ws.workspaceId}`)).workspace.billing
const setBilling = (ws: Ws, patch: Record<string, unknown>) =>
  admin(`/workspaces/${ws.workspaceId}`, { method: "PATCH", json: { billing: patch } })
const invoices = async (ws: Ws) => (await admin(`/workspaces/${ws.workspaceId}/invoices`)).invoices as Array<any>
const ledger = async (ws: Ws) => (await admin(`/workspaces/${ws.workspaceId}/ledger`)).charges as Array<any>
const actions = async (ws: Ws) =>
  ((await admin(`/workspaces/${ws.workspaceId}/audit-log`)).entries as Array<any>).map((e) => e.action).reverse()
const subjects = async (ws: Ws) =>
  ((await admin(`/workspaces/${ws.workspaceId}/mail`)).mail as Array<any>).map((m) => m.subject).reverse()
const collected = async (ws: Ws) =>
  (await app.runtime.runPromise(Effect.flatMap(SimulatedPayments, (p) => p.charges(ws.workspaceId))))
    .filter((c) => !c.refunded).map((c) => c.amountCents)

const available = async (ws: Ws, type: "local" | "toll_free", n: number) => {
  const found = await ok(
    await app.fetch(`/v1/api/numbers/available?type=${type}&limit=${n}`, { headers: bearer(ws.live) })
  )
  return (found.available as Array<{ phone_number: string }>).map((a) => a.phone_number)
}
const buy = async (ws: Ws, e164: string) => ok(await post(ws.live, "/numbers", { phoneNumber: e164 }), 201)

/** The rows a month's invoice writes to the ledger, as [kind, number, cents]. */
const rows = (charges: Array<any>) => charges.map((c) => [c.kind, c.numberE164, c.amountCents])

describe("the billing cycle, month by month", () => {
  it("renews a workspace that buys, files, is approved, adds a line mid-month, is declined and recovers", async () => {
    const ws = await workspace({ ...readyBilling, trial: true })
    // January 2030, on a trial with nothing bought: the month has nothing to bill, and lists nothing.
    await moveTo(ws, "2030-01-10T12:00:00Z")
    await round()
    expect(await invoices(ws)).toEqual([])

    // Jan 10: the included local number (0), then a second (500 × 22/31 days = 355).
    const [a, b] = await available(ws, "local", 2)
    await buy(ws, a!)
    await buy(ws, b!)
    // Jan 12: the filing ends the trial: the plan (1500 × 20/31 = 968) and two setups (2000 each),
    // one charge. The simulated registry accepts and approves on the next two reads: the add-on of
    // each local number starts (400 × 20/31 = 258 each), one charge.
    await moveTo(ws, "2030-01-12T12:00:00Z")
    await ok(await post(ws.live, "/messaging/registration", { business, acknowledge_trial_end: true }), 201)
    await ok(await post(ws.live, "/messaging/refresh"))
    expect((await ok(await post(ws.live, "/messaging/refresh"))).messaging.step).toBe("campaign_active")

    // Feb 1: the first renewal, every item whole.
    await moveTo(ws, "2030-02-01T12:00:00Z")
    await round()
    const [feb] = await invoices(ws)
    expect(feb).toMatchObject({
      periodStart: "2030-02-01T00:00:00.000Z",
      periodEnd: "2030-03-01T00:00:00.000Z",
      status: "paid",
      amountCents: 2800,
      currency: "USD",
      attempts: 1
    })
    expect(rows(feb.lines).sort()).toEqual(
      [
        ["plan", null, 1500],
        ["local_number", b, 500],
        ["messaging_addon", a, 400],
        ["messaging_addon", b, 400]
      ].sort()
    )
    expect(feb.lines.find((l: any) => l.kind === "plan").description).toBe("Plan standard, February 2030")

    // Feb 15: a toll-free line, 1000 × 14/28 = 500.
    await moveTo(ws, "2030-02-15T12:00:00Z")
    const [t] = await available(ws, "toll_free", 1)
    await buy(ws, t!)

    // Mar 1: the card declines: past_due, retried on Mar 4 and Mar 8 (3 and 7 days after).
    await setBilling(ws, { cardDeclines: true })
    await moveTo(ws, "2030-03-01T12:00:00Z")
    await round()
    const [marFailed] = await invoices(ws)
    expect(marFailed).toMatchObject({ status: "failed", amountCents: 3800, attempts: 1 })
    expect((await billing(ws)).subscription).toBe("past_due")
    await moveTo(ws, "2030-03-04T11:00:00Z")
    await round()
    expect((await invoices(ws))[0].attempts).toBe(1) // not due before Mar 4 12:00
    await moveTo(ws, "2030-03-04T12:01:00Z")
    await round()
    expect((await invoices(ws))[0]).toMatchObject({ status: "failed", attempts: 2 })
    expect((await billing(ws)).subscription).toBe("past_due")
    // The owner updates the card; the third attempt, on Mar 8, pays.
    await setBilling(ws, { cardDeclines: false })
    await moveTo(ws, "2030-03-08T12:02:00Z")
    await round()
    const [mar] = await invoices(ws)
    expect(mar).toMatchObject({ periodStart: "2030-03-01T00:00:00.000Z", status: "paid", amountCents: 3800 })
    expect(mar.attempts).toBe(3)
    expect((await billing(ws)).subscription).toBe("active")

    // Apr 1: renews the same 3800. A round run twice in a month, or again, invoices nothing more.
    await moveTo(ws, "2030-04-01T12:00:00Z")
    await round()
    await round()
    const all = await invoices(ws)
    expect(all.map((i) => [i.periodStart.slice(0, 7), i.status, i.amountCents, i.attempts])).toEqual([
      ["2030-04", "paid", 3800, 1],
      ["2030-03", "paid", 3800, 3],
      ["2030-02", "paid", 2800, 1]
    ])

    // The ledger, oldest first, against the table computed by hand.
    const table: Array<[string, string | null, number]> = [
      ["local_number", a!, 0],
      ["local_number", b!, 355],
      ["plan", null, 968],
      ["texting_setup", a!, 2000],
      ["texting_setup", b!, 2000],
      ["messaging_addon", a!, 258],
      ["messaging_addon", b!, 258],
      ...rows(feb.lines) as Array<[string, string | null, number]>,
      ["toll_free_number", t!, 500],
      ...rows(mar.lines) as Array<[string, string | null, number]>,
      ...rows(all[0].lines) as Array<[string, string | null, number]>
    ]
    const written = (await ledger(ws)).reverse()
    expect(written.map((c) => c.amountCents)).toEqual(table.map((r) => r[2]))
    expect(rows(written).map(([kind, e164]) => `${kind} ${e164}`).sort()).toEqual(
      table.map(([kind, e164]) => `${kind} ${e164}`).sort()
    )
    expect(written.reduce((s, c) => s + c.amountCents, 0)).toBe(16739)
    expect(rows(mar.lines).sort()).toEqual(
      [
        ["plan", null, 1500],
        ["local_number", b, 500],
        ["toll_free_number", t, 1000],
        ["messaging_addon", a, 400],
        ["messaging_addon", b, 400]
      ].sort()
    )
    // What the card paid: the purchases, the filing, the add-ons, and one charge per renewal.
    expect(await collected(ws)).toEqual([355, 4968, 516, 2800, 500, 3800, 3800])

    const billingActions = (await actions(ws)).filter((x) => x.startsWith("billing."))
    expect(billingActions).toEqual([
      "billing.invoice.paid",
      "billing.invoice.failed",
      "billing.invoice.failed",
      "billing.invoice.paid",
      "billing.invoice.paid"
    ])
    expect((await subjects(ws)).filter((s) => !s.includes("registration"))).toEqual([
      "Your Switchboard receipt for February 2030",
      "Your payment for March 2030 failed",
      "Your payment for March 2030 failed",
      "Your Switchboard receipt for March 2030",
      "Your Switchboard receipt for April 2030"
    ])
  }, 120_000)

  it(
    "cancels after the last retry, stops invoicing, and a payment reactivates it without billing the canceled month",
    async () => {
      const ws = await workspace({ ...readyBilling, cardDeclines: true })
      await moveTo(ws, "2031-02-01T12:00:00Z")
      await round()
      await moveTo(ws, "2031-02-04T12:01:00Z")
      await round()
      await moveTo(ws, "2031-02-08T12:02:00Z")
      await round()
      const [feb] = await invoices(ws)
      expect(feb).toMatchObject({ status: "failed", amountCents: 1500, attempts: 3 })
      expect((await billing(ws)).subscription).toBe("canceled")
      expect((await actions(ws)).slice(-2)).toEqual(["billing.invoice.failed", "billing.subscription.canceled"])
      expect((await subjects(ws)).at(-1)).toBe("Your Switchboard subscription is canceled")
      // No more attempts, and no invoice while canceled.
      await moveTo(ws, "2031-03-02T12:00:00Z")
      await round()
      expect((await invoices(ws)).map((i) => i.periodStart.slice(0, 7))).toEqual(["2031-02"])

      // The owner fixes the card and the operator charges the invoice again.
      await setBilling(ws, { cardDeclines: false })
      const due = await admin(`/workspaces/${ws.workspaceId}/invoices/${feb.id}/pay`, { method: "POST" }, 202)
      expect(due.invoice).toMatchObject({ id: feb.id, status: "failed" })
      await round()
      expect((await billing(ws)).subscription).toBe("active")
      // March was canceled: void, never charged. April renews.
      await moveTo(ws, "2031-04-01T12:00:00Z")
      await round()
      expect((await invoices(ws)).map((i) => [i.periodStart.slice(0, 7), i.status, i.amountCents])).toEqual([
        ["2031-04", "paid", 1500],
        ["2031-03", "void", 0],
        ["2031-02", "paid", 1500]
      ])
      expect(await collected(ws)).toEqual([1500, 1500])
      // Only a failed invoice can be paid again.
      const refused = await app.admin(`/workspaces/${ws.workspaceId}/invoices/${feb.id}/pay`, { method: "POST" })
      expect(refused.status).toBe(404)
    },
    120_000
  )

  it("catches up the months a stopped cycle missed, each invoiced and charged once", async () => {
    const ws = await workspace({ ...readyBilling, plan: "standard" })
    await moveTo(ws, "2034-01-02T12:00:00Z")
    await round()
    // Down from January to April: the months in between are invoiced, one by one, once.
    await moveTo(ws, "2034-04-03T12:00:00Z")
    await round()
    await round()
    expect((await invoices(ws)).map((i) => [i.periodStart.slice(0, 7), i.status, i.amountCents])).toEqual([
      ["2034-04", "paid", 1500],
      ["2034-03", "paid", 1500],
      ["2034-02", "paid", 1500],
      ["2034-01", "paid", 1500]
    ])
    expect(await collected(ws)).toEqual([1500, 1500, 1500, 1500])
    expect((await ledger(ws)).filter((c) => c.kind === "plan")).toHaveLength(4)
  })

  it("settles an attempt whose process died from the provider's own report (Stripe's webhook), once", async () => {
    const ws = await workspace({ ...readyBilling, subscription: "past_due" })
    await moveTo(ws, "2035-06-01T12:00:00Z")
    // The cycle made the invoice and claimed its first attempt, and its process died before settling.
    const claimed = await app.runtime.runPromise(Effect.gen(function*() {
      const store = yield* InvoiceStore
      yield* store.create({
        id: crypto.randomUUID(),
        workspaceId: ws.workspaceId,
        periodStart: "2035-06-01T00:00:00.000Z",
        periodEnd: "2035-07-01T00:00:00.000Z",
        status: "open",
        amountCents: 1500,
        currency: "USD",
        lines: [{ kind: "plan", description: "Plan standard, June 2035", amountCents: 1500, numberE164: null }],
        attempts: 0,
        charging: false,
        leaseUntil: null,
        nextAttemptAt: "2035-06-01T00:00:00.000Z",
        paymentId: null
      })
      const now = yield* Clock.currentTimeMillis
      return (yield* store.claim(now, new Date(now + 60_000).toISOString(), 100)).find((c) =>
        c.invoice.workspaceId === ws.workspaceId
      )!
    }))
    const metadata = { workspaceId: ws.workspaceId, invoiceId: claimed.invoice.id, attempt: "1" }
    const report = Effect.flatMap(PaymentEvents, (e) => e.paymentSucceeded(metadata, "pi_reported"))
    await app.runtime.runPromise(report)
    await app.runtime.runPromise(report)
    expect((await invoices(ws)).map((i) => [i.status, i.attempts])).toEqual([["paid", 1]])
    expect((await ledger(ws)).map((c) => [c.kind, c.amountCents])).toEqual([["plan", 1500]])
    expect((await billing(ws)).subscription).toBe("active")
    // A report for an attempt not in flight changes nothing.
    await app.runtime.runPromise(
      Effect.flatMap(PaymentEvents, (e) => e.paymentFailed({ ...metadata, attempt: "2" }, "declined"))
    )
    expect((await invoices(ws))[0].status).toBe("paid")
  })

  it("does not invoice a workspace billed through an app store, nor one without a plan", async () => {
    const store = await workspace({ plan: "standard", trial: false, billedVia: "app_store", paymentMethod: true })
    const none = await workspace({ plan: null, trial: false, paymentMethod: true })
    for (const ws of [store, none]) await moveTo(ws, "2032-05-01T12:00:00Z")
    await round()
    expect(await invoices(store)).toEqual([])
    expect(await invoices(none)).toEqual([])
  })

  it("waives a purchase whose prorated total is under the 50-cent minimum charge", async () => {
    const ws = await workspace({ ...readyBilling, ownerEmail: null })
    await moveTo(ws, "2033-01-31T12:00:00Z")
    const [a, b] = await available(ws, "local", 2)
    await buy(ws, a!)
    await buy(ws, b!) // 500 × 1/31 = 16 cents
    const [row] = await ledger(ws)
    expect(row).toMatchObject({ numberE164: b, amountCents: 0 })
    expect(row.description).toBe(`Local number ${b}, prorated 1/31 days, waived (under the 50-cent minimum charge)`)
    expect(await collected(ws)).toEqual([])
  })
})
