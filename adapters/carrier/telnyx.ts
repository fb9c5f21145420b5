/**
 * The Telnyx v2 messaging carrier (research telnyx.md §3 and §6): `POST /v2/messages` through the
 * shared client (telnyxClient.ts).
 *
 * Failure mapping:
 * - 2xx with a `{data: {id, to: [{status}]}}` body: accepted. Any other 2xx body is `unavailable`
 *   and is not retried, because the message may already have gone out.
 * - 408, 429, 502, 503 and 504: retried at most `MAX_RETRIES` times; these mean the request was
 *   not processed. The delay is `Retry-After` (or on a 429 `x-ratelimit-reset`) seconds capped at
 *   `MAX_RETRY_AFTER_MS`, otherwise exponential backoff with jitter. When the retries run out:
 *   `unavailable`.
 * - Other 5xx (500 above all): `unavailable` without a retry. `/v2/messages` takes no idempotency
 *   key, and a 500 may have been processed: a blind retry could text the recipient twice.
 * - Any other 4xx: `rejected` at once, with the reason from Telnyx's `errors[0].detail`/`title`.
 * - Timeout (per attempt) or network failure: `unavailable`, not retried here. A hung request may
 *   have been processed, so the caller decides.
 */
import { Effect, Either, Layer, Schema } from "effect"
import { type Accepted, Carrier, CarrierError, type OutboundMessage } from "../../core/messaging/carrier.ts"
import { fromCarrier } from "../../core/messaging/deliveryStatus.ts"
import {
  decodeAnswer,
  describeError,
  makeClient,
  MAX_RETRIES,
  type TelnyxConfig,
  type TelnyxFailure,
  transportMessage
} from "./telnyxClient.ts"

/** Statuses that mean a send was not processed. */
const RETRY_ON: ReadonlySet<number> = new Set([408, 429, 502, 503, 504])

/** Only the fields we read; everything else in Telnyx's `OutboundMessage` is ignored. */
const decodeSendResponse = decodeAnswer(
  Schema.Struct({
    data: Schema.Struct({
      id: Schema.NonEmptyString,
      to: Schema.NonEmptyArray(Schema.Struct({ status: Schema.optional(Schema.NullOr(Schema.String)) }))
    })
  }),
  "{data: {id, to: [{status}]}}"
)

/**
 * Telnyx's refusal of a recipient who opted out: "Blocked due to STOP message", on a send and in a
 * `message.finalized` (developers.telnyx.com/docs/messaging/messages/advanced-opt-in-out).
 */
export const OPTED_OUT = "40300"

/**
 * The keywords Telnyx's messaging profile answers itself by default, blocking further texts after
 * the opt-out words (same page, "Default behavior" and "Operation types": the help operation's
 * default keyword is HELP alone; INFO is one only when configured, so the service answers INFO).
 * Telnyx matches the whole text, "case and whitespace insensitive" (developers.telnyx.com/api/errors/40300):
 * `carrierWordOf` in core/optouts/keywords.ts.
 */
export const TELNYX_KEYWORDS: ReadonlySet<string> = new Set([
  "STOP",
  "STOPALL",
  "STOP ALL",
  "UNSUBSCRIBE",
  "CANCEL",
  "END",
  "QUIT",
  "START",
  "UNSTOP",
  "HELP"
])

const ErrorCodes = Schema.parseJson(
  Schema.Struct({
    errors: Schema.Array(Schema.Struct({ code: Schema.optional(Schema.Union(Schema.String, Schema.Number)) }))
  })
)

/** The `errors[].code` of a Telnyx error body, as strings; none when it is not one. */
export const errorCodes = (text: string): ReadonlyArray<string> =>
  Either.match(Schema.decodeUnknownEither(ErrorCodes)(text), {
    onLeft: () => [],
    onRight: ({ errors }) => errors.flatMap((e) => (e.code === undefined ? [] : [String(e.code)]))
  })

const sendFailure = (f: TelnyxFailure): CarrierError => {
  if (f._tag !== "Status") return new CarrierError({ reason: "unavailable", message: transportMessage(f) })
  const why = describeError(f.status, f.text)
  if (f.retried) {
    return new CarrierError({
      reason: "unavailable",
      message: `Telnyx is unavailable (${why}); gave up after ${MAX_RETRIES} retries`
    })
  }
  if (f.status >= 500) {
    return new CarrierError({
      reason: "unavailable",
      message: `Telnyx failed (${why}); not retried, it may have been processed`
    })
  }
  if (f.status >= 400) {
    return new CarrierError({
      reason: errorCodes(f.text).includes(OPTED_OUT) ? "opted_out" : "rejected",
      message: `Telnyx rejected the message (${why})`
    })
  }
  return new CarrierError({ reason: "unavailable", message: `Telnyx answered with an unexpected HTTP ${f.status}` })
}

const requestBody = (config: TelnyxConfig, message: OutboundMessage) => {
  const mms = message.mediaUrls.length > 0
  return {
    from: message.from,
    to: message.to,
    // Telnyx requires text for SMS; an MMS may be media only.
    ...(mms && message.body === "" ? {} : { text: message.body }),
    ...(mms ? { media_urls: [...message.mediaUrls] } : {}),
    messaging_profile_id: config.messagingProfileId,
    type: mms ? "MMS" : "SMS"
  }
}

export const make = (config: TelnyxConfig): Carrier => {
  const telnyx = makeClient(config)
  return Carrier.of({
    answersKeywords: TELNYX_KEYWORDS,
    send: (message) =>
      telnyx({ method: "POST", path: "/v2/messages", body: requestBody(config, message), retryOn: RETRY_ON }).pipe(
        Effect.mapError(sendFailure),
        Effect.flatMap(({ status, text }) =>
          Either.match(decodeSendResponse(text), {
            onLeft: (why) =>
              Effect.fail(
                new CarrierError({
                  reason: "unavailable",
                  message:
                    `Telnyx returned a malformed response (HTTP ${status}; ${why}); the message may have been sent`
                })
              ),
            onRight: ({ data }) => {
              const word = data.to[0].status
              return Effect.succeed<Accepted>({
                carrierMessageId: data.id,
                status: (word ? fromCarrier(word) : null) ?? "queued"
              })
            }
          })
        ),
        Effect.withSpan("Carrier.send", {
          attributes: { "carrier.name": "telnyx", "carrier.type": message.mediaUrls.length > 0 ? "MMS" : "SMS" }
        })
      )
  })
}

export const layer = (config: TelnyxConfig): Layer.Layer<Carrier> => Layer.succeed(Carrier, make(config))
