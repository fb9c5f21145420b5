/**
 * The Telnyx 10DLC registry against the fake Telnyx (test/support/fakeTelnyx.ts), over real HTTP,
 * beyond the port's contract (carrier.registry.contract.test.ts):
 * the filings' bodies, reviews read back as the port's statuses, the sole-proprietor PIN, and
 * both of the registry's error shapes, 429s, 5xx, timeouts and malformed answers as RegistryError.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Schema } from "effect"
import type * as TelnyxClient from "../../adapters/carrier/telnyxClient.ts"
import * as TelnyxRegistry from "../../adapters/carrier/telnyxRegistry.ts"
import { BusinessInput, CampaignInput, composeCampaign } from "../../core/registration/input.ts"
import { type OtpRejected, Registry, type RegistryError } from "../../core/registration/registry.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"

const WS = "ws_test"
const WEBHOOK = "https://switchboard.example.com/webhooks/telnyx"

const fake = useFakeTelnyx()

const withRegistry = <A, E>(
  use: (registry: Registry) => Effect.Effect<A, E>,
  config: Partial<TelnyxClient.TelnyxConfig> = {}
) =>
  Effect.flatMap(Registry, use).pipe(
    Effect.provide(
      TelnyxRegistry.layer(
        { apiKey: Redacted.make(fake().apiKey), messagingProfileId: "profile-1", baseUrl: fake().baseUrl, ...config },
        { webhookUrl: WEBHOOK }
      )
    )
  )

/** Decoded as the API decodes a caller's input: EIN without its dash, phones to E.164. */
const business = Schema.decodeUnknownSync(BusinessInput)({
  displayName: "Acme Plumbing",
  companyName: "Acme Plumbing LLC",
  ein: "12-3456789",
  phone: "(312) 201-0001",
  email: "owner@acme.example.com",
  vertical: "CONSTRUCTION",
  street: "1 Main St",
  city: "Chicago",
  state: "IL",
  postalCode: "60601",
  website: "https://acme.example.com"
})
const soleProprietor = Schema.decodeUnknownSync(BusinessInput)({
  entityType: "SOLE_PROPRIETOR",
  displayName: "Jo's Tutoring",
  firstName: "Jo",
  lastName: "Doe",
  mobilePhone: "312.201.0002",
  email: "jo@example.com",
  vertical: "EDUCATION",
  street: "2 Elm St",
  city: "Chicago",
  state: "IL",
  postalCode: "60602"
})
const campaign = composeCampaign(
  business,
  Schema.decodeUnknownSync(CampaignInput)({
    useCase: "ACCOUNT_NOTIFICATION",
    samples: [
      "Acme: your plumber arrives at 10am. Reply STOP to opt out.",
      "Acme: invoice #42 is paid. Reply HELP for help."
    ],
    helpMessage: "Acme Plumbing: call 312-201-0001 for help. Reply STOP to opt out.",
    embeddedPhone: true
  })
)

/** The failure of an effect: never a defect, never holding the API key. */
const failure = <E extends RegistryError | OtpRejected>(effect: Effect.Effect<unknown, E>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Fail", `expected a failure, got ${String(exit)}`)
    const error = ((exit as Exit.Failure<unknown, E>).cause as unknown as { error: E }).error
    assert.notInclude(error.message, fake().apiKey)
    return error
  })

const bodyOf = (method: string, path: string) =>
  fake().requests.find((r) => r.method === method && r.path === path)?.json as Record<string, unknown>
const count = (method: string, path: string) =>
  fake().requests.filter((r) => r.method === method && r.path === path).length

/** An accepted business brand, for campaign filings. */
const acceptedBrand = (registry: Registry) =>
  Effect.gen(function*() {
    const { brandId } = yield* registry.fileBrand(WS, business)
    assert.strictEqual((yield* registry.brandStatus(WS, brandId)).status, "accepted")
    return brandId
  })

