/**
 * core/billing/pending.ts, with the PendingChargeStore on memory, PGlite and Postgres, and Effect's
 * TestClock: a purchase whose process dies between its charge and its commit is refunded once its
 * lease runs out, never charged twice (asking the provider again with the same key answers the same
 * payment); a fee whose item was already recorded is written to the ledger instead; the purchase
 * that comes back late cannot settle what recovery took over; one purchase per purpose at a time.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as SimulatedPayments from "../../adapters/payments/simulated.ts"
import type { Charge } from "../../core/billing/ledger.ts"
import { paymentFailed, Payments } from "../../core/billing/payments.ts"
import * as Pending from "../../core/billing/pending.ts"
import { LedgerStore } from "../../core/billing/store.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { uuid } from "./stores.contract.ts"

const newWorkspace = (cardDeclines = false) =>
  Effect.gen(function*() {
    const id = uuid()
    yield* (yield* WorkspaceStore).insert({
      id,
      name: "W",
      billing: { ...defaultBilling, trial: false, paymentMethod: true, cardDeclines },
      ...defaultTexting,
      createdAt: new Date(0).toISOString()
    })
    return id
  })

const charge = (amountCents: number, e164 = "+14155550100" as E164): Charge => ({
  kind: "local_number",
  description: `Local number ${e164}, prorated 20/31 days`,
  amountCents,
  numberE164: e164
})

const workspaceOf = (id: string) => Effect.map(Effect.flatMap(WorkspaceStore, (w) => w.get(id)), Option.getOrThrow)

/** Steps 1 and 2 of a purchase (reserve under a transaction, charge outside it), then the process "dies". */
const chargeThenDie = (ws: string, purpose: string, kind: Pending.PendingKind, charges: ReadonlyArray<Charge>) =>
  Effect.gen(function*() {
    const pending = yield* Pending.PendingCharges
    const tx = yield* Transactor
    const reserved = yield* tx.withTransaction(
      pending.reserve(ws, { purpose, kind, charges, at: "2030-01-12T12:00:00.000Z", busy: purpose })
    )
    // The purchase's own calls "succeed" and its process dies before the transaction that settles.
    const payment = yield* pending.fulfil(yield* workspaceOf(ws), reserved, (paid) => Effect.succeed(paid))
    return { reserved, payment }
  })

const collected = (ws: string) => Effect.flatMap(SimulatedPayments.SimulatedPayments, (p) => p.charges(ws))

const afterLease = TestClock.adjust(Pending.LEASE_MS + 1)

