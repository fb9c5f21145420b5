/**
 * Telnyx 10DLC webhooks (research telnyx.md §4 "10DLC webhooks"): which brand, campaign or number a
 * `10dlc.brand.update`, `10dlc.campaign.update` or `10dlc.phone_number.update` is about (campaign
 * webhooks also cover the campaign's numbers; a number's payload is read for `phoneNumber`, its
 * field names being unverified). Their payloads are hints (whether a
 * brand's carries its identity status is unverified), so the service re-reads the status through
 * the Registry port rather than trusting them. Signature and freshness are checked first by
 * telnyxWebhooks.ts's `verifyAndParse`, which passes these events through as `Ignored`.
 */
import { Effect, Option, Schema } from "effect"
import type { RegistryChange } from "../../core/carrier/callbacks.ts"
import { Envelope, type TelnyxWebhookError, type TelnyxWebhookInput, verifyAndParse } from "./telnyxWebhooks.ts"

export type { RegistryChange }

const Json = Schema.parseJson(Envelope)
const BrandPayload = Schema.Struct({ brandId: Schema.NonEmptyString })
const CampaignPayload = Schema.Struct({ campaignId: Schema.NonEmptyString })
const NumberPayload = Schema.Struct({ phoneNumber: Schema.NonEmptyString })

/**
 * The brand, campaign or number an already verified Telnyx webhook body is about; none for any other
 * event (messaging) or a payload without the id.
 */
export const registryChange = (rawBody: string): Option.Option<RegistryChange> =>
  Option.flatMap(Schema.decodeUnknownOption(Json)(rawBody), ({ data }) => {
    switch (data.event_type) {
      case "10dlc.brand.update":
        return Option.map(
          Schema.decodeUnknownOption(BrandPayload)(data.payload),
          (p) => ({ kind: "brand" as const, id: p.brandId })
        )
      case "10dlc.campaign.update":
        return Option.map(
          Schema.decodeUnknownOption(CampaignPayload)(data.payload),
          (p) => ({ kind: "campaign" as const, id: p.campaignId })
        )
      case "10dlc.phone_number.update":
        return Option.map(
          Schema.decodeUnknownOption(NumberPayload)(data.payload),
          (p) => ({ kind: "number" as const, id: p.phoneNumber })
        )
      default:
        return Option.none()
    }
  })

/** Verifies a Telnyx webhook (signature, timestamp, envelope), then names the brand, campaign or number it is about. */
export const verifyRegistryChange = (
  input: TelnyxWebhookInput
): Effect.Effect<Option.Option<RegistryChange>, TelnyxWebhookError> =>
  Effect.as(verifyAndParse(input), registryChange(input.rawBody))
