/**
 * The contract of the PaymentCustomerStore on memory, PGlite and Postgres: a workspace's first
 * claimed customer is kept (a later claim answers it), and a customer finds its workspace.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { PaymentCustomerStore } from "../../core/billing/customers.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = PaymentCustomerStore | WorkspaceStore

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({
    id,
    name: "Billed",
    billing: defaultBilling,
    ...defaultTexting,
    createdAt: ts(0)
  })
  return id
})

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("the first claim is kept; a later one answers it", () =>
      Effect.gen(function*() {
        const store = yield* PaymentCustomerStore
        const workspaceId = yield* newWorkspace
        assert.isTrue(Option.isNone(yield* store.get(workspaceId)))
        const first = { workspaceId, customerId: `cus_${uuid()}`, createdAt: ts(1) }
        assert.deepStrictEqual(yield* store.claim(first), first)
        assert.deepStrictEqual(
          yield* store.claim({ workspaceId, customerId: `cus_${uuid()}`, createdAt: ts(2) }),
          first
        )
        assert.deepStrictEqual(Option.getOrThrow(yield* store.get(workspaceId)), first)
      }))

    it.effect("a customer finds its workspace, and no other", () =>
      Effect.gen(function*() {
        const store = yield* PaymentCustomerStore
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        const ca = yield* store.claim({ workspaceId: a, customerId: `cus_${uuid()}`, createdAt: ts(1) })
        const cb = yield* store.claim({ workspaceId: b, customerId: `cus_${uuid()}`, createdAt: ts(1) })
        assert.strictEqual(Option.getOrThrow(yield* store.findByCustomer(ca.customerId)).workspaceId, a)
        assert.strictEqual(Option.getOrThrow(yield* store.findByCustomer(cb.customerId)).workspaceId, b)
        assert.isTrue(Option.isNone(yield* store.findByCustomer("cus_unknown")))
      }))
  })

contract("PaymentCustomerStore: memory", MemoryStores.layer)

sqlContract({
  name: (db) => `PaymentCustomerStore: ${db}`,
  adapter: (client) => sqlStores(client),
  suite: contract,
  database: "payment_customers"
})