const contract = (name: string, stores: Layer.Layer<any, unknown>) =>
  layer(
    Pending.layer.pipe(Layer.provideMerge(SimulatedPayments.layer), Layer.provideMerge(stores)),
    { timeout: 60_000 }
  )(name, (it) => {
    it.effect("a purchase that died after its charge is refunded once its lease runs out, and only once", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace()
        const { payment } = yield* chargeThenDie(ws, "number:+14155550100", "purchase", [charge(355)])
        assert.isTrue(Option.isSome(payment))
        const pending = yield* Pending.PendingCharges
        // Within the lease the purchase may still settle: recovery leaves it.
        assert.strictEqual(yield* pending.recover(10), 0)
        yield* afterLease
        assert.strictEqual(yield* pending.recover(10), 1)
        const charges = yield* collected(ws)
        assert.deepStrictEqual(charges.map((c) => [c.amountCents, c.refunded]), [[355, true]])
        assert.deepStrictEqual(yield* (yield* LedgerStore).list(ws), [])
        // Nothing left to recover, and the purpose is free again.
        yield* afterLease
        assert.strictEqual(yield* pending.recover(10), 0)
        assert.deepStrictEqual(yield* pending.pending(ws, "number:"), [])
      }))

    it.effect("the purchase that comes back after recovery took over cannot settle, and records nothing", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace()
        const { payment, reserved } = yield* chargeThenDie(ws, "number:+14155550101", "purchase", [charge(500)])
        const pending = yield* Pending.PendingCharges
        yield* afterLease
        yield* pending.recover(10)
        const late = yield* Effect.flip(
          (yield* Transactor).withTransaction(pending.settle(reserved, payment))
        )
        assert.strictEqual(late._tag, "FailedPrecondition")
        assert.deepStrictEqual(yield* (yield* LedgerStore).list(ws), [])
        assert.deepStrictEqual((yield* collected(ws)).map((c) => c.refunded), [true])
      }))

    it.effect("a purchase that settles in time is recorded once and never recovered", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace()
        const { payment, reserved } = yield* chargeThenDie(ws, "number:+14155550102", "purchase", [charge(500)])
        const pending = yield* Pending.PendingCharges
        yield* (yield* Transactor).withTransaction(pending.settle(reserved, payment))
        yield* afterLease
        assert.strictEqual(yield* pending.recover(10), 0)
        assert.deepStrictEqual((yield* (yield* LedgerStore).list(ws)).map((c) => c.amountCents), [500])
        assert.deepStrictEqual((yield* collected(ws)).map((c) => [c.amountCents, c.refunded]), [[500, false]])
      }))

    it.effect("a fee whose item is recorded is written to the ledger by recovery, charged once", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace()
        yield* chargeThenDie(ws, "addon:campaign-1", "fee", [charge(258)])
        const pending = yield* Pending.PendingCharges
        yield* afterLease
        assert.strictEqual(yield* pending.recover(10), 1)
        const rows = yield* (yield* LedgerStore).list(ws)
        assert.deepStrictEqual(rows.map((c) => [c.amountCents, c.createdAt]), [[258, "2030-01-12T12:00:00.000Z"]])
        // The replayed key answered the first payment: one collected, none refunded.
        assert.deepStrictEqual((yield* collected(ws)).map((c) => [c.amountCents, c.refunded]), [[258, false]])
      }))

    it.effect("a fee reserved for the worker (lease 0) declined is audit-logged and closed", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace(true)
        const pending = yield* Pending.PendingCharges
        yield* (yield* Transactor).withTransaction(
          pending.reserve(ws, {
            purpose: "addon:campaign-2",
            kind: "fee",
            charges: [charge(258)],
            at: "2030-01-12T12:00:00.000Z",
            busy: "add-on",
            leaseMs: 0
          })
        )
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* pending.recover(10, { workspaceId: ws }), 1)
        assert.deepStrictEqual(yield* (yield* LedgerStore).list(ws), [])
        assert.deepStrictEqual(yield* pending.pending(ws, "addon:"), [])
      }))

    it.effect("one purchase per purpose at a time; another purpose goes ahead", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace()
        const pending = yield* Pending.PendingCharges
        const tx = yield* Transactor
        const reserve = (purpose: string) =>
          tx.withTransaction(
            pending.reserve(ws, {
              purpose,
              kind: "purchase",
              charges: [charge(500)],
              at: "2030-01-12T12:00:00.000Z",
              busy: "Buying it"
            })
          )
        const first = yield* reserve("filing")
        const second = yield* Effect.flip(reserve("filing"))
        assert.strictEqual(second.message, "Buying it is already in progress; try again when it has finished")
        yield* reserve("number:+14155550199")
        // Once the first is given up (its carrier call failed: refunded), the purpose is free.
        const failed = yield* Effect.flip(
          pending.fulfil(yield* workspaceOf(ws), first, () => Effect.fail("the carrier refused" as const))
        )
        assert.strictEqual(failed, "the carrier refused")
        assert.deepStrictEqual((yield* collected(ws)).map((c) => [c.amountCents, c.refunded]), [[500, true]])
        yield* reserve("filing")
      }))

    it.effect("a total under the minimum charge is waived: nothing collected, the rows at 0", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace()
        const { payment, reserved } = yield* chargeThenDie(ws, "number:+14155550103", "purchase", [charge(16)])
        assert.isTrue(Option.isNone(payment))
        assert.strictEqual(reserved.amountCents, 0)
        assert.match(reserved.charges[0]!.description, /waived \(under the 50-cent minimum charge\)$/)
        assert.deepStrictEqual(yield* collected(ws), [])
      }))
  })

contract("PendingCharges: memory", MemoryStores.layer)

/**
 * A provider that collects, then loses its first answer for each key (a timeout): the purchase
 * cannot know it was charged; asked again, it answers.
 */
const answerLost = Layer.effect(
  Payments,
  Effect.map(Payments, (inner) => {
    const asked = new Set<string>()
    return Payments.of({
      ...inner,
      charge: (request) =>
        Effect.tap(inner.charge(request), () => {
          if (asked.has(request.idempotencyKey)) return Effect.void
          asked.add(request.idempotencyKey)
          return Effect.fail(paymentFailed("unavailable"))
        })
    })
  })
).pipe(Layer.provideMerge(SimulatedPayments.layer))

layer(Pending.layer.pipe(Layer.provideMerge(answerLost), Layer.provideMerge(MemoryStores.layer)))(
  "PendingCharges: a provider that does not answer",
  (it) => {
    it.effect("the purchase fails, and recovery refunds the charge that did go through, once", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace()
        const pending = yield* Pending.PendingCharges
        const reserved = yield* (yield* Transactor).withTransaction(
          pending.reserve(ws, {
            purpose: "number:+14155550104",
            kind: "purchase",
            charges: [charge(500)],
            at: "2030-01-12T12:00:00.000Z",
            busy: "Buying it"
          })
        )
        const failed = yield* Effect.flip(pending.fulfil(yield* workspaceOf(ws), reserved, () => Effect.void))
        assert.strictEqual(failed.message, paymentFailed("unavailable").message)
        // Left pending, not closed: the charge is unknown until asked again.
        assert.strictEqual((yield* pending.pending(ws, "number:")).length, 1)
        yield* afterLease
        yield* pending.recover(10)
        assert.deepStrictEqual((yield* collected(ws)).map((c) => [c.amountCents, c.refunded]), [[500, true]])
        assert.deepStrictEqual(yield* pending.pending(ws, "number:"), [])
      }))
  }
)

sqlContract({ name: (db) => `PendingCharges: ${db}`, adapter: sqlStores, suite: contract, database: "pending_charges" })
