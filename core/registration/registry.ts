/**
 * The 10DLC registry port (The Campaign Registry, through the carrier): file a brand and its
 * campaign, run the sole-proprietor PIN, and read where each review stands. Adapters:
 * adapters/carrier/telnyxRegistry (Telnyx 10DLC, live filings under CARRIER=telnyx) and
 * adapters/carrier/simulatedRegistry (live filings under CARRIER=simulated, the default; mock-mode
 * filings and the test helpers under either). Reviews take time: a filing answers `pending`, and a
 * later status read (a refresh, the poller, or a Telnyx 10DLC webhook) reports the outcome. The port
 * keeps no registration state of its own beyond the registry's.
 */
import { Context, Data, type Effect, type Option, Schema } from "effect"
import type { CampaignAssignment } from "../numbers/model.ts"
import type { Business, Campaign } from "./input.ts"

/** Where a brand's review stands; `otp_pending`: a sole proprietor's PIN was texted and is awaited. */
export type BrandStatus = "pending" | "accepted" | "rejected" | "otp_pending"

/**
 * How far the registry verified the brand's identity, in its own words (research telnyx.md §4):
 * `SELF_DECLARED` a sole proprietor before its PIN, `VETTED_VERIFIED` after an external vetting.
 */
export const IdentityStatus = Schema.Literal("UNVERIFIED", "SELF_DECLARED", "VERIFIED", "VETTED_VERIFIED")
export type IdentityStatus = typeof IdentityStatus.Type

export interface BrandReport {
  readonly brandId: string
  readonly status: BrandStatus
  readonly identityStatus: IdentityStatus
  /** The registry's reasons for a rejection; empty otherwise. */
  readonly failureReasons: ReadonlyArray<string>
  /** When the last PIN was texted (ISO 8601), for sole proprietors; null before any. */
  readonly otpSentAt: string | null
}

export type CampaignStatus = "pending" | "approved" | "rejected"

export interface CampaignReport {
  readonly campaignId: string
  readonly brandId: string
  readonly status: CampaignStatus
  readonly failureReasons: ReadonlyArray<string>
}

/** Where a number's assignment to a campaign stands, as the registry reports it. */
export interface AssignmentReport {
  readonly phoneNumber: string
  readonly status: CampaignAssignment
  readonly failureReasons: ReadonlyArray<string>
}

/**
 * `rejected`: the registry refused the request (unknown brand, not waiting for a PIN, invalid
 * filing); retrying will not help. `unavailable`: rate limited, 5xx, timeout or network failure.
 */
export class RegistryError extends Data.TaggedError("RegistryError")<{
  readonly reason: "rejected" | "unavailable"
  readonly message: string
}> {}

/** The PIN a sole proprietor entered is not the one texted, or is older than `OTP_TTL_MILLIS`. */
export class OtpRejected extends Data.TaggedError("OtpRejected")<{
  readonly reason: "wrong" | "expired"
  readonly message: string
}> {}

/** Registry PINs expire 24 hours after they are texted (research/telnyx.md section 4). */
export const OTP_TTL_MILLIS = 24 * 60 * 60 * 1000

/**
 * Every call names the workspace: the registry account is the service's, so the adapter needs it
 * only to tell customers apart (the simulator's outcomes are per workspace).
 */
export interface Registry {
  /** The carrier messaging profile the workspace's numbers text through (created on its first filing). */
  readonly messagingProfile: (workspaceId: string) => Effect.Effect<string, RegistryError>
  /** Files a business or sole-proprietor brand; answers `pending`. */
  readonly fileBrand: (workspaceId: string, business: Business) => Effect.Effect<BrandReport, RegistryError>
  /** Texts a fresh PIN to a sole-proprietor brand's mobile (first send or resend). */
  readonly sendOtp: (workspaceId: string, brandId: string) => Effect.Effect<BrandReport, RegistryError>
  /** Checks the PIN; on success the brand is `accepted`. */
  readonly verifyOtp: (
    workspaceId: string,
    brandId: string,
    pin: string
  ) => Effect.Effect<BrandReport, RegistryError | OtpRejected>
  /** Files the campaign under an accepted brand; answers `pending`. */
  readonly fileCampaign: (
    workspaceId: string,
    brandId: string,
    campaign: Campaign
  ) => Effect.Effect<CampaignReport, RegistryError>
  readonly brandStatus: (workspaceId: string, brandId: string) => Effect.Effect<BrandReport, RegistryError>
  readonly campaignStatus: (workspaceId: string, campaignId: string) => Effect.Effect<CampaignReport, RegistryError>
  /**
   * Assigns a number to an active campaign, which carriers require before they take its traffic;
   * the registry completes it asynchronously (`pending`, then `assigned` or `failed`).
   */
  readonly assignNumber: (
    workspaceId: string,
    campaignId: string,
    e164: string
  ) => Effect.Effect<AssignmentReport, RegistryError>
  /** Where the number's assignment stands; `rejected` when the registry has none for it. */
  readonly assignmentStatus: (workspaceId: string, e164: string) => Effect.Effect<AssignmentReport, RegistryError>
}
export const Registry = Context.GenericTag<Registry>("core/Registry")

/**
 * The registry mock-mode filings use (test keys, `mock: true`): the simulator, whatever registry
 * live filings go to.
 */
export class MockRegistry extends Context.Tag("core/MockRegistry")<MockRegistry, Registry>() {}

/** What the `registry` test helper sets: the outcome of the workspace's next review. */
export interface NextOutcome {
  readonly brand?: "accept" | "reject" | "otp" | undefined
  readonly campaign?: "approve" | "reject" | undefined
  /** How the next number assignment settles. */
  readonly assignment?: "assign" | "fail" | undefined
  readonly reasons?: ReadonlyArray<string> | undefined
}

/** The last PIN texted to a workspace's brand, as `GET /test-helpers/otp` answers it. */
export interface SentOtp {
  readonly pin: string
  readonly sentAt: string
}

/** The test helpers' side of the simulated registry (CONTRACT "Test helpers": `registry`, `otp`). */
export interface RegistrySimulator {
  /** Replaces the workspace's next outcome. */
  readonly setNextOutcome: (workspaceId: string, outcome: NextOutcome) => Effect.Effect<void>
  readonly lastOtp: (workspaceId: string) => Effect.Effect<Option.Option<SentOtp>>
}
export const RegistrySimulator = Context.GenericTag<RegistrySimulator>("core/RegistrySimulator")
