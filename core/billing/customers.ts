/**
 * The payment provider's customer of each workspace (a Stripe Customer, `cus_...`): made on first
 * need and kept, so every card and charge of the workspace lands on one customer, and a provider's
 * webhook about a customer finds its workspace.
 */
import { Context, type Effect, type Option, Schema } from "effect"

export const PaymentCustomer = Schema.Struct({
  workspaceId: Schema.UUID,
  /** The provider's id of the customer. */
  customerId: Schema.String,
  createdAt: Schema.String
})
export type PaymentCustomer = typeof PaymentCustomer.Type

export interface PaymentCustomerStore {
  readonly get: (workspaceId: string) => Effect.Effect<Option.Option<PaymentCustomer>>
  /** The workspace whose customer `customerId` is. */
  readonly findByCustomer: (customerId: string) => Effect.Effect<Option.Option<PaymentCustomer>>
  /**
   * Records the workspace's customer unless it has one already, and answers the one kept: two
   * processes making the first customer at once keep the same.
   */
  readonly claim: (customer: PaymentCustomer) => Effect.Effect<PaymentCustomer>
}
export const PaymentCustomerStore = Context.GenericTag<PaymentCustomerStore>("core/PaymentCustomerStore")
