/**
 * The carrier's number inventory (SPEC "Available number", `GET /numbers/available`): a port with
 * two adapters, the simulator (adapters/carrier/simulatedInventory.ts) and Telnyx
 * (adapters/carrier/telnyxInventory.ts). A search lists numbers nobody owns, in the carrier's
 * order, quoted at our retail price; an order buys one for our carrier account. Who owns it here is
 * decided afterwards by the insert into the numbers table (unique on e164).
 */
import { Context, Data, Effect, Schema } from "effect"
import { prices } from "../billing/pricing.ts"
import { FailedPrecondition, Internal, InvalidArgument } from "../kernel/errors.ts"
import { PageSize } from "../kernel/pagination.ts"
import { E164 } from "../kernel/phone.ts"
import { Text } from "../kernel/text.ts"
import type { CarrierError } from "../messaging/carrier.ts"
import { NumberType } from "./model.ts"
import { regionCode, tidyPlace } from "./regions.ts"

// ------------------------------------------------------------------------------------ the view

export const RegionInformation = Schema.Struct({ region_type: Schema.String, region_name: Schema.String })
export type RegionInformation = typeof RegionInformation.Type

/**
 * SPEC "Available number": one search result, in the carrier's snake_case. The HTTP response
 * `{available: [AvailableNumber]}` uses this schema as it is.
 */
export const AvailableNumber = Schema.Struct({
  phone_number: E164,
  phone_number_type: NumberType,
  /** Where the number rings from: `rate_center`, `state` and `country_code` entries (as Telnyx lists them). */
  region_information: Schema.Array(RegionInformation),
  /** Our retail price, never the carrier's cost: amounts as decimal strings, as carriers quote them. */
  cost_information: Schema.Struct({ monthly_cost: Schema.String, upfront_cost: Schema.String, currency: Schema.String })
}).annotations({ identifier: "AvailableNumber" })
export type AvailableNumber = typeof AvailableNumber.Type

/**
 * The service's retail monthly price of a line (SPEC "Results are quoted at the service's retail
 * monthly price"), in integer cents, from the one price list (core/billing/pricing.ts). A search
 * quotes it whatever the carrier charges us, and nothing is due up front: the prorated add-on is
 * billed by the purchase itself.
 */
export const RETAIL_MONTHLY_CENTS: Readonly<Record<NumberType, number>> = {
  local: prices.localNumberMonthly,
  toll_free: prices.tollFreeMonthly
}

