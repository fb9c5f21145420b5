/** The workspace ledger: what was charged, in cents (CONTRACT.md "Admin API"). */
import { Schema } from "effect"

export const LedgerCharge = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  description: Schema.String,
  amountCents: Schema.Number,
  currency: Schema.String,
  numberE164: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})
export type LedgerCharge = typeof LedgerCharge.Type
