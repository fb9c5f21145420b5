/** PaymentCustomerStore on SQL: `payment_customers`, one row per workspace. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { PaymentCustomerStore } from "../../core/billing/customers.ts"
import { paymentCustomers } from "./tables.ts"

const columns = paymentCustomers.columns()

export const layer = Layer.effect(
  PaymentCustomerStore,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const one = (rows: ReadonlyArray<unknown>) => Option.map(Option.fromNullable(rows[0]), paymentCustomers.decode)
    const get = (workspaceId: string) =>
      Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM payment_customers WHERE workspace_id = ${workspaceId}`)
        .pipe(Effect.map(one))
    return PaymentCustomerStore.of({
      get,
      findByCustomer: (customerId) =>
        Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM payment_customers WHERE customer_id = ${customerId}`)
          .pipe(Effect.map(one)),
      // The first claim wins; a later one reads the row it lost to.
      claim: (customer) =>
        Effect.orDie(
          sql`INSERT INTO payment_customers ${sql.insert(paymentCustomers.row(customer))}
              ON CONFLICT (workspace_id) DO NOTHING`
        ).pipe(
          Effect.zipRight(get(customer.workspaceId)),
          Effect.map(Option.getOrThrowWith(() => new Error(`payment_customers lost ${customer.workspaceId}`)))
        )
    })
  })
)