describe("Telnyx registry: brands", () => {
  it.live("files a business brand with the mapped fields, pending, then accepted on a status read", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const filed = yield* registry.fileBrand(WS, business)
        assert.deepStrictEqual(filed, {
          brandId: filed.brandId,
          status: "pending",
          identityStatus: "UNVERIFIED",
          failureReasons: [],
          otpSentAt: null
        })
        assert.isTrue(fake().brands.has(filed.brandId))
        const body = bodyOf("POST", "/v2/10dlc/brand")
        assert.deepInclude(body, {
          entityType: "PRIVATE_PROFIT",
          displayName: "Acme Plumbing",
          companyName: "Acme Plumbing LLC",
          ein: "123456789",
          phone: "+13122010001",
          email: "owner@acme.example.com",
          vertical: "CONSTRUCTION",
          country: "US",
          state: "IL",
          postalCode: "60601",
          website: "https://acme.example.com",
          webhookURL: WEBHOOK
        })
        assert.notProperty(body, "firstName")
        assert.notProperty(body, "businessContactEmail")
        const read = yield* registry.brandStatus(WS, filed.brandId)
        assert.deepStrictEqual(read, {
          brandId: filed.brandId,
          status: "accepted",
          identityStatus: "VERIFIED",
          failureReasons: [],
          otpSentAt: null
        })
        assert.strictEqual(count("POST", `/v2/10dlc/brand/${filed.brandId}/smsOtp`), 0)
      })
    ))

  it.live("the brand's identityStatus is the registry's own word (VETTED_VERIFIED after a vetting), not derived from the step", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const { brandId } = yield* registry.fileBrand(WS, business)
        yield* registry.brandStatus(WS, brandId)
        const brands = fake().brands as Map<string, Record<string, unknown>>
        brands.set(brandId, { ...brands.get(brandId), identityStatus: "VETTED_VERIFIED" })
        assert.deepInclude(yield* registry.brandStatus(WS, brandId), {
          status: "accepted",
          identityStatus: "VETTED_VERIFIED"
        })
        // A word Telnyx may add later is not taken for verified.
        brands.set(brandId, { ...brands.get(brandId), identityStatus: "SOMETHING_NEW" })
        assert.strictEqual((yield* registry.brandStatus(WS, brandId)).identityStatus, "UNVERIFIED")
      })
    ))

  it.live("a status read of an unknown brand is rejected with the registry's words", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const error = yield* failure(registry.brandStatus(WS, "no-such-brand"))
        assert.deepInclude(error, { _tag: "RegistryError", reason: "rejected", message: "Brand not found" })
      })
    ))
})

