/**
 * The LedgerStore contract, run unchanged against memory, PGlite (in-memory, migrated) and a real
 * Postgres (a fresh database, migrated): rows stamped with id, currency and time; newest first;
 * tenant isolation; and the purchase transaction the buy use case runs (number, ledger row, outbox
 * event) committing or rolling back as one, on a failure or a defect. Without a Postgres URL the
 * Postgres suite is skipped, except under CI=true where that fails.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { Charge } from "../../core/billing/ledger.ts"
import { LedgerStore } from "../../core/billing/store.ts"
import { event } from "../../core/events/catalog.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { NumberStore } from "../../core/numbers/model.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { number, ts, uuid } from "./stores.contract.ts"

type Ports = LedgerStore | NumberStore | EventOutbox | WorkspaceStore | Transactor

class Declined {
  readonly _tag = "Declined"
}

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({ id, name: "W", billing: defaultBilling, ...defaultTexting, createdAt: ts(0) })
  return id
})

/** A number nobody else in this run (or database) used. */
const freshE164 = () => `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}` as E164

const charge = (
  e164: E164 | null,
  amountCents = 200,
  description = `Local number ${e164}, prorated 12/30 days`
): Charge => ({
  kind: e164 === null ? "messaging_addon" : "local_number",
  description,
  amountCents,
  numberE164: e164
})

/** What a purchase leaves in the workspace: its numbers, its ledger rows, its events. */
const traces = (workspaceId: string) =>
  Effect.gen(function*() {
    return {
      numbers: (yield* (yield* NumberStore).list(workspaceId)).map((n) => n.e164),
      charges: (yield* (yield* LedgerStore).list(workspaceId)).map((c) => c.description),
      events: (yield* (yield* EventOutbox).list(workspaceId)).map((e) => e.type)
    }
  })

/** The transaction of a purchase (core/billing/payments.ts, step 3), then whatever `after` does inside it. */
const purchase = <E>(workspaceId: string, e164: E164, after: Effect.Effect<void, E>) =>
  Effect.gen(function*() {
    const tx = yield* Transactor
    const numbers = yield* NumberStore
    const ledger = yield* LedgerStore
    const outbox = yield* EventOutbox
    return yield* tx.withTransaction(
      Effect.gen(function*() {
        yield* Effect.orDie(numbers.insert(workspaceId, number(e164), uuid()))
        const rows = yield* ledger.append(workspaceId, [charge(e164)], new Date().toISOString())
        // the contact event stands in for the purchase's own event (the buy use case adds it to the catalog)
        yield* outbox.append(workspaceId, [event("contact.deleted", { contactId: uuid() })])
        // inside the transaction, the new row is there, newest
        assert.deepStrictEqual((yield* ledger.list(workspaceId))[0], rows[0])
        yield* after
        return rows
      })
    )
  })

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("append stamps each charge with an id, USD and now, and returns the rows it wrote", () =>
      Effect.gen(function*() {
        const ledger = yield* LedgerStore
        const ws = yield* newWorkspace
        const e164 = freshE164()
        const before = new Date().toISOString()
        const rows = yield* ledger.append(ws, [
          charge(e164),
          charge(null, 160, "Messaging add-on, prorated 12/30 days — ✓ ünïcode")
        ], new Date().toISOString())
        const after = new Date().toISOString()
        assert.strictEqual(rows.length, 2)
        for (const row of rows) {
          assert.match(row.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
          assert.isTrue(row.createdAt >= before && row.createdAt <= after, row.createdAt)
        }
        assert.notStrictEqual(rows[0]!.id, rows[1]!.id)
        assert.deepStrictEqual(rows, [
          { ...charge(e164), id: rows[0]!.id, workspaceId: ws, currency: "USD", createdAt: rows[0]!.createdAt },
          {
            ...charge(null, 160, "Messaging add-on, prorated 12/30 days — ✓ ünïcode"),
            id: rows[1]!.id,
            workspaceId: ws,
            currency: "USD",
            createdAt: rows[0]!.createdAt
          }
        ])
        // read back exactly as written (newest first: the later row of one append comes first)
        assert.deepStrictEqual(yield* ledger.list(ws), [...rows].reverse())
        // an empty append writes nothing
        assert.deepStrictEqual(yield* ledger.append(ws, [], new Date().toISOString()), [])
        assert.strictEqual((yield* ledger.list(ws)).length, 2)
      }))

    it.effect("list is newest first and holds only the workspace's own rows", () =>
      Effect.gen(function*() {
        const ledger = yield* LedgerStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const [a] = yield* ledger.append(ws, [charge(freshE164(), 100, "a")], new Date().toISOString())
        yield* Effect.sleep("3 millis")
        const [x] = yield* ledger.append(other, [charge(freshE164(), 100, "x")], new Date().toISOString())
        yield* Effect.sleep("3 millis")
        const [b, c] = yield* ledger.append(
          ws,
          [charge(freshE164(), 100, "b"), charge(freshE164(), 100, "c")],
          new Date().toISOString()
        )
        assert.deepStrictEqual(yield* ledger.list(ws), [c!, b!, a!])
        assert.deepStrictEqual(yield* ledger.list(other), [x!])
        assert.deepStrictEqual(yield* ledger.list(uuid()), [])
      }))

    it.effect("a purchase's number, ledger row and event commit together", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const e164 = freshE164()
        const rows = yield* purchase(ws, e164, Effect.void)
        assert.deepStrictEqual(yield* traces(ws), {
          numbers: [e164],
          charges: [charge(e164).description],
          events: ["contact.deleted"]
        })
        assert.deepStrictEqual(yield* (yield* LedgerStore).list(ws), rows)
      }))

    it.effect("a purchase rolled back by a failure leaves no number, no ledger row and no event", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const e164 = freshE164()
        const kept = yield* (yield* LedgerStore).append(ws, [charge(null, 160, "kept")], new Date().toISOString())
        const result = yield* Effect.either(purchase(ws, e164, Effect.fail(new Declined())))
        assert.deepStrictEqual(result._tag === "Left" ? result.left : null, new Declined())
        assert.deepStrictEqual(yield* traces(ws), { numbers: [], charges: ["kept"], events: [] })
        assert.deepStrictEqual(yield* (yield* LedgerStore).list(ws), kept)
        assert.isTrue(Option.isNone(yield* (yield* NumberStore).findByE164(e164)))
        // the number is free again: the next purchase of it commits
        yield* purchase(ws, e164, Effect.void)
        assert.deepStrictEqual((yield* traces(ws)).charges, [charge(e164).description, "kept"])
      }))

    it.effect("a purchase rolled back by a defect leaves nothing either", () =>
      Effect.gen(function*() {
        const ws = yield* newWorkspace
        const exit = yield* Effect.exit(purchase(ws, freshE164(), Effect.die("boom")))
        assert.strictEqual(exit._tag, "Failure")
        assert.deepStrictEqual(yield* traces(ws), { numbers: [], charges: [], events: [] })
      }))
  })

contract("LedgerStore: memory", MemoryStores.layer)

sqlContract({ name: (db) => `LedgerStore: ${db}`, adapter: sqlStores, suite: contract, database: "ledger" })
