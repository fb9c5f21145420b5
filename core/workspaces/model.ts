import { Schema } from "effect"
import { KeyKind } from "../auth/principal.ts"
import { Scope } from "../auth/scopes.ts"
import { projection } from "../kernel/records.ts"
import { DEFAULT_QUIET_HOURS } from "../pacing/quietHours.ts"

/** The workspace's billing state (CONTRACT.md "Admin API"); the billing gates read it. */
export const Billing = Schema.Struct({
  plan: Schema.NullOr(Schema.String.pipe(Schema.maxLength(64))),
  trial: Schema.Boolean,
  /** `past_due` while a declined renewal is retried; `canceled` once the retries are spent (core/billing/cycle.ts). */
  subscription: Schema.Literal("active", "past_due", "canceled"),
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

const HHMM = Schema.String.pipe(
  Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "must be a time of day, HH:MM from 00:00 to 23:59" })
)

/** When scheduled messages and broadcasts wait, in each recipient's local time (core/pacing/quietHours.ts). */
export const QuietHoursSetting = Schema.Struct({ start: HHMM, end: HHMM }).pipe(
  Schema.filter((q) => q.start !== q.end || "start and end must differ (null turns quiet hours off)"),
  Schema.annotations({ identifier: "QuietHours" })
)

/** A low-volume 10DLC campaign's AT&T limit (CONTRACT "Pacing"). */
export const DEFAULT_SEGMENTS_PER_MINUTE = 75

/** A new workspace's texting settings (CONTRACT "Pacing", "Quiet hours"). */
export const defaultTexting = {
  textingSegmentsPerMinute: DEFAULT_SEGMENTS_PER_MINUTE,
  quietHours: DEFAULT_QUIET_HOURS
} as const

export const Workspace = Schema.Struct({
  id: Schema.UUID,
  name: Schema.String,
  billing: Billing,
  /** The pace of scheduled messages and broadcasts, in message segments a minute. */
  textingSegmentsPerMinute: Schema.Int,
  /** Null: no quiet hours. */
  quietHours: Schema.NullOr(QuietHoursSetting),
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
