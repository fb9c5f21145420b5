/** The workspace ledger: what was charged, in integer cents (CONTRACT.md "Admin API"). */
import { Schema } from "effect"
import { E164 } from "../kernel/phone.ts"
import { projection } from "../kernel/records.ts"

/** What a row pays for (core/billing/pricing.ts makes each). */
export const ChargeKind = Schema.Literal("plan", "local_number", "toll_free_number", "texting_setup", "messaging_addon")
export type ChargeKind = typeof ChargeKind.Type

/** Every price is in US cents. */
export const CURRENCY = "USD"

/** A stored ledger row. */
export const ChargeRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  kind: ChargeKind,
  /** Human-readable, with the number and the proration: "Local number +14155550100, prorated 12/30 days". */
  description: Schema.String,
  amountCents: Schema.Int,
  currency: Schema.Literal(CURRENCY),
  /** The number the charge is for; null for charges of the whole workspace. */
  numberE164: Schema.NullOr(E164),
  createdAt: Schema.String
})
export type ChargeRecord = typeof ChargeRecord.Type

/** The public view (`GET /v1/admin/workspaces/{id}/ledger`). */
export const LedgerCharge = ChargeRecord.omit("workspaceId")
export type LedgerCharge = typeof LedgerCharge.Type
export const ledgerCharge = projection(LedgerCharge)

/** A price to bill, before it is collected and written: the ledger store stamps id, currency and time. */
export const Charge = ChargeRecord.pick("kind", "description", "amountCents", "numberE164")
export type Charge = typeof Charge.Type
