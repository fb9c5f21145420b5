/**
 * The Telnyx v2 number inventory (research telnyx.md §1 and §2) through the shared client
 * (telnyxClient.ts): `GET /v2/available_phone_numbers` and `POST /v2/number_orders`.
 *
 * Search: each filter goes to its deepObject parameter (below). Telnyx's items carry no
 * `phone_number_type`, so it is copied from the filter sent, and Telnyx's `cost_information` is what
 * Telnyx charges us: it is replaced by our retail price (`retailCost`), which is what SPEC quotes.
 * A search changes nothing, so 408, 429 and 5xx are retried (at most `MAX_RETRIES` times). A 401 or
 * 403 is our account's problem, `unavailable`; any other 4xx is Telnyx refusing the filters,
 * `rejected` with its words.
 *
 * Order: attaches the number to our messaging profile (and voice connection when configured) as it
 * is bought. An order is not idempotent (a resent order for a number we now own would fail as
 * "not available"), so only a 429, which Telnyx did not process, is retried. A 4xx other than
 * 401, 403 and 408 means Telnyx will not sell the number: `NumberUnavailable` with Telnyx's own
 * words. A 5xx, a timeout or a malformed answer is `unavailable`, and the order may have been
 * placed. Telnyx fulfils orders asynchronously: a `pending` order is polled
 * (`GET /v2/number_orders/{id}`) until it settles or `settleMs` passes; `failure` is
 * `NumberUnavailable`, and an order still pending then is kept as bought (numbers with no
 * regulatory requirements, US and Canada among them, activate within moments).
 */
import { Clock, Duration, Effect, Either, Layer, Schema } from "effect"
import { E164 } from "../../core/kernel/phone.ts"
import { CarrierError } from "../../core/messaging/carrier.ts"
import {
  type AvailableNumber,
  type InventoryQuery,
  NumberInventory,
  NumberUnavailable,
  type RegionInformation,
  retailCost
} from "../../core/numbers/inventory.ts"
import type { NumberType } from "../../core/numbers/model.ts"
import {
  classify as classifyFailure,
  decodeAnswer,
  makeClient,
  type Refusal,
  refusal,
  type TelnyxConfig,
  type TelnyxFailure
} from "./telnyxClient.ts"

/** A search changes nothing: any sign that Telnyx did not answer it is worth another try. */
const SEARCH_RETRY_ON: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504])
/** Only a 429 surely left an order unplaced. */
const ORDER_RETRY_ON: ReadonlySet<number> = new Set([429])

export const DEFAULT_SETTLE_MS = 10_000
export const DEFAULT_POLL_MS = 500

export interface TelnyxInventoryOptions {
  /** How long an order may stay `pending` before it is kept as bought. Default 10 s. */
  readonly settleMs?: number
  /** Between two looks at a pending order. Default 500 ms. */
  readonly pollMs?: number
}

/** The features a number must have for what we sell on it: local numbers text and call, toll-free lines only call. */
const FEATURES = { local: "sms,voice", toll_free: "voice" } as const

/** The deepObject query of a search (research §1). */
export const searchParams = (q: InventoryQuery): ReadonlyArray<readonly [string, string]> => [
  ["filter[country_code]", q.country],
  ["filter[phone_number_type]", q.type],
  ["filter[features]", FEATURES[q.type]],
  ...(q.startsWith === null ? [] : [["filter[phone_number][starts_with]", q.startsWith] as const]),
  ...(q.contains === null ? [] : [["filter[phone_number][contains]", q.contains] as const]),
  ...(q.locality === null ? [] : [["filter[locality]", q.locality] as const]),
  ...(q.state === null ? [] : [["filter[administrative_area]", q.state] as const]),
  ["filter[limit]", String(q.limit)]
]

/** A region as Telnyx may send it: every field is optional in its SDK's types. */
const TelnyxRegion = Schema.Struct({
  region_type: Schema.String,
  region_name: Schema.optional(Schema.NullOr(Schema.String))
})

/** Only the fields we keep; Telnyx's cost, features and flags are dropped. */
const decodeSearch = decodeAnswer(
  Schema.Struct({
    data: Schema.Array(
      Schema.Struct({
        phone_number: E164,
        region_information: Schema.optional(Schema.NullOr(Schema.Array(TelnyxRegion)))
      })
    )
  }),
  "{data: [{phone_number, region_information}]}"
)

/** The regions that have a name; none when Telnyx sends no list. */
const regions = (list: ReadonlyArray<typeof TelnyxRegion.Type> | null | undefined): ReadonlyArray<RegionInformation> =>
  (list ?? []).flatMap(({ region_name, region_type }) => (region_name ? [{ region_type, region_name }] : []))

