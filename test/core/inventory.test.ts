/**
 * The inventory's pure parts: `AvailableNumbersInput` refuses what SPEC does not allow (naming the
 * field), `inventoryQuery` applies SPEC's defaults and folds places and states, the retail quote,
 * and how each inventory failure answers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { invalidInput } from "../../core/kernel/decodeMessage.ts"
import { CarrierError } from "../../core/messaging/carrier.ts"
import {
  AvailableNumber,
  AvailableNumbersInput,
  inventoryError,
  inventoryQuery,
  numberTaken,
  NumberUnavailable,
  retailCost
} from "../../core/numbers/inventory.ts"
import { regionCode } from "../../core/numbers/regions.ts"

/** The 400 message a caller would read, or the decoded input. */
const decode = (raw: unknown) =>
  Either.mapLeft(
    Schema.decodeUnknownEither(AvailableNumbersInput, { errors: "all" })(raw),
    (e) => invalidInput(e).message
  )

const query = (raw: unknown) =>
  Effect.gen(function*() {
    const input = yield* Either.match(decode(raw), { onLeft: (m) => Effect.dieMessage(m), onRight: Effect.succeed })
    return yield* inventoryQuery(input)
  })

describe("AvailableNumbersInput", () => {
  it("accepts every SPEC filter", () => {
    const input = {
      country: "us",
      type: "toll_free" as const,
      contains: "800",
      locality: "Chicago",
      state: "IL",
      limit: 50
    }
    assert.deepStrictEqual(decode(input), Either.right(input))
    assert.deepStrictEqual(
      decode({ type: "local", startsWith: "312" }),
      Either.right({ type: "local", startsWith: "312" })
    )
  })

  it("refuses malformed filters, naming each field", () => {
    const refused = (raw: unknown) =>
      Either.getLeft(decode(raw)).pipe((o) => (o._tag === "Some" ? o.value : "accepted"))
    assert.strictEqual(refused({ country: "USA" }), "country: must be an ISO 3166 alpha-2 country code, such as US")
    assert.strictEqual(refused({ country: "1A" }), "country: must be an ISO 3166 alpha-2 country code, such as US")
    assert.include(refused({ type: "mobile" }), "type: expected")
    assert.strictEqual(refused({ startsWith: "+1312" }), "startsWith: must be 1 to 15 digits")
    assert.strictEqual(refused({ contains: "" }), "contains: must be 1 to 15 digits")
    assert.strictEqual(refused({ contains: "1234567890123456" }), "contains: must be 1 to 15 digits")
    assert.strictEqual(refused({ locality: "   " }), "locality: must not be blank")
    assert.include(refused({ state: "x".repeat(101) }), "state:")
    assert.include(refused({ limit: 0 }), "limit:")
    assert.include(refused({ limit: 51 }), "limit:")
    assert.include(refused({ limit: 2.5 }), "limit:")
    assert.strictEqual(refused({ areaCode: "312" }), "areaCode: unknown field")
    const both = refused({ country: "USA", limit: 99 })
    assert.include(both, "country:")
    assert.include(both, "limit:")
  })
})

describe("inventoryQuery", () => {
  it.effect("applies SPEC's defaults: US, local, 20", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* query({}), {
        country: "US",
        type: "local",
        startsWith: null,
        contains: null,
        locality: null,
        state: null,
        limit: 20
      })
    }))

  it.effect("upper-cases the country, tidies the locality, and turns a state's name into its code", () =>
    Effect.gen(function*() {
      const q = yield* query({
        country: "ca",
        locality: "  Saint   John ",
        state: "new brunswick",
        startsWith: "506",
        contains: "12",
        limit: 3
      })
      assert.deepStrictEqual(q, {
        country: "CA",
        type: "local",
        startsWith: "506",
        contains: "12",
        locality: "Saint John",
        state: "NB",
        limit: 3
      })
      assert.strictEqual((yield* query({ state: "district of columbia" })).state, "DC")
      assert.strictEqual((yield* query({ state: "ny" })).state, "NY")
    }))

  it.effect("startsWith with type=toll_free is a 400 naming the field, not a silently ignored filter", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(query({ type: "toll_free", startsWith: "800" }))
      assert.strictEqual(error._tag, "InvalidArgument")
      assert.match(error.message, /^startsWith: applies to local numbers only/)
      assert.strictEqual((yield* query({ type: "toll_free", contains: "800" })).contains, "800")
    }))
})

describe("regions", () => {
  it("knows US states and Canadian provinces by code or name; anything else stays as given, tidied", () => {
    assert.strictEqual(regionCode("US", "Illinois"), "IL")
    assert.strictEqual(regionCode("US", " il "), "IL")
    assert.strictEqual(regionCode("CA", "Quebec"), "QC")
    // A province is no US state, and other countries have no table.
    assert.strictEqual(regionCode("US", "Quebec"), "Quebec")
    assert.strictEqual(regionCode("GB", "  Greater   London "), "Greater London")
  })
})

describe("the quote and the failures", () => {
  it("quotes the retail price: 5.00 a month local, 10.00 toll-free, nothing up front, in USD", () => {
    assert.deepStrictEqual(retailCost("local"), { monthly_cost: "5.00", upfront_cost: "0.00", currency: "USD" })
    assert.deepStrictEqual(retailCost("toll_free"), { monthly_cost: "10.00", upfront_cost: "0.00", currency: "USD" })
  })

  it("AvailableNumber encodes to SPEC's snake_case fields, and refuses a phone_number that is not E.164", () => {
    const row = {
      phone_number: "+13125550100",
      phone_number_type: "local" as const,
      region_information: [{ region_type: "state", region_name: "IL" }],
      cost_information: retailCost("local")
    }
    assert.deepStrictEqual(Schema.encodeSync(AvailableNumber)(Schema.decodeUnknownSync(AvailableNumber)(row)), row)
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(AvailableNumber)({ ...row, phone_number: "3125550100" })))
  })

  it("a number not for sale is 409 with the carrier's words; refused filters 400; a carrier down 500", () => {
    const taken = inventoryError(numberTaken("+13125550100"))
    assert.deepStrictEqual([taken._tag, taken.message], [
      "FailedPrecondition",
      "Phone number +13125550100 is no longer available"
    ])
    const theirs = inventoryError(new NumberUnavailable({ e164: "+1", message: "Sold out." }))
    assert.deepStrictEqual([theirs._tag, theirs.message], ["FailedPrecondition", "Sold out."])
    const refused = inventoryError(new CarrierError({ reason: "rejected", message: "No coverage." }))
    assert.deepStrictEqual([refused._tag, refused.message], [
      "InvalidArgument",
      "The carrier refused the search: No coverage."
    ])
    const down = inventoryError(
      new CarrierError({ reason: "unavailable", message: "Telnyx did not answer within 10000 ms" })
    )
    assert.deepStrictEqual([down._tag, down.message], [
      "Internal",
      "The carrier is unavailable (Telnyx did not answer within 10000 ms); retry later"
    ])
  })
})
