/**
 * Telnyx 10DLC webhooks: which brand or campaign the documented `10dlc.brand.update` and
 * `10dlc.campaign.update` payloads name, nothing for other events or payloads without the id, and
 * the signature checked by telnyxWebhooks.ts before anything is read.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { registryChange, verifyRegistryChange } from "../../adapters/carrier/telnyxRegistryWebhooks.ts"
import {
  brandUpdatePayload,
  campaignUpdatePayload,
  createEd25519Signer,
  inboundPayload,
  type SignedWebhook,
  startFakeTelnyx
} from "../support/fakeTelnyx.ts"

const BRAND = "4b20017f-8da9-a992-a6c0-683072fb7729"
const CAMPAIGN = "4b300178-131c-d902-d54e-72d90ba1620j"

/** Signed as Telnyx signs, by the fake's key; the fake serves no request here. */
const withSigned = <A>(
  use: (
    sign: (eventType: string, payload: unknown, wrongKey?: true) => SignedWebhook,
    publicKey: string
  ) => Effect.Effect<A, unknown>
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startFakeTelnyx()),
    (fake) => {
      const other = createEd25519Signer()
      return use(
        (eventType, payload, wrongKey) => fake.signedWebhook(eventType, payload, wrongKey ? { signer: other } : {}),
        fake.publicKey
      )
    },
    (fake) => Effect.promise(() => fake.stop())
  )

const body = (eventType: string, payload: unknown) =>
  JSON.stringify({
    data: { record_type: "event", id: "evt-1", event_type: eventType, occurred_at: "2026-11-24T03:00:00Z", payload }
  })

describe("Telnyx 10DLC webhooks: registryChange", () => {
  it("a brand update names the brand (BRAND_ADD and BRAND_OTP_VERIFIED alike)", () => {
    assert.deepStrictEqual(
      registryChange(body("10dlc.brand.update", brandUpdatePayload(BRAND))),
      Option.some({ kind: "brand" as const, id: BRAND })
    )
    assert.deepStrictEqual(
      registryChange(body("10dlc.brand.update", brandUpdatePayload(BRAND, "BRAND_OTP_VERIFIED"))),
      Option.some({ kind: "brand" as const, id: BRAND })
    )
  })

  it("a campaign update names the campaign, not its brand, whatever its type and status", () => {
    for (
      const [type, status] of [["MNO_REVIEW", "ACCEPTED"], ["TELNYX_REVIEW", "REJECTED"], [
        "REGISTRATION",
        "failed"
      ]] as const
    ) {
      assert.deepStrictEqual(
        registryChange(body("10dlc.campaign.update", campaignUpdatePayload(CAMPAIGN, BRAND, type, status))),
        Option.some({ kind: "campaign" as const, id: CAMPAIGN })
      )
    }
  })

  it("a phone number's update names the number, for its assignment to be read again", () => {
    // Compared unwrapped: deep equality of two Options passes vacuously under @effect/vitest.
    const change = registryChange(
      body("10dlc.phone_number.update", { phoneNumber: "+13122010001", campaignId: CAMPAIGN })
    )
    assert.deepStrictEqual(Option.getOrNull(change), { kind: "number", id: "+13122010001" })
  })

  it("other events, payloads without the id, and bodies that are not Telnyx events name nothing", () => {
    assert.isTrue(
      Option.isNone(
        registryChange(body("message.received", inboundPayload({ from: "+13125550100", to: "+13122010001" })))
      )
    )
    assert.isTrue(Option.isNone(registryChange(body("10dlc.phone_number.update", { campaignId: CAMPAIGN }))))
    assert.isTrue(Option.isNone(registryChange(body("10dlc.brand.update", { brandName: "Acme", status: "success" }))))
    assert.isTrue(Option.isNone(registryChange(body("10dlc.campaign.update", { brandId: BRAND, campaignId: "" }))))
    assert.isTrue(Option.isNone(registryChange("not json")))
    assert.isTrue(
      Option.isNone(registryChange(JSON.stringify({ event_type: "10dlc.brand.update", payload: { brandId: BRAND } })))
    )
  })
})

describe("Telnyx 10DLC webhooks: verifyRegistryChange", () => {
  it.live("a signed brand update names the brand; a signed messaging event names nothing", () =>
    withSigned((sign, publicKey) =>
      Effect.gen(function*() {
        const now = Math.floor(Date.now() / 1000)
        const check = (hook: SignedWebhook) =>
          verifyRegistryChange({
            rawBody: hook.rawBody,
            signature: hook.headers["telnyx-signature-ed25519"],
            timestamp: hook.headers["telnyx-timestamp"],
            publicKey,
            nowSeconds: now
          })
        const brand = yield* check(sign("10dlc.brand.update", brandUpdatePayload(BRAND)))
        assert.deepStrictEqual(brand, Option.some({ kind: "brand" as const, id: BRAND }))
        const campaign = yield* check(sign("10dlc.campaign.update", campaignUpdatePayload(CAMPAIGN, BRAND)))
        assert.deepStrictEqual(campaign, Option.some({ kind: "campaign" as const, id: CAMPAIGN }))
        const message = yield* check(
          sign("message.received", inboundPayload({ from: "+13125550100", to: "+13122010001" }))
        )
        assert.isTrue(Option.isNone(message))

        const forged = yield* Effect.flip(check(sign("10dlc.brand.update", brandUpdatePayload(BRAND), true)))
        assert.deepInclude(forged, { _tag: "TelnyxWebhookError", reason: "signature" })
      })
    ))
})
