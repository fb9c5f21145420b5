/**
 * Telnyx's side of the carrier callback port (core/carrier/callbacks.ts), served at
 * `POST /v1/carrier/telnyx`: every Telnyx webhook is verified once (telnyxWebhooks.ts: Ed25519
 * signature, timestamp window, v2 envelope), then read as the event it carries: messaging
 * (telnyxWebhooks.ts), a call's step (telnyxCallWebhooks.ts) or a 10DLC change (telnyxRegistryWebhooks.ts).
 */
import { Effect, Either, Layer, Option, Redacted } from "effect"
import { CarrierCallbacks, CarrierEvent } from "../../core/carrier/callbacks.ts"
import { InvalidArgument, Unauthenticated } from "../../core/kernel/errors.ts"
import { parseCallEvent } from "./telnyxCallWebhooks.ts"
import { registryChange } from "./telnyxRegistryWebhooks.ts"
import { SIGNATURE_HEADER, type TelnyxWebhookEvent, TIMESTAMP_HEADER, verifyAndParse } from "./telnyxWebhooks.ts"

export interface TelnyxCallbacksOptions {
  /** The account's Ed25519 public key (TELNYX_PUBLIC_KEY): base64 of the 32 raw bytes. */
  readonly publicKey: Redacted.Redacted<string>
}

/**
 * What a verified body is about. verifyAndParse reads messaging events and passes the rest as
 * `Ignored`; a call event without the fields it needs is acknowledged as ignored too, since
 * Telnyx sending it again would not add them.
 */
const eventOf = (parsed: TelnyxWebhookEvent, rawBody: string): CarrierEvent => {
  switch (parsed._tag) {
    case "Inbound":
      return CarrierEvent.Inbound({ message: parsed.message })
    case "Status":
      return CarrierEvent.Status({ report: parsed.report })
    case "Ignored": {
      const call = Option.flatten(Either.getRight(parseCallEvent(rawBody)))
      if (Option.isSome(call)) return CarrierEvent.Call({ event: call.value })
      const change = registryChange(rawBody)
      if (Option.isSome(change)) return CarrierEvent.RegistryChange({ change: change.value })
      return CarrierEvent.Ignored({ eventType: parsed.eventType })
    }
  }
}

export const make = (options: TelnyxCallbacksOptions): CarrierCallbacks => ({
  name: "telnyx",
  parse: ({ headers, rawBody, now }) =>
    verifyAndParse({
      rawBody,
      signature: headers[SIGNATURE_HEADER] ?? null,
      timestamp: headers[TIMESTAMP_HEADER] ?? null,
      publicKey: Redacted.value(options.publicKey),
      nowSeconds: Math.floor(now / 1000)
    }).pipe(
      Effect.mapError((e) =>
        e.reason === "malformed"
          ? new InvalidArgument({ message: e.message })
          : new Unauthenticated({ message: e.message })
      ),
      Effect.map((parsed) => eventOf(parsed, rawBody))
    )
})

export const layer = (options: TelnyxCallbacksOptions) => Layer.succeed(CarrierCallbacks, make(options))