describe("Telnyx registry: the sole-proprietor PIN", () => {
  it.live("the first status read texts a PIN; a wrong PIN is `wrong`, the right one accepts the brand", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const { brandId } = yield* registry.fileBrand(WS, soleProprietor)
        const body = bodyOf("POST", "/v2/10dlc/brand")
        assert.deepInclude(body, {
          entityType: "SOLE_PROPRIETOR",
          firstName: "Jo",
          lastName: "Doe",
          mobilePhone: "+13122010002"
        })
        assert.notProperty(body, "ein")

        const waiting = yield* registry.brandStatus(WS, brandId)
        assert.strictEqual(waiting.status, "otp_pending")
        assert.strictEqual(waiting.identityStatus, "SELF_DECLARED")
        assert.isNotNull(waiting.otpSentAt)
        const pinSms = bodyOf("POST", `/v2/10dlc/brand/${brandId}/smsOtp`)["pinSms"] as string
        assert.include(pinSms, "@OTP_PIN@")
        // A second read does not text again.
        assert.strictEqual((yield* registry.brandStatus(WS, brandId)).status, "otp_pending")
        assert.strictEqual(count("POST", `/v2/10dlc/brand/${brandId}/smsOtp`), 1)

        const pin = fake().otps.get(brandId)!.pin
        const wrong = yield* failure(registry.verifyOtp(WS, brandId, pin === "000000" ? "111111" : "000000"))
        assert.deepInclude(wrong, { _tag: "OtpRejected", reason: "wrong", message: "The OTP pin is invalid." })

        // Telnyx's own validation (a PIN is 4 to 10 characters) in the 10DLC shape is a wrong PIN too.
        const short = yield* failure(registry.verifyOtp(WS, brandId, "12"))
        assert.deepInclude(short, {
          _tag: "OtpRejected",
          reason: "wrong",
          message: "body.otpPin: ensure this value has 4 to 10 characters"
        })

        const accepted = yield* registry.verifyOtp(WS, brandId, pin)
        assert.deepInclude(accepted, { status: "accepted", identityStatus: "VERIFIED" })
        assert.deepStrictEqual(bodyOf("PUT", `/v2/10dlc/brand/${brandId}/smsOtp`), {
          otpPin: pin === "000000" ? "111111" : "000000"
        })
        assert.strictEqual((yield* registry.brandStatus(WS, brandId)).status, "accepted")
      })
    ))

  it.live("sendOtp texts a fresh PIN (the old one no longer works); an expired PIN is `expired`", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().setReview({ otpPin: "123456" })
        const { brandId } = yield* registry.fileBrand(WS, soleProprietor)
        yield* registry.brandStatus(WS, brandId)
        fake().setReview({ otpPin: "654321" })
        const resent = yield* registry.sendOtp(WS, brandId)
        assert.strictEqual(resent.status, "otp_pending")
        assert.strictEqual(count("POST", `/v2/10dlc/brand/${brandId}/smsOtp`), 2)
        assert.strictEqual((yield* failure(registry.verifyOtp(WS, brandId, "123456"))).reason, "wrong")

        fake().otps.get(brandId)!.deliveryStatus = "EXPIRED"
        const expired = yield* failure(registry.verifyOtp(WS, brandId, "654321"))
        assert.deepInclude(expired, {
          _tag: "OtpRejected",
          reason: "expired",
          message: "The OTP pin has expired. Request a new one."
        })
      })
    ))

  it.live("a rejected sole proprietor is rejected with its reasons, and no PIN is texted", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().setReview({
          brand: { outcome: "rejected", failureReasons: "Mobile phone is not a US or Canadian mobile" }
        })
        const { brandId } = yield* registry.fileBrand(WS, soleProprietor)
        const read = yield* registry.brandStatus(WS, brandId)
        assert.deepStrictEqual(read.failureReasons, ["Mobile phone is not a US or Canadian mobile"])
        assert.strictEqual(read.status, "rejected")
        assert.strictEqual(count("POST", `/v2/10dlc/brand/${brandId}/smsOtp`), 0)
      })
    ))

  it.live("a rate-limited PIN check is unavailable, not a wrong PIN", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().setReview({ otpPin: "123456" })
        const { brandId } = yield* registry.fileBrand(WS, soleProprietor)
        yield* registry.brandStatus(WS, brandId)
        fake().script({ type: "rateLimit", retryAfterSeconds: 0 }, 3)
        const error = yield* failure(registry.verifyOtp(WS, brandId, "123456"))
        assert.deepInclude(error, { _tag: "RegistryError", reason: "unavailable" })
        assert.strictEqual(fake().otps.get(brandId)!.deliveryStatus, "DELIVERED_HANDSET")
      })
    ))

  it.live("a PIN for a brand that awaits none, or a PIN sent to a business brand, is rejected with the registry's words", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const brandId = yield* acceptedBrand(registry)
        const verify = yield* failure(registry.verifyOtp(WS, brandId, "123456"))
        assert.deepInclude(verify, {
          _tag: "RegistryError",
          reason: "rejected",
          message: "No OTP verification is pending for this brand."
        })
        const send = yield* failure(registry.sendOtp(WS, brandId))
        assert.deepInclude(send, {
          _tag: "RegistryError",
          reason: "rejected",
          message: "OTP verification is only available for SOLE_PROPRIETOR brands."
        })
      })
    ))
})

