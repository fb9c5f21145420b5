/** In-memory PaymentCustomerStore. */
import { Effect, Layer, Option } from "effect"
import { PaymentCustomerStore } from "../../core/billing/customers.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  PaymentCustomerStore,
  Effect.map(MemoryDb, (db) =>
    PaymentCustomerStore.of({
      get: (workspaceId) => Effect.sync(() => Option.fromNullable(db.state.paymentCustomers.get(workspaceId))),
      findByCustomer: (customerId) =>
        Effect.sync(() =>
          Option.fromNullable([...db.state.paymentCustomers.values()].find((c) => c.customerId === customerId))
        ),
      claim: (customer) =>
        Effect.sync(() => {
          const kept = db.state.paymentCustomers.get(customer.workspaceId)
          if (kept !== undefined) return kept
          db.state.paymentCustomers.set(customer.workspaceId, customer)
          return customer
        })
    }))
)
