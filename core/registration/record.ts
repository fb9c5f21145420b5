/**
 * A workspace's US texting (10DLC) registration as stored, and its public view (SPEC "Messaging
 * (10DLC) status"). The pipeline step is the state machine's (core/registration/machine.ts); the
 * rest is what the registry reported and what the customer filed.
 */
import { Schema } from "effect"
import { BusinessInput, Campaign } from "./input.ts"
import { steps } from "./machine.ts"
import { IdentityStatus } from "./registry.ts"

export const Step = Schema.Literal(...steps)

/** The brand's review as the registry last reported it. */
export const BrandState = Schema.Struct({
  /** The registry's brand id; null in mock mode before the simulated filing answered. */
  id: Schema.NullOr(Schema.String),
  status: Schema.Literal("pending", "otp_pending", "accepted", "rejected"),
  /** As the registry last reported it (rows written before it was read from the registry hold UNVERIFIED or VERIFIED). */
  identityStatus: IdentityStatus,
  failureReasons: Schema.Array(Schema.String),
  /** Sole proprietors: when the last PIN was texted (ISO 8601), and the last 4 digits of the mobile it went to. */
  otpSentAt: Schema.NullOr(Schema.String),
  otpMobileLast4: Schema.NullOr(Schema.String),
  /** Wrong PINs entered since the last one was texted (absent on rows written before the limit). */
  failedPinAttempts: Schema.optional(Schema.Int)
})
export type BrandState = typeof BrandState.Type

/** The campaign: `staged` until the brand is accepted and it is created with the registry. */
export const CampaignState = Schema.Struct({
  id: Schema.NullOr(Schema.String),
  status: Schema.Literal("staged", "pending", "approved", "rejected"),
  useCase: Schema.String,
  failureReasons: Schema.Array(Schema.String),
  submittedAt: Schema.NullOr(Schema.String)
})
export type CampaignState = typeof CampaignState.Type

export const Registration = Schema.Struct({
  workspaceId: Schema.UUID,
  step: Step,
  /** The kind of the brand filed last (the state machine needs it). */
  soleProprietor: Schema.Boolean,
  /** Filed in mock mode (test key or `mock: true`): the simulated registry, no fee, nothing filed. */
  mock: Schema.Boolean,
  messagingProfileId: Schema.NullOr(Schema.String),
  /** The application as last filed; holds the EIN, so it is never shown (see `messagingStatus`). */
  business: BusinessInput,
  campaignInput: Campaign,
  brand: BrandState,
  campaign: CampaignState,
  /** The last `otp/resend` (the filing's own PIN does not count), for the one-a-minute limit. */
  lastResendAt: Schema.NullOr(Schema.String),
  filedAt: Schema.String,
  updatedAt: Schema.String
})
export type Registration = typeof Registration.Type

/** The public brand: the PIN fields only for sole proprietors. */
export const BrandView = Schema.Struct({
  status: BrandState.fields.status,
  identityStatus: BrandState.fields.identityStatus,
  failureReasons: BrandState.fields.failureReasons,
  otpSentAt: Schema.optional(Schema.NullOr(Schema.String)),
  otpMobileLast4: Schema.optional(Schema.NullOr(Schema.String))
})

export const CampaignView = CampaignState.omit("id")

/** `GET /messaging`'s `messaging`. */
export const MessagingStatus = Schema.Struct({
  step: Step,
  canText: Schema.Boolean,
  messagingProfileId: Schema.NullOr(Schema.String),
  brand: Schema.NullOr(BrandView),
  campaign: Schema.NullOr(CampaignView),
  /** Present while the registration on file was filed in mock mode: it lets test keys text, never live ones. */
  mock: Schema.optional(Schema.Literal(true))
}).annotations({ identifier: "MessagingStatus" })
export type MessagingStatus = typeof MessagingStatus.Type
