/**
 * A month's invoice paid in a later month (an operator's "pay now" after its retries were spent)
 * writes its ledger rows then; the later month still renews its plan: a renewal of an earlier month
 * is not an item "already charged since the month began" (core/billing/cycle.ts `linesFor`).
 */
import { afterAll, describe, expect, it } from "vitest"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { until } from "../support/until.ts"

const closers: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const close of closers) await close()
})

const monthStart = (ms: number, plus = 0) => {
  const d = new Date(ms)
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + plus, 1))
}

describe("an invoice paid in a later month", () => {
  it("the later month's invoice still bills the plan", async () => {
    const { app, close } = await makeSqlTestApp("billing_late", { billingWorker: true })
    closers.push(close)
    const { key, workspaceId } = await app.createWorkspace("Late payer", {
      plan: "standard",
      trial: false,
      subscription: "active",
      paymentMethod: true,
      cardDeclines: true,
      ownerEmail: "owner@example.com"
    })
    const json = async (res: Response, status = 200) => {
      const text = await res.text()
      expect(res.status, text).toBe(status)
      return JSON.parse(text)
    }
    const clock = async (advanceSeconds: number) =>
      (await json(
        await app.fetch("/v1/api/test-helpers/clock", {
          method: "POST",
          headers: { authorization: `Bearer ${key}` },
          json: { advanceSeconds }
        })
      )).clock.now as string
    /** Moves the clock to `ms` on the workspace's own time (it is ahead of real time). */
    const moveTo = async (ms: number) => clock(Math.ceil((ms - Date.parse(await clock(1))) / 1000))
    const invoices = async () => (await json(await app.admin(`/workspaces/${workspaceId}/invoices`))).invoices
    const subscription = async () =>
      (await json(await app.admin(`/workspaces/${workspaceId}`))).workspace.billing.subscription as string

    // The first month declines three times (the first of the month, then 3 and 7 days later): canceled.
    const first = monthStart(Date.now(), 1)
    await moveTo(first.getTime() + 3_600_000)
    await until("the first decline", async () => (await invoices())[0]?.attempts === 1 ? true : undefined, 30_000, 20)
    await moveTo(first.getTime() + 3 * 86_400_000 + 7_200_000)
    await until("the second decline", async () => (await invoices())[0]?.attempts === 2 ? true : undefined, 30_000, 20)
    await moveTo(first.getTime() + 7 * 86_400_000 + 10_800_000)
    await until("canceled", async () => (await subscription()) === "canceled" ? true : undefined, 30_000, 20)

    // The next month, the card works again and the operator pays the first month's invoice.
    await json(
      await app.admin(`/workspaces/${workspaceId}`, { method: "PATCH", json: { billing: { cardDeclines: false } } })
    )
    const second = monthStart(first.getTime(), 1)
    await moveTo(second.getTime() + 3_600_000)
    const [owed] = await invoices()
    expect(owed).toMatchObject({ periodStart: first.toISOString(), status: "failed", attempts: 3 })
    await json(await app.admin(`/workspaces/${workspaceId}/invoices/${owed.id}/pay`, { method: "POST" }), 202)

    // Paid, active again: the second month renews the plan, in full.
    const listed = await until(
      "the second month's invoice",
      async () => {
        const all = await invoices()
        return all.length === 2 && all[0].status === "paid" ? all : undefined
      },
      30_000,
      20
    )
    expect(listed.map((i: any) => [i.periodStart, i.status, i.amountCents])).toEqual([
      [second.toISOString(), "paid", 1500],
      [first.toISOString(), "paid", 1500]
    ])
    const plans = (await json(await app.admin(`/workspaces/${workspaceId}/ledger`))).charges
      .filter((c: any) => c.kind === "plan")
    expect(plans).toHaveLength(2)
  })
})