describe("Telnyx registry: campaigns", () => {
  it.live("files the campaign with the mapped fields, then reads it approved", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const brandId = yield* acceptedBrand(registry)
        const filed = yield* registry.fileCampaign(WS, brandId, campaign)
        assert.deepStrictEqual(filed, { campaignId: filed.campaignId, brandId, status: "pending", failureReasons: [] })
        const body = bodyOf("POST", "/v2/10dlc/campaignBuilder")
        assert.deepInclude(body, {
          brandId,
          usecase: "ACCOUNT_NOTIFICATION",
          description: campaign.description,
          messageFlow: campaign.messageFlow,
          sample1: campaign.samples![0],
          sample2: campaign.samples![1],
          helpMessage: campaign.helpMessage,
          optinKeywords: "START",
          optoutKeywords: "STOP",
          helpKeywords: "HELP",
          subscriberOptout: true,
          embeddedLink: false,
          embeddedPhone: true,
          webhookURL: WEBHOOK
        })
        assert.notProperty(body, "sample3")
        const read = yield* registry.campaignStatus(WS, filed.campaignId)
        assert.deepStrictEqual(read, { campaignId: filed.campaignId, brandId, status: "approved", failureReasons: [] })
      })
    ))

  it.live("a rejected campaign reports the registry's reasons, whichever failed state it ends in", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const brandId = yield* acceptedBrand(registry)
        fake().setReview({
          campaign: {
            outcome: "rejected",
            failureReasons: "Opt-in flow does not show consent",
            campaignStatus: "MNO_REJECTED"
          }
        })
        const { campaignId } = yield* registry.fileCampaign(WS, brandId, campaign)
        const read = yield* registry.campaignStatus(WS, campaignId)
        assert.strictEqual(read.status, "rejected")
        assert.deepStrictEqual(read.failureReasons, ["Opt-in flow does not show consent"])
      })
    ))

  it.live("a campaign under a brand that is not verified is rejected with the registry's words", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const { brandId } = yield* registry.fileBrand(WS, business)
        const error = yield* failure(registry.fileCampaign(WS, brandId, campaign))
        assert.deepInclude(error, {
          reason: "rejected",
          message: "The brand must be verified before a campaign can be created."
        })
      })
    ))
})

describe("Telnyx registry: assigning numbers to the campaign", () => {
  const NUMBER = "+13122010007"
  /** An approved campaign (read once, so the fake settles it). */
  const activeCampaign = (registry: Registry) =>
    Effect.gen(function*() {
      const filed = yield* registry.fileCampaign(WS, yield* acceptedBrand(registry), campaign)
      assert.strictEqual((yield* registry.campaignStatus(WS, filed.campaignId)).status, "approved")
      return filed.campaignId
    })

  it.live("posts {phoneNumber, campaignId} to phone_number_campaigns, pending, then reads it assigned", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().addNumber(NUMBER)
        const campaignId = yield* activeCampaign(registry)
        const asked = yield* registry.assignNumber(WS, campaignId, NUMBER)
        assert.deepStrictEqual(asked, { phoneNumber: NUMBER, status: "pending", failureReasons: [] })
        assert.deepStrictEqual(bodyOf("POST", "/v2/10dlc/phone_number_campaigns"), { phoneNumber: NUMBER, campaignId })
        assert.deepStrictEqual(yield* registry.assignmentStatus(WS, NUMBER), {
          phoneNumber: NUMBER,
          status: "assigned",
          failureReasons: []
        })
        // The number's `+` is URL-encoded in the read's path.
        assert.isTrue(
          fake().requests.some((r) =>
            r.method === "GET" && r.path === "/v2/10dlc/phone_number_campaigns/%2B13122010007"
          )
        )
      })
    ))
})

describe("Telnyx registry: campaign statuses", () => {
  it("MNO_PROVISIONED is approved; the failed, suspended and expired states are rejected; the rest pending", () => {
    const report = (campaignStatus: string, submissionStatus = "CREATED") =>
      TelnyxRegistry.campaignReport({
        campaignId: "c",
        brandId: "b",
        campaignStatus,
        submissionStatus,
        failureReasons: null
      })
    assert.strictEqual(report("MNO_PROVISIONED").status, "approved")
    for (
      const s of [
        "TCR_FAILED",
        "TELNYX_FAILED",
        "MNO_REJECTED",
        "MNO_PROVISIONING_FAILED",
        "TCR_SUSPENDED",
        "TCR_EXPIRED"
      ]
    ) {
      assert.deepStrictEqual(report(s).failureReasons, [`The registry rejected the campaign (${s})`])
    }
    assert.strictEqual(report("TCR_PENDING", "FAILED").status, "rejected")
    for (const s of ["TCR_PENDING", "TCR_ACCEPTED", "TELNYX_ACCEPTED", "MNO_PENDING", "MNO_ACCEPTED"]) {
      assert.strictEqual(report(s).status, "pending")
    }
  })
})

