import { Schema } from "effect"

/** The workspace's billing state (CONTRACT.md "Admin API"); the billing gates read it. */
export const Billing = Schema.Struct({
  plan: Schema.NullOr(Schema.String.pipe(Schema.maxLength(64))),
  trial: Schema.Boolean,
  subscription: Schema.Literal("active", "canceled"),
  paymentMethod: Schema.Boolean,
  identity: Schema.Literal("none", "submitted", "verified"),
  mobileVerified: Schema.Boolean,
  billedVia: Schema.Literal("card", "app_store"),
  cardDeclines: Schema.Boolean,
  ownerEmail: Schema.NullOr(Schema.String.pipe(Schema.maxLength(254)))
})
export type Billing = typeof Billing.Type

export const defaultBilling: Billing = {
  plan: "standard",
  trial: true,
  subscription: "active",
  paymentMethod: false,
  identity: "none",
  mobileVerified: false,
  billedVia: "card",
  cardDeclines: false,
  ownerEmail: null
}

export const Workspace = Schema.Struct({
  id: Schema.UUID,
  name: Schema.String,
  billing: Billing,
  createdAt: Schema.String
})
export type Workspace = typeof Workspace.Type

export const BillingPatch = Billing.pipe(Schema.partialWith({ exact: true }))
export type BillingPatch = typeof BillingPatch.Type
