/**
 * The Telnyx 10DLC registry (research telnyx.md §4 and §6) through the shared client
 * (telnyxClient.ts). 10DLC answers are bare camelCase objects, not `{data}`.
 *
 * - Brand: `POST /v2/10dlc/brand`, read with `GET /v2/10dlc/brand/{id}`.
 * - Sole-proprietor PIN: `POST /v2/10dlc/brand/{id}/smsOtp` texts it (again on a resend),
 *   `PUT` the same path with `{otpPin}` checks it (204), `GET` it reads when it was texted.
 * - Campaign: `POST /v2/10dlc/campaignBuilder`, read with `GET /v2/10dlc/campaign/{id}`.
 * - Number assignment: `POST /v2/10dlc/phone_number_campaigns` `{phoneNumber, campaignId}`, read
 *   with `GET /v2/10dlc/phone_number_campaigns/{phoneNumber}`
 *   (https://developers.telnyx.com/api-reference/phone-number-campaigns/create-new-phone-number-campaign,
 *   .../get-single-phone-number-campaign). Its `assignmentStatus` is PENDING_ASSIGNMENT, ASSIGNED,
 *   FAILED_ASSIGNMENT, PENDING_UNASSIGNMENT or FAILED_UNASSIGNMENT (the PhoneNumberCampaign schema).
 *
 * Statuses, as the port reports them:
 * - brand `identityStatus` VERIFIED or VETTED_VERIFIED: `accepted`; `status` REGISTRATION_FAILED,
 *   or a settled brand left UNVERIFIED: `rejected` with Telnyx's `failureReasons`.
 * - a sole proprietor not yet verified: `otp_pending` once a PIN was texted. As with the
 *   simulator, the first status read after the filing texts the first PIN: the service never has
 *   to know when Telnyx is ready for it (a refused trigger leaves the brand `pending`).
 * - assignment ASSIGNED: `assigned`; FAILED_ASSIGNMENT, or a number being unassigned: `failed`
 *   with Telnyx's `failureReasons`; PENDING_ASSIGNMENT (or no status yet): `pending`.
 * - campaign `campaignStatus` MNO_PROVISIONED: `approved` (ready to send); TCR_FAILED,
 *   TELNYX_FAILED, MNO_REJECTED, MNO_PROVISIONING_FAILED, TCR_SUSPENDED, TCR_EXPIRED or a FAILED
 *   submission: `rejected`; anything else `pending`.
 *
 * Failures: a 4xx is the registry refusing the request, `rejected` with its own words (either of
 * the two error shapes, §6); 401/403 (our account), 408, 429, 5xx, timeouts and network failures
 * are `unavailable`. Filings cost money and are not idempotent, and a PIN trigger texts a person,
 * so these POSTs are retried only on a 429, which Telnyx did not process; reads also on 408/5xx.
 * A POST that timed out or met a 5xx says it may have gone through: the caller must not refile blindly.
 */
import { Clock, Effect, Either, Layer, Option, Schema } from "effect"
import type { Business, Campaign } from "../../core/registration/input.ts"
import {
  type AssignmentReport,
  type BrandReport,
  type CampaignReport,
  IdentityStatus,
  OTP_TTL_MILLIS,
  OtpRejected,
  Registry,
  RegistryError
} from "../../core/registration/registry.ts"
import {
  classify,
  decodeAnswer,
  makeClient,
  type Refusal,
  refusal,
  type TelnyxConfig,
  type TelnyxFailure
} from "./telnyxClient.ts"

/** A read changes nothing: any sign that Telnyx did not answer it is worth another try. */
const READ_RETRY_ON: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504])
/** Only a 429 surely left a filing unfiled or a PIN untexted. */
const WRITE_RETRY_ON: ReadonlySet<number> = new Set([429])

/** The texts Telnyx sends around the PIN; `@OTP_PIN@` becomes the 6-digit PIN (each at most 500 characters). */
export const PIN_SMS = "Your business texting registration PIN is @OTP_PIN@. It expires in 24 hours."
export const SUCCESS_SMS = "Your business texting registration is verified."