describe("Telnyx registry: failures", () => {
  it.live("the v2 error envelope: rejected with its detail", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().script({
          type: "error",
          status: 400,
          code: "10015",
          title: "Invalid parameter",
          detail: "The brand's EIN is already registered."
        })
        const error = yield* failure(registry.fileBrand(WS, business))
        assert.deepInclude(error, {
          _tag: "RegistryError",
          reason: "rejected",
          message: "The brand's EIN is already registered."
        })
      })
    ))

  it.live("the 10DLC validation shape `{detail: [{loc, msg, type}]}`: rejected with each field's message", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().script({
          type: "validation",
          detail: [
            { loc: ["body", "state"], msg: "must be a 2-letter state code", type: "value_error" },
            { loc: ["body", "postalCode"], msg: "must be 5 digits", type: "value_error" }
          ]
        })
        const error = yield* failure(registry.fileBrand(WS, business))
        assert.deepInclude(error, {
          reason: "rejected",
          message: "body.state: must be a 2-letter state code; body.postalCode: must be 5 digits"
        })
      })
    ))

  it.live("429 on a filing is retried, then unavailable; a filing is not retried on a 500", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().script({ type: "rateLimit", retryAfterSeconds: 0 }, 3)
        const limited = yield* failure(registry.fileBrand(WS, business))
        assert.strictEqual(limited.reason, "unavailable")
        assert.include(limited.message, "10011")
        assert.notInclude(limited.message, "may have gone through")
        assert.strictEqual(fake().requests.length, 3)
        assert.strictEqual(fake().brands.size, 0)

        fake().reset()
        fake().script({ type: "serverError" })
        const failed = yield* failure(registry.fileBrand(WS, business))
        assert.strictEqual(failed.reason, "unavailable")
        assert.include(failed.message, "HTTP 500")
        assert.include(failed.message, "it may have gone through")
        assert.strictEqual(fake().requests.length, 1)
      })
    ))

  it.live("a 429 that clears lets the filing through", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        fake().script({ type: "rateLimit", retryAfterSeconds: 0 })
        const filed = yield* registry.fileBrand(WS, business)
        assert.isTrue(fake().brands.has(filed.brandId))
        assert.strictEqual(fake().brands.size, 1)
      })
    ))

  it.live("a status read retries 5xx, then is unavailable", () =>
    withRegistry((registry) =>
      Effect.gen(function*() {
        const brandId = yield* acceptedBrand(registry)
        fake().script({ type: "serverError", status: 503 }, 3)
        const error = yield* failure(registry.brandStatus(WS, brandId))
        assert.strictEqual(error.reason, "unavailable")
        assert.strictEqual(count("GET", `/v2/10dlc/brand/${brandId}`), 4)
      })
    ))

  it.live("a wrong API key, a timeout and a malformed answer are unavailable", () =>
    Effect.gen(function*() {
      const auth = yield* failure(
        withRegistry((r) => r.fileBrand(WS, business), { apiKey: Redacted.make("KEY_wrong") })
      )
      assert.deepInclude(auth, { reason: "unavailable" })
      assert.include(auth.message, "refused our account")

      fake().script({ type: "hang" })
      const hung = yield* failure(withRegistry((r) => r.campaignStatus(WS, "c-1"), { timeoutMs: 200 }))
      assert.deepInclude(hung, { reason: "unavailable", message: "Telnyx did not answer within 200 ms" })

      fake().script({ type: "malformed", body: "{\"status\": \"OK\"}" })
      const malformed = yield* failure(withRegistry((r) => r.brandStatus(WS, "b-1")))
      assert.strictEqual(malformed.reason, "unavailable")
      assert.include(malformed.message, "malformed")
    }))
})
