/**
 * The carrier callback port: what a carrier posts back to us (an inbound message, a delivery report,
 * a call's step, a 10DLC brand or campaign change), authenticated and parsed by the configured
 * carrier's adapter (adapters/carrier/telnyxCallbacks.ts) and handed to the services by
 * `receiveCallback` (receive.ts). A carrier that calls back nothing (the simulator) provides no
 * implementation, so no callback route answers.
 */
import { Context, Data, type Effect } from "effect"
import type { CarrierCallEvent } from "../calls/voice.ts"
import type { InvalidArgument, Unauthenticated } from "../kernel/errors.ts"
import type { InboundMessage, StatusReport } from "../messaging/carrier.ts"

/**
 * A brand, campaign or number assignment whose registry status changed (`id`: the brand or campaign
 * id, or the number's E.164); a hint, so the registration re-reads the registry.
 */
export interface RegistryChange {
  readonly kind: "brand" | "campaign" | "number"
  readonly id: string
}

/** One callback's meaning. Carriers may repeat callbacks and reorder them: every service below dedupes. */
export type CarrierEvent = Data.TaggedEnum<{
  Inbound: { readonly message: InboundMessage }
  Status: { readonly report: StatusReport }
  Call: { readonly event: CarrierCallEvent }
  RegistryChange: { readonly change: RegistryChange }
  /** Authentic, but about nothing we act on (another event type). */
  Ignored: { readonly eventType: string }
}>
export const CarrierEvent = Data.taggedEnum<CarrierEvent>()

/** A callback as received. */
export interface CallbackRequest {
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The body exactly as received: signatures cover these bytes, never a re-serialisation. */
  readonly rawBody: string
  /** Epoch milliseconds, for the signature's freshness window. */
  readonly now: number
}

export interface CarrierCallbacks {
  /** The carrier's name in its callback URL, `/v1/carrier/{name}`. */
  readonly name: string
  /** `Unauthenticated` for a missing, stale or wrong signature; `InvalidArgument` for a body that is not a callback. */
  readonly parse: (request: CallbackRequest) => Effect.Effect<CarrierEvent, InvalidArgument | Unauthenticated>
}
export const CarrierCallbacks = Context.GenericTag<CarrierCallbacks>("core/CarrierCallbacks")