export interface TelnyxRegistryOptions {
  /** Where Telnyx sends `10dlc.brand.update` and `10dlc.campaign.update` (telnyxRegistryWebhooks.ts); unset: none. */
  readonly webhookUrl?: string
}

// ------------------------------------------------------------------------------------ request bodies

/** `CreateBrand` (research §4); `undefined` fields are left out of the JSON. */
export const brandBody = (business: Business, options: TelnyxRegistryOptions = {}) => ({
  entityType: business.entityType,
  displayName: business.displayName,
  companyName: business.companyName,
  ein: business.ein,
  firstName: business.firstName,
  lastName: business.lastName,
  mobilePhone: business.mobilePhone,
  phone: business.phone,
  street: business.street,
  city: business.city,
  state: business.state,
  postalCode: business.postalCode,
  country: business.country,
  email: business.email,
  // Required of public companies; the business's email is the contact we have.
  businessContactEmail: business.entityType === "PUBLIC_PROFIT" ? business.email : undefined,
  vertical: business.vertical,
  website: business.website,
  webhookURL: options.webhookUrl
})

/**
 * The campaignBuilder request (research §4). We answer STOP and HELP ourselves (SPEC), so the
 * campaign declares opt-out and help with those keywords; links and phone numbers in messages are
 * declared absent unless the campaign says otherwise.
 */
export const campaignBody = (brandId: string, campaign: Campaign, options: TelnyxRegistryOptions = {}) => ({
  brandId,
  usecase: campaign.useCase,
  description: campaign.description,
  messageFlow: campaign.messageFlow,
  ...Object.fromEntries((campaign.samples ?? []).map((text, i) => [`sample${i + 1}`, text])),
  optinMessage: campaign.optinMessage,
  helpMessage: campaign.helpMessage,
  optinKeywords: campaign.optinKeywords,
  optoutKeywords: "STOP",
  helpKeywords: "HELP",
  subscriberOptin: true,
  subscriberOptout: true,
  subscriberHelp: true,
  embeddedLink: campaign.embeddedLink ?? false,
  embeddedPhone: campaign.embeddedPhone ?? false,
  webhookURL: options.webhookUrl
})

// ------------------------------------------------------------------------------------ answers

const Reasons = Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Array(Schema.String))))
const Word = Schema.optional(Schema.NullOr(Schema.String))

const TelnyxBrand = Schema.Struct({
  brandId: Schema.NonEmptyString,
  entityType: Word,
  status: Word,
  identityStatus: Word,
  failureReasons: Reasons
})
const decodeBrand = decodeAnswer(TelnyxBrand, "a TelnyxBrand {brandId, status, identityStatus}")

const TelnyxCampaign = Schema.Struct({
  campaignId: Schema.NonEmptyString,
  brandId: Schema.NonEmptyString,
  campaignStatus: Word,
  submissionStatus: Word,
  failureReasons: Reasons
})
const decodeCampaign = decodeAnswer(TelnyxCampaign, "a campaign {campaignId, brandId, campaignStatus}")

const PhoneNumberCampaign = Schema.Struct({
  phoneNumber: Schema.NonEmptyString,
  campaignId: Word,
  assignmentStatus: Word,
  failureReasons: Reasons
})
const decodeAssignment = decodeAnswer(PhoneNumberCampaign, "a PhoneNumberCampaign {phoneNumber, assignmentStatus}")

const OtpStatus = Schema.Struct({ requestDate: Word, deliveryStatus: Word })
const decodeOtp = decodeAnswer(OtpStatus, "an OTP status {requestDate, deliveryStatus}")

/** Telnyx's `failureReasons` (a string in its types) as the port's list. */
const reasonList = (
  reasons: string | ReadonlyArray<string> | null | undefined,
  fallback: string
): ReadonlyArray<string> => {
  const list = (typeof reasons === "string" ? [reasons] : (reasons ?? [])).map((r) => r.trim()).filter((r) => r !== "")
  return list.length > 0 ? list : [fallback]
}

