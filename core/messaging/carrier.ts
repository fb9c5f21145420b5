/**
 * The messaging carrier port. Adapters: adapters/carrier/simulated (deterministic; the
 * embedded default) and adapters/carrier/telnyx (Telnyx v2). Inbound traffic and status reports come
 * back as carrier callbacks (core/carrier/), which call the Messaging service.
 */
import { Context, Data, Effect } from "effect"
import type { DeliveryStatus } from "./deliveryStatus.ts"

export interface OutboundMessage {
  readonly from: string
  readonly to: string
  readonly body: string
  /** Publicly fetchable (signed) URLs of the stored media; empty for SMS. */
  readonly mediaUrls: ReadonlyArray<string>
}

export interface Accepted {
  readonly carrierMessageId: string
  /** Normally `queued`. */
  readonly status: DeliveryStatus
}

/**
 * `rejected`: the carrier refused this message (4xx); retrying will not help.
 * `opted_out`: refused because the recipient opted out with the carrier (Telnyx 40300).
 * `unavailable`: rate limited, 5xx, timeout or network failure; the caller may retry later.
 */
export class CarrierError extends Data.TaggedError("CarrierError")<{
  readonly reason: "rejected" | "opted_out" | "unavailable"
  readonly message: string
}> {}

export interface Carrier {
  /**
   * Hands one SMS or MMS (with `mediaUrls`) to the carrier: `Accepted` with the carrier's own id,
   * a different one for each message. Only a number on our carrier account sends: any other `from`
   * is `rejected`, with the carrier's words.
   */
  readonly send: (message: OutboundMessage) => Effect.Effect<Accepted, CarrierError>
  /**
   * The texts the carrier answers itself when a whole text is one of them (compared as
   * core/optouts/keywords.ts `carrierWordOf` reads it: upper case, spaces collapsed, punctuation
   * kept); the service records such a keyword but sends no reply of its own.
   */
  readonly answersKeywords: ReadonlySet<string>
}
export const Carrier = Context.GenericTag<Carrier>("core/Carrier")

/** Inbound media as the carrier reports it; fetched and stored by the inbound pipeline. */
export interface InboundMedia {
  readonly url: string
  readonly contentType: string | null
}

export interface InboundMessage {
  readonly carrierMessageId: string
  readonly from: string
  /** The workspace number that received it. */
  readonly to: string
  readonly body: string | null
  readonly media: ReadonlyArray<InboundMedia>
}

export interface StatusReport {
  readonly carrierMessageId: string
  /** The carrier's own status word, e.g. `delivered` or `delivery_failed`. */
  readonly status: string
  /** The carrier says the message failed because the recipient opted out with it (Telnyx 40300). */
  readonly optedOut?: boolean
}