const OrderStatus = Schema.Struct({
  data: Schema.Struct({
    id: Schema.NonEmptyString,
    status: Schema.String,
    phone_numbers: Schema.optionalWith(Schema.Array(Schema.Struct({ status: Schema.optional(Schema.String) })), {
      default: () => []
    })
  })
})
const decodeOrder = decodeAnswer(OrderStatus, "{data: {id, status, phone_numbers}}")

/** `success`, `failure` or `pending`: the order's own status, or `failure` when its line failed. */
const orderOutcome = ({ data }: typeof OrderStatus.Type): string =>
  data.phone_numbers.some((line) => line.status === "failure") ? "failure" : data.status

const unavailable = (message: string) => new CarrierError({ reason: "unavailable", message })

/** A failure any Telnyx call shares as `unavailable`, or the 4xx refusal (telnyxClient's `classify`). */
const classify = (f: TelnyxFailure): Either.Either<Refusal, CarrierError> =>
  Either.mapLeft(classifyFailure(f), unavailable)

export const make = (config: TelnyxConfig, options: TelnyxInventoryOptions = {}) => {
  const telnyx = makeClient(config)
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS

  const search = (q: InventoryQuery) =>
    telnyx({ method: "GET", path: "/v2/available_phone_numbers", query: searchParams(q), retryOn: SEARCH_RETRY_ON })
      .pipe(
        Effect.mapError((f) =>
          Either.match(classify(f), {
            onLeft: (e) => e,
            onRight: (r) => new CarrierError({ reason: "rejected", message: refusal(r) })
          })
        ),
        Effect.flatMap(({ status, text }) =>
          Either.match(decodeSearch(text), {
            onLeft: (why) =>
              Effect.fail(unavailable(`Telnyx returned a malformed search answer (HTTP ${status}; ${why})`)),
            onRight: ({ data }) =>
              Effect.succeed(
                data.slice(0, q.limit).map(
                  (item): AvailableNumber => ({
                    phone_number: item.phone_number,
                    phone_number_type: q.type,
                    region_information: regions(item.region_information),
                    cost_information: retailCost(q.type)
                  })
                )
              )
          })
        ),
        Effect.withSpan("NumberInventory.search", { attributes: { "carrier.name": "telnyx", "numbers.type": q.type } })
      )

  /** The order's outcome once it settles, or `pending` when `settleMs` runs out; a failed look counts as still pending. */
  const settle = (id: string) =>
    Effect.gen(function*() {
      const deadline = (yield* Clock.currentTimeMillis) + settleMs
      for (;;) {
        yield* Effect.sleep(Duration.millis(pollMs))
        const outcome = yield* telnyx({
          method: "GET",
          path: `/v2/number_orders/${encodeURIComponent(id)}`,
          retryOn: SEARCH_RETRY_ON
        }).pipe(
          Effect.map(({ text }) => Either.match(decodeOrder(text), { onLeft: () => "pending", onRight: orderOutcome })),
          Effect.orElseSucceed(() => "pending")
        )
        if (outcome !== "pending" || (yield* Clock.currentTimeMillis) >= deadline) return outcome
      }
    })

  const order = (e164: E164, type: NumberType) =>
    Effect.gen(function*() {
      const body = {
        phone_numbers: [{ phone_number: e164 }],
        messaging_profile_id: config.messagingProfileId,
        ...(config.connectionId === undefined ? {} : { connection_id: config.connectionId })
      }
      const placed = yield* telnyx({ method: "POST", path: "/v2/number_orders", body, retryOn: ORDER_RETRY_ON }).pipe(
        Effect.mapError((f) =>
          Either.match(classify(f), {
            // Telnyx may have placed an order it did not answer, or answered with a 5xx.
            onLeft: (e) => (f._tag === "Status" && f.status < 500
              ? e
              : unavailable(`${e.message}; the order may have been placed`)),
            onRight: (r) => new NumberUnavailable({ e164, message: refusal(r) })
          })
        )
      )
      const decoded = decodeOrder(placed.text)
      if (Either.isLeft(decoded)) {
        return yield* unavailable(
          `Telnyx returned a malformed order (HTTP ${placed.status}; ${decoded.left}); the order may have been placed`
        )
      }
      const first = orderOutcome(decoded.right)
      const outcome = first === "pending" ? yield* settle(decoded.right.data.id) : first
      if (outcome === "failure") {
        return yield* new NumberUnavailable({ e164, message: `Telnyx could not fulfil the order for ${e164}` })
      }
      return { e164, type, carrierOrderId: decoded.right.data.id }
    }).pipe(
      Effect.withSpan("NumberInventory.order", { attributes: { "carrier.name": "telnyx", "numbers.type": type } })
    )

  return NumberInventory.of({ search, order })
}

export const layer = (config: TelnyxConfig, options?: TelnyxInventoryOptions): Layer.Layer<NumberInventory> =>
  Layer.succeed(NumberInventory, make(config, options))