const VERIFIED = new Set(["VERIFIED", "VETTED_VERIFIED"])

/** Telnyx's `identityStatus` as the port's; a word it may add later reads as not verified. */
const identityOf = (word: string | null | undefined): IdentityStatus =>
  Either.getOrElse(Schema.decodeUnknownEither(IdentityStatus)(word), (): IdentityStatus => "UNVERIFIED")
const CAMPAIGN_FAILED = new Set([
  "TCR_FAILED",
  "TELNYX_FAILED",
  "MNO_REJECTED",
  "MNO_PROVISIONING_FAILED",
  "TCR_SUSPENDED",
  "TCR_EXPIRED"
])

export const campaignReport = (c: typeof TelnyxCampaign.Type): CampaignReport => {
  const base = { campaignId: c.campaignId, brandId: c.brandId }
  if (c.campaignStatus === "MNO_PROVISIONED") return { ...base, status: "approved", failureReasons: [] }
  if (CAMPAIGN_FAILED.has(c.campaignStatus ?? "") || c.submissionStatus === "FAILED") {
    return {
      ...base,
      status: "rejected",
      failureReasons: reasonList(
        c.failureReasons,
        `The registry rejected the campaign (${c.campaignStatus ?? "submission failed"})`
      )
    }
  }
  return { ...base, status: "pending", failureReasons: [] }
}

export const assignmentReport = (a: typeof PhoneNumberCampaign.Type): AssignmentReport => {
  switch (a.assignmentStatus) {
    case "ASSIGNED":
      return { phoneNumber: a.phoneNumber, status: "assigned", failureReasons: [] }
    case "FAILED_ASSIGNMENT":
    case "PENDING_UNASSIGNMENT":
    case "FAILED_UNASSIGNMENT":
      return {
        phoneNumber: a.phoneNumber,
        status: "failed",
        failureReasons: reasonList(a.failureReasons, `The registry did not assign the number (${a.assignmentStatus})`)
      }
    default:
      return { phoneNumber: a.phoneNumber, status: "pending", failureReasons: [] }
  }
}

// ------------------------------------------------------------------------------------ the adapter

const unavailable = (message: string) => new RegistryError({ reason: "unavailable", message })
const rejected = (message: string) => new RegistryError({ reason: "rejected", message })

/** `unavailable`, or `rejected` with the registry's words. */
const registryError = (f: TelnyxFailure): RegistryError =>
  Either.match(classify(f), { onLeft: unavailable, onRight: (r) => rejected(refusal(r)) })

const path = (...parts: ReadonlyArray<string>) => `/v2/10dlc/${parts.map(encodeURIComponent).join("/")}`

