import { Schema } from "effect"
import { KeyKind } from "../auth/principal.ts"
import { Scope } from "../auth/scopes.ts"
import { projection } from "../kernel/records.ts"

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

/** A stored API key. */
export const ApiKeyRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  kind: KeyKind,
  scopes: Schema.Array(Scope),
  name: Schema.NullOr(Schema.String),
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  hash: Schema.String,
  createdAt: Schema.String,
  revokedAt: Schema.NullOr(Schema.String)
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/** A key as the admin API lists it: never its hash (its token is never stored). */
export const ApiKey = ApiKeyRecord.omit("hash")
export type ApiKey = typeof ApiKey.Type
export const apiKey = projection(ApiKey)
