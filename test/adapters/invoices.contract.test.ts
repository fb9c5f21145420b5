/**
 * The InvoiceStore contract on memory, PGlite and Postgres: one invoice per workspace and month;
 * an attempt claimed once however many claim at the same time; an expired claim resumed with the
 * same attempt (so the same idempotency key), a settled one never; the workspaces due on their own
 * clocks; a failed invoice made due again, and only a failed one.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { type InvoiceRecord, InvoiceStore } from "../../core/billing/invoices.ts"
import { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { type Billing, defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { uuid } from "./stores.contract.ts"

const billed: Billing = { ...defaultBilling, trial: false, paymentMethod: true }

const newWorkspace = (billing: Billing = billed) =>
  Effect.gen(function*() {
    const id = uuid()
    yield* (yield* WorkspaceStore).insert({
      id,
      name: "W",
      billing,
      ...defaultTexting,
      createdAt: new Date(0).toISOString()
    })
    return id
  })

const JAN = Date.parse("2030-01-01T00:00:00.000Z")
const FEB = Date.parse("2030-02-01T00:00:00.000Z")

const invoice = (workspaceId: string, periodStart = JAN): Omit<InvoiceRecord, "createdAt" | "updatedAt"> => ({
  id: uuid(),
  workspaceId,
  periodStart: new Date(periodStart).toISOString(),
  periodEnd: new Date(FEB).toISOString(),
  status: "open",
  amountCents: 1500,
  currency: "USD",
  lines: [{ kind: "plan", description: "Plan standard, January 2030", amountCents: 1500, numberE164: null }],
  attempts: 0,
  charging: false,
  leaseUntil: null,
  nextAttemptAt: new Date(periodStart).toISOString(),
  paymentId: null
})

const iso = (ms: number) => new Date(ms).toISOString()

const contract = (name: string, stores: Layer.Layer<any, unknown>) =>
  layer(stores, { timeout: 60_000 })(name, (it) => {
    it.effect("one invoice per workspace and month", () =>
      Effect.gen(function*() {
        const store = yield* InvoiceStore
        const ws = yield* newWorkspace()
        const made = yield* store.create(invoice(ws))
        assert.isTrue(Option.isSome(made))
        assert.isTrue(Option.isNone(yield* store.create(invoice(ws))))
        assert.isTrue(Option.isSome(yield* store.create(invoice(ws, FEB))))
        const listed = yield* store.list(ws)
        assert.deepStrictEqual(listed.map((i) => i.periodStart), [iso(FEB), iso(JAN)])
        assert.deepStrictEqual(listed[1], Option.getOrThrow(made))
        assert.deepStrictEqual(yield* store.list(yield* newWorkspace()), [])
      }))

    it.effect("an attempt is claimed once by concurrent claimers, resumed with its number after its lease, settled once", () =>
      Effect.gen(function*() {
        const store = yield* InvoiceStore
        const ws = yield* newWorkspace()
        const { id } = Option.getOrThrow(yield* store.create(invoice(ws)))
        const now = JAN + 1000
        const claims = yield* Effect.all(
          Array.from({ length: 6 }, () => store.claim(now, iso(now + 60_000), 100)),
          { concurrency: "unbounded" }
        )
        const mine = claims.flat().filter((c) => c.invoice.id === id)
        assert.deepStrictEqual(mine.map((c) => c.attempt), [1])
        // Within the lease nobody else gets it; after, it is resumed as attempt 1 again.
        assert.isFalse((yield* store.claim(now + 30_000, iso(now + 90_000), 100)).some((c) => c.invoice.id === id))
        const resumed = (yield* store.claim(now + 61_000, iso(now + 121_000), 100)).filter((c) => c.invoice.id === id)
        assert.deepStrictEqual(resumed.map((c) => c.attempt), [1])
        // A stale attempt number settles nothing; the right one settles once.
        assert.isTrue(Option.isNone(yield* store.settle(ws, id, 2, { _tag: "paid", paymentId: "pi_1" }, iso(now))))
        const paid = yield* store.settle(ws, id, 1, { _tag: "paid", paymentId: "pi_1" }, iso(now))
        assert.deepStrictEqual(
          Option.map(paid, (i) => [i.status, i.charging, i.paymentId, i.nextAttemptAt]),
          Option.some(["paid", false, "pi_1", null])
        )
        assert.isTrue(Option.isNone(yield* store.settle(ws, id, 1, { _tag: "paid", paymentId: "pi_2" }, iso(now))))
        assert.isFalse((yield* store.claim(now + 999_999, iso(now + 1_999_999), 100)).some((c) => c.invoice.id === id))
      }))

    it.effect("a failed attempt comes due on the workspace's clock as a new attempt; pay-now only for a failed invoice", () =>
      Effect.gen(function*() {
        const store = yield* InvoiceStore
        const ws = yield* newWorkspace()
        const { id } = Option.getOrThrow(yield* store.create(invoice(ws)))
        const now = JAN + 1000
        yield* store.claim(now, iso(now + 60_000), 100)
        const retryAt = JAN + 3 * 86_400_000
        yield* store.settle(ws, id, 1, { _tag: "failed", nextAttemptAt: iso(retryAt) }, iso(now))
        assert.isFalse((yield* store.claim(now + 5000, iso(now + 65_000), 100)).some((c) => c.invoice.id === id))
        // Three days ahead on the workspace's clock, not in real time.
        yield* (yield* WorkspaceClock).advance(ws, 3 * 86_400_000)
        const second = (yield* store.claim(now + 5000, iso(now + 65_000), 100)).filter((c) => c.invoice.id === id)
        assert.deepStrictEqual(second.map((c) => c.attempt), [2])
        assert.isTrue(Option.isNone(yield* store.dueNow(ws, id, iso(now)))) // in flight, not failed
        yield* store.settle(ws, id, 2, { _tag: "failed", nextAttemptAt: null }, iso(now))
        const due = yield* store.dueNow(ws, id, iso(now))
        assert.deepStrictEqual(Option.map(due, (i) => i.nextAttemptAt), Option.some(iso(now)))
        assert.isTrue(Option.isNone(yield* store.dueNow(uuid(), id, iso(now)))) // another workspace's
      }))

    it.effect("the workspaces due: renewing ones without this month's invoice on their own clock", () =>
      Effect.gen(function*() {
        const store = yield* InvoiceStore
        const due = yield* newWorkspace()
        const invoiced = yield* newWorkspace()
        const canceled = yield* newWorkspace({ ...billed, subscription: "canceled" })
        const appStore = yield* newWorkspace({ ...billed, billedVia: "app_store" })
        const noPlan = yield* newWorkspace({ ...billed, plan: null })
        yield* store.create(invoice(invoiced, FEB))
        const ahead = yield* newWorkspace()
        yield* store.create(invoice(ahead, FEB))
        yield* (yield* WorkspaceClock).advance(ahead, 31 * 86_400_000) // in March on its clock
        // Created this month: its first month was prorated at purchase, nothing renews yet.
        const fresh = uuid()
        yield* (yield* WorkspaceStore).insert({
          id: fresh,
          name: "New",
          billing: billed,
          ...defaultTexting,
          createdAt: iso(FEB + 500)
        })
        const found = (yield* store.unbilled(FEB + 1000, 10_000)).map((w) => w.workspaceId)
        assert.isFalse(found.includes(fresh))
        assert.isTrue(found.includes(due))
        assert.isTrue(found.includes(ahead))
        for (const ws of [invoiced, canceled, appStore, noPlan]) assert.isFalse(found.includes(ws), ws)
        const offset = (yield* store.unbilled(FEB + 1000, 10_000)).find((w) => w.workspaceId === ahead)!.offsetMs
        assert.strictEqual(offset, 31 * 86_400_000)
      }))
  })

contract("InvoiceStore: memory", MemoryStores.layer)

sqlContract({ name: (db) => `InvoiceStore: ${db}`, adapter: sqlStores, suite: contract, database: "invoices" })