export const make = (config: TelnyxConfig, options: TelnyxRegistryOptions = {}) => {
  const telnyx = makeClient(config)

  /** One call: its 2xx body decoded, or a RegistryError. */
  const call = <A>(
    method: "GET" | "POST",
    to: string,
    decode: (text: string) => Either.Either<A, string>,
    body?: unknown
  ): Effect.Effect<A, RegistryError> =>
    telnyx({ method, path: to, body, retryOn: method === "GET" ? READ_RETRY_ON : WRITE_RETRY_ON }).pipe(
      Effect.mapError((f) => {
        const error = registryError(f)
        // A filing or PIN trigger Telnyx did not answer, or answered with a 5xx, may have gone through.
        const unsure = method === "POST" && error.reason === "unavailable" && !(f._tag === "Status" && f.status < 500)
        return unsure ? unavailable(`${error.message}; it may have gone through`) : error
      }),
      Effect.flatMap(({ status, text }) =>
        Either.match(decode(text), {
          onLeft: (why) =>
            Effect.fail(unavailable(`Telnyx returned a malformed answer to ${method} ${to} (HTTP ${status}; ${why})`)),
          onRight: Effect.succeed
        })
      )
    )

  const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  /** Texts a PIN to the brand's mobile; when, as the report's `otpSentAt`. */
  const textPin = (brandId: string) =>
    Effect.zipRight(
      call("POST", path("brand", brandId, "smsOtp"), Either.right, { pinSms: PIN_SMS, successSms: SUCCESS_SMS }),
      nowIso
    )

  /** The brand's last PIN, none when none was texted (Telnyx answers 404). */
  const otpStatus = (brandId: string) =>
    telnyx({ method: "GET", path: path("brand", brandId, "smsOtp"), retryOn: READ_RETRY_ON }).pipe(
      Effect.map(({ text }) =>
        Option.some(Either.getOrElse(decodeOtp(text), () => ({ requestDate: null, deliveryStatus: null })))
      ),
      Effect.catchIf(
        (f): f is Refusal => f._tag === "Status" && f.status === 404,
        () => Effect.succeedNone
      ),
      Effect.mapError((f) => registryError(f))
    )

  const brandStatus = (brandId: string): Effect.Effect<BrandReport, RegistryError> =>
    Effect.gen(function*() {
      const brand = yield* call("GET", path("brand", brandId), decodeBrand)
      const report: BrandReport = {
        brandId: brand.brandId,
        status: "pending",
        identityStatus: identityOf(brand.identityStatus),
        failureReasons: [],
        otpSentAt: null
      }
      const soleProprietor = brand.entityType === "SOLE_PROPRIETOR"
      const failed = brand.status === "REGISTRATION_FAILED" ||
        (!soleProprietor && brand.identityStatus === "UNVERIFIED" && brand.status === "OK")
      if (failed) {
        return {
          ...report,
          status: "rejected",
          failureReasons: reasonList(
            brand.failureReasons,
            `The registry could not verify the brand (${brand.status}, ${brand.identityStatus})`
          )
        }
      }
      const verified = VERIFIED.has(brand.identityStatus ?? "")
      if (!soleProprietor) return verified ? { ...report, status: "accepted" } : report
      const otp = yield* otpStatus(brandId)
      const otpSentAt = Option.match(otp, { onNone: () => null, onSome: (o) => o.requestDate ?? null })
      if (verified || Option.exists(otp, (o) => o.deliveryStatus === "VERIFIED")) {
        return { ...report, status: "accepted", otpSentAt }
      }
      if (Option.isSome(otp)) {
        return { ...report, status: "otp_pending", otpSentAt }
      }
      // No PIN yet: text the first one; a refusal means Telnyx is not ready for it, so the brand stays pending.
      return yield* textPin(brandId).pipe(
        Effect.map((sentAt): BrandReport => ({ ...report, status: "otp_pending", otpSentAt: sentAt })),
        Effect.catchIf((e) => e.reason === "rejected", () => Effect.succeed(report))
      )
    })

  /** Why Telnyx refused a PIN: expired when its PIN is, wrong otherwise; `rejected` when no PIN is awaited. */
  const pinRefused = (brandId: string, r: Refusal) =>
    Effect.gen(function*() {
      const words = refusal(r)
      if (r.status === 404) return yield* rejected(words)
      const otp = yield* Effect.orElseSucceed(otpStatus(brandId), () =>
        Option.some({ requestDate: null, deliveryStatus: null }))
      if (Option.isNone(otp) || otp.value.deliveryStatus === "VERIFIED") {
        return yield* rejected(words)
      }
      const sentAt = otp.value.requestDate ? Date.parse(otp.value.requestDate) : Number.NaN
      const expired = otp.value.deliveryStatus === "EXPIRED" ||
        (yield* Clock.currentTimeMillis) - sentAt > OTP_TTL_MILLIS
      return yield* new OtpRejected({ reason: expired ? "expired" : "wrong", message: words })
    })

  return Registry.of({
    // One messaging profile for the service: every number we buy is attached to it (telnyxInventory.ts).
    messagingProfile: () => Effect.succeed(config.messagingProfileId),
    fileBrand: (_workspaceId, business) =>
      call("POST", path("brand"), decodeBrand, brandBody(business, options)).pipe(
        Effect.map((b): BrandReport => ({
          brandId: b.brandId,
          status: "pending",
          identityStatus: identityOf(b.identityStatus),
          failureReasons: [],
          otpSentAt: null
        })),
        Effect.withSpan("Registry.fileBrand", {
          attributes: { "carrier.name": "telnyx", "brand.entityType": business.entityType }
        })
      ),

    sendOtp: (_workspaceId, brandId) =>
      textPin(brandId).pipe(
        // A brand awaiting its PIN is self-declared until it is entered (research telnyx.md §4).
        Effect.map((otpSentAt): BrandReport => ({
          brandId,
          status: "otp_pending",
          identityStatus: "SELF_DECLARED",
          failureReasons: [],
          otpSentAt
        })),
        Effect.withSpan("Registry.sendOtp", { attributes: { "carrier.name": "telnyx" } })
      ),

    verifyOtp: (_workspaceId, brandId, pin) =>
      telnyx({ method: "PUT", path: path("brand", brandId, "smsOtp"), body: { otpPin: pin }, retryOn: WRITE_RETRY_ON })
        .pipe(
          Effect.catchAll((f) =>
            Either.match(classify(f), {
              onLeft: (m) => Effect.fail(unavailable(m)),
              onRight: (r) => pinRefused(brandId, r)
            })
          ),
          // The PIN is confirmed (204), which makes the brand VERIFIED: so it is even if Telnyx's read lags or fails.
          Effect.zipRight(Effect.orElseSucceed(brandStatus(brandId), (): BrandReport | null => null)),
          Effect.map((read): BrandReport => ({
            brandId,
            identityStatus: read !== null && VERIFIED.has(read.identityStatus) ? read.identityStatus : "VERIFIED",
            failureReasons: [],
            otpSentAt: read?.otpSentAt ?? null,
            status: "accepted"
          })),
          Effect.withSpan("Registry.verifyOtp", { attributes: { "carrier.name": "telnyx" } })
        ),

    fileCampaign: (_workspaceId, brandId, campaign) =>
      call("POST", path("campaignBuilder"), decodeCampaign, campaignBody(brandId, campaign, options)).pipe(
        // A fresh filing is under review whatever Telnyx's first word.
        Effect.map((c): CampaignReport => ({
          campaignId: c.campaignId,
          brandId: c.brandId,
          status: "pending",
          failureReasons: []
        })),
        Effect.withSpan("Registry.fileCampaign", {
          attributes: { "carrier.name": "telnyx", "campaign.usecase": campaign.useCase }
        })
      ),

    brandStatus: (_workspaceId, brandId) =>
      brandStatus(brandId).pipe(Effect.withSpan("Registry.brandStatus", { attributes: { "carrier.name": "telnyx" } })),

    campaignStatus: (_workspaceId, campaignId) =>
      call("GET", path("campaign", campaignId), decodeCampaign).pipe(
        Effect.map(campaignReport),
        Effect.withSpan("Registry.campaignStatus", { attributes: { "carrier.name": "telnyx" } })
      ),

    assignNumber: (_workspaceId, campaignId, e164) =>
      call("POST", path("phone_number_campaigns"), decodeAssignment, { phoneNumber: e164, campaignId }).pipe(
        Effect.map(assignmentReport),
        Effect.withSpan("Registry.assignNumber", { attributes: { "carrier.name": "telnyx" } })
      ),

    assignmentStatus: (_workspaceId, e164) =>
      call("GET", path("phone_number_campaigns", e164), decodeAssignment).pipe(
        Effect.map(assignmentReport),
        Effect.withSpan("Registry.assignmentStatus", { attributes: { "carrier.name": "telnyx" } })
      )
  })
}

export const layer = (config: TelnyxConfig, options?: TelnyxRegistryOptions): Layer.Layer<Registry> =>
  Layer.succeed(Registry, make(config, options))