const dollars = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`

/** `{monthly_cost: "5.00", upfront_cost: "0.00", currency: "USD"}` for a local number. */
export const retailCost = (type: NumberType): AvailableNumber["cost_information"] => ({
  monthly_cost: dollars(RETAIL_MONTHLY_CENTS[type]),
  upfront_cost: "0.00",
  currency: "USD"
})

// ------------------------------------------------------------------------------------ the query

const digits = (max: number) =>
  Schema.String.pipe(
    Schema.pattern(new RegExp(`^\\d{1,${max}}$`)),
    Schema.annotations({ message: () => `must be 1 to ${max} digits` })
  )

const place = Text(100).pipe(Schema.filter((s) => s.trim().length > 0 || "must not be blank"))

/**
 * `GET /numbers/available` (and the tool that will share it): every SPEC filter, defaults applied
 * by `inventoryQuery`. REST reads `limit` from text, as the other lists do.
 */
export const AvailableNumbersInput = Schema.Struct({
  country: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^[A-Za-z]{2}$/),
      Schema.annotations({ message: () => "must be an ISO 3166 alpha-2 country code, such as US" })
    )
  ).annotations({ description: "ISO 3166 alpha-2 country code, either case; default `US`" }),
  type: Schema.optional(NumberType).annotations({ description: "Default `local`" }),
  startsWith: Schema.optional(digits(15)).annotations({
    description: "Leading digits of the national number, usually the area code; local numbers only"
  }),
  contains: Schema.optional(digits(15)).annotations({ description: "Digits anywhere in the national number" }),
  locality: Schema.optional(place).annotations({ description: "City, compared without regard to case" }),
  state: Schema.optional(place).annotations({ description: "State or region: a code (`IL`) or a name (`Illinois`)" }),
  /** 1 to 50, default 20. */
  limit: Schema.optional(PageSize(50))
}).annotations({ identifier: "AvailableNumbersInput", parseOptions: { onExcessProperty: "error" } })
export type AvailableNumbersInput = typeof AvailableNumbersInput.Type

/** A search as the carriers receive it: defaults applied, places tidied, the state as its code where known. */
export interface InventoryQuery {
  /** Upper case alpha-2. */
  readonly country: string
  readonly type: NumberType
  readonly startsWith: string | null
  readonly contains: string | null
  /** Trimmed, single spaces; carriers compare it without regard to case. */
  readonly locality: string | null
  /** The region's code where we know it (`IL` for `Illinois` in the US), else the tidied text. */
  readonly state: string | null
  readonly limit: number
}

export const DEFAULT_SEARCH_LIMIT = 20

/**
 * Applies SPEC's defaults. `startsWith` is for local numbers only (SPEC): with `type=toll_free` it is
 * refused rather than ignored, so a caller never reads unfiltered results as filtered ones.
 */
export const inventoryQuery = (input: AvailableNumbersInput): Effect.Effect<InventoryQuery, InvalidArgument> => {
  const type = input.type ?? "local"
  if (type === "toll_free" && input.startsWith !== undefined) {
    return Effect.fail(
      new InvalidArgument({
        message: "startsWith: applies to local numbers only; use contains to search toll-free numbers"
      })
    )
  }
  const country = (input.country ?? "US").toUpperCase()
  return Effect.succeed({
    country,
    type,
    startsWith: input.startsWith ?? null,
    contains: input.contains ?? null,
    locality: input.locality === undefined ? null : tidyPlace(input.locality),
    state: input.state === undefined ? null : regionCode(country, input.state),
    limit: input.limit ?? DEFAULT_SEARCH_LIMIT
  })
}

// ------------------------------------------------------------------------------------ the port

/** A number the carrier sold us. */
export interface OrderedNumber {
  readonly e164: E164
  readonly type: NumberType
  /** The carrier's order id (`sim_order_...` from the simulator). */
  readonly carrierOrderId: string
}

/**
 * The carrier will not sell this number: another customer (or another of our workspaces) took it
 * after the search, or it was never for sale. `message` is the carrier's own words; it answers
 * `409 failed_precondition` (SPEC "POST /numbers": "the carrier's message when the number was taken
 * between search and order").
 */
export class NumberUnavailable extends Data.TaggedError("NumberUnavailable")<{
  readonly e164: string
  readonly message: string
}> {}

/**
 * The simulated carrier's words for a number someone owns. The purchase uses the same words when
 * its insert into the numbers table loses a race the carrier check could not see (two orders of one
 * number checked at once), so both ways of losing read alike.
 */
export const numberTaken = (e164: string) =>
  new NumberUnavailable({ e164, message: `Phone number ${e164} is no longer available` })

export interface NumberInventory {
  /**
   * Numbers for sale matching every filter, at most `query.limit`, in the carrier's order (stable:
   * the same search answers the same list until a number is sold). Numbers any workspace holds are
   * never listed. `CarrierError` `rejected`: the carrier refused these filters; `unavailable`: rate
   * limited, failing or not answering.
   */
  readonly search: (query: InventoryQuery) => Effect.Effect<ReadonlyArray<AvailableNumber>, CarrierError>
  /**
   * Buys `e164` for our carrier account. Fails with `NumberUnavailable` (the carrier's message) when
   * it is not for sale any more, with `CarrierError` `unavailable` when the carrier could not be
   * asked (the order may then have been placed: the caller retries or reconciles, never assumes).
   */
  readonly order: (e164: E164, type: NumberType) => Effect.Effect<OrderedNumber, NumberUnavailable | CarrierError>
}
export const NumberInventory = Context.GenericTag<NumberInventory>("core/NumberInventory")

/**
 * What an inventory failure answers (SPEC "Errors"): a number not for sale is 409 with the carrier's
 * message; filters the carrier refused are 400; a carrier that cannot be reached is 500, which SPEC
 * tells clients to retry with backoff (and with the same `Idempotency-Key` on `POST /numbers`).
 */
export const inventoryError = (e: NumberUnavailable | CarrierError): FailedPrecondition | InvalidArgument | Internal =>
  e._tag === "NumberUnavailable" ? new FailedPrecondition({ message: e.message }) : searchError(e)

/** `inventoryError` of a search, which never answers NumberUnavailable. */
export const searchError = (e: CarrierError): InvalidArgument | Internal =>
  e.reason === "rejected"
    ? new InvalidArgument({ message: `The carrier refused the search: ${e.message}` })
    : new Internal({ message: `The carrier is unavailable (${e.message}); retry later` })
