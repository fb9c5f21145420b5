/**
 * Message `deliveryStatus` as a forward-only ordering (SPEC "Message deliveryStatus"): a late `sent`
 * never overwrites `delivered`, and terminal states stay terminal. Pure, for the carrier adapters,
 * the inbound pipeline and embedders alike.
 */
import { Schema } from "effect"

export const DeliveryStatus = Schema.Literal("queued", "sent", "delivered", "failed", "received", "simulated")
export type DeliveryStatus = typeof DeliveryStatus.Type

// `simulated` (a test key's message) ranks with `queued`: the test helpers play carrier reports
// onto it, so a client can exercise delivery outcomes end to end.
const rank: Record<DeliveryStatus, number> = {
  queued: 0,
  simulated: 0,
  sent: 1,
  delivered: 2,
  failed: 2,
  received: 2
}

export const isTerminal = (s: DeliveryStatus) => rank[s] === 2

/** The status after a carrier report: the report when it moves forward, otherwise the current one. */
export const advance = (current: DeliveryStatus, reported: DeliveryStatus): DeliveryStatus =>
  isTerminal(current) || rank[reported] <= rank[current] ? current : reported

/**
 * A carrier's status word mapped onto ours, keeping the carrier's own word for events
 * (`message.failed` carries e.g. `delivery_failed`). Unknown words are ignored (null).
 */
export const fromCarrier = (word: string): DeliveryStatus | null => {
  switch (word) {
    case "queued":
      return "queued"
    // delivery_unconfirmed: Telnyx's "no receipt came back": sent, with its final outcome unknown; not a failure.
    case "sending":
    case "sent":
    case "delivery_unconfirmed":
      return "sent"
    case "delivered":
      return "delivered"
    case "sending_failed":
    case "delivery_failed":
    case "expired":
    case "failed":
      return "failed"
    default:
      return null
  }
}
