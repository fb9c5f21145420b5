/**
 * The Telnyx number inventory against the fake Telnyx (test/support/fakeTelnyx.ts), over real HTTP
 * and real time: the search's deepObject query and its mapping (type from the filter, our retail
 * price instead of Telnyx's cost), the order's body and its settling, Telnyx's refusals as the
 * carrier's message, and 401, 429, 5xx, timeouts and malformed answers. The port's promises
 * (filters, limit, held numbers never listed nor sold) are test/adapters/carrier.inventory.contract.test.ts,
 * run here and on the simulator.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import * as TelnyxClient from "../../adapters/carrier/telnyxClient.ts"
import * as TelnyxInventory from "../../adapters/carrier/telnyxInventory.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import type { CarrierError } from "../../core/messaging/carrier.ts"
import {
  type AvailableNumbersInput,
  inventoryError,
  inventoryQuery,
  NumberInventory,
  type NumberUnavailable
} from "../../core/numbers/inventory.ts"
import type { NumberType } from "../../core/numbers/model.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"

const PROFILE = "40017f8e-0000-4000-8000-000000000001"
const CONNECTION = "1494404757140276705"

const fake = useFakeTelnyx()

type Options = Partial<TelnyxClient.TelnyxConfig> & TelnyxInventory.TelnyxInventoryOptions & {
  readonly noConnection?: true
}

const withInventory = <A, E>(use: (inventory: NumberInventory) => Effect.Effect<A, E>, options: Options = {}) => {
  const { settleMs, pollMs, noConnection, ...config } = options
  return Effect.flatMap(NumberInventory, use).pipe(
    Effect.provide(
      TelnyxInventory.layer(
        {
          apiKey: Redacted.make(fake().apiKey),
          messagingProfileId: PROFILE,
          ...(noConnection ? {} : { connectionId: CONNECTION }),
          baseUrl: fake().baseUrl,
          ...config
        },
        { settleMs: settleMs ?? 2_000, pollMs: pollMs ?? 50 }
      )
    )
  )
}

const search = (input: AvailableNumbersInput = {}, options: Options = {}) =>
  Effect.flatMap(Effect.orDie(inventoryQuery(input)), (q) => withInventory((inventory) => inventory.search(q), options))

const order = (e164: string, type: NumberType = "local", options: Options = {}) =>
  withInventory((inventory) => inventory.order(e164 as E164, type), options)

/** The failure of an effect: never a defect or interruption, never holding the API key. */
const failure = <E extends CarrierError | NumberUnavailable>(effect: Effect.Effect<unknown, E>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const exit = yield* Effect.exit(effect)
    const ms = Date.now() - started
    assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Fail", `expected a failure, got ${String(exit)}`)
    const error = (exit as Exit.Failure<unknown, E>).cause as unknown as { error: E }
    assert.notInclude(error.error.message, fake().apiKey)
    return { error: error.error, ms }
  })

const searches = () => fake().requests.filter((r) => r.path === "/v2/available_phone_numbers")
const filters = (i = 0) => Object.fromEntries([...searches()[i]!.query.entries()])

describe("Telnyx inventory: search", () => {
  it.live("sends every filter as its deepObject parameter, with the bearer key and no body", () =>
    Effect.gen(function*() {
      yield* search({ startsWith: "312", contains: "01", locality: " Chicago ", state: "Illinois", limit: 5 })
      const req = searches()[0]!
      assert.strictEqual(req.method, "GET")
      assert.strictEqual(req.headers["authorization"], `Bearer ${fake().apiKey}`)
      assert.strictEqual(req.body, "")
      assert.deepStrictEqual(filters(), {
        "filter[country_code]": "US",
        "filter[phone_number_type]": "local",
        "filter[features]": "sms,voice",
        "filter[phone_number][starts_with]": "312",
        "filter[phone_number][contains]": "01",
        "filter[locality]": "Chicago",
        "filter[administrative_area]": "IL",
        "filter[limit]": "5"
      })
    }))

  it.live("defaults: US local, 20, with no empty filters sent", () =>
    Effect.gen(function*() {
      yield* search()
      assert.deepStrictEqual(filters(), {
        "filter[country_code]": "US",
        "filter[phone_number_type]": "local",
        "filter[features]": "sms,voice",
        "filter[limit]": "20"
      })
    }))

  it.live("maps each result: the type from the filter, our retail price, Telnyx's regions", () =>
    Effect.gen(function*() {
      const rows = yield* search({ locality: "chicago" })
      // The fake's voice-only Chicago number is left out by the features filter.
      assert.deepStrictEqual(
        rows.map((r) => r.phone_number),
        ["+13122010001", "+13122010002", "+17732017777"]
      )
      assert.deepStrictEqual(rows[0], {
        phone_number: "+13122010001" as E164,
        phone_number_type: "local",
        region_information: [
          { region_type: "rate_center", region_name: "CHICAGO" },
          { region_type: "state", region_name: "IL" },
          { region_type: "country_code", region_name: "US" }
        ],
        cost_information: { monthly_cost: "5.00", upfront_cost: "0.00", currency: "USD" }
      })
    }))

  it.live("toll-free: asks for voice only and quotes 10.00", () =>
    Effect.gen(function*() {
      const rows = yield* search({ type: "toll_free" })
      assert.strictEqual(filters()["filter[phone_number_type]"], "toll_free")
      assert.strictEqual(filters()["filter[features]"], "voice")
      assert.deepStrictEqual(rows.map((r) => r.phone_number), ["+18885550123", "+18445550177"])
      for (const r of rows) {
        assert.strictEqual(r.phone_number_type, "toll_free")
        assert.deepStrictEqual(r.cost_information, { monthly_cost: "10.00", upfront_cost: "0.00", currency: "USD" })
      }
    }))

  it.live("keeps Telnyx's order and at most `limit`, even when Telnyx sends more; regions without a name are dropped", () =>
    Effect.gen(function*() {
      const item = (n: string) => ({
        phone_number: n,
        record_type: "available_phone_number",
        cost_information: { monthly_cost: "1.00000" }
      })
      const named = {
        ...item("+13125550001"),
        region_information: [{ region_type: "state", region_name: "IL" }, {
          region_type: "rate_center",
          region_name: null
        }]
      }
      fake().script({
        type: "malformed",
        body: JSON.stringify({ data: [item("+13125550003"), named, item("+13125550002")] })
      })
      const rows = yield* search({ limit: 2 })
      assert.deepStrictEqual(
        rows.map((r) => ({ e164: r.phone_number as string, regions: r.region_information })),
        [
          { e164: "+13125550003", regions: [] },
          { e164: "+13125550001", regions: [{ region_type: "state", region_name: "IL" }] }
        ]
      )
    }))

  it.live("a 4xx refusing the filters is `rejected` with Telnyx's words, answered 400", () =>
    Effect.gen(function*() {
      fake().script({
        type: "error",
        status: 422,
        code: "10015",
        title: "Bad Request",
        detail: "No coverage for this region."
      })
      const { error } = yield* failure(search({ country: "GB" }))
      assert.strictEqual(error._tag, "CarrierError")
      assert.deepStrictEqual([(error as CarrierError).reason, error.message], [
        "rejected",
        "No coverage for this region."
      ])
      const answer = inventoryError(error)
      assert.strictEqual(answer._tag, "InvalidArgument")
      assert.strictEqual(answer.message, "The carrier refused the search: No coverage for this region.")
      assert.strictEqual(fake().requests.length, 1)
    }))

  it.live("a 401 (our key) is `unavailable`, not the caller's fault, and not retried", () =>
    Effect.gen(function*() {
      const { error } = yield* failure(search({}, { apiKey: Redacted.make("KEY_wrong") }))
      assert.strictEqual((error as CarrierError).reason, "unavailable")
      assert.include(error.message, "401")
      assert.notInclude(error.message, "KEY_wrong")
      assert.strictEqual(inventoryError(error)._tag, "Internal")
      assert.strictEqual(fake().requests.length, 1)
    }))

  it.live("a 429 is retried after Retry-After, then answers", () =>
    Effect.gen(function*() {
      fake().script({ type: "rateLimit", retryAfterSeconds: 1 })
      const rows = yield* search({ state: "NY" })
      assert.deepStrictEqual(rows.map((r) => r.phone_number), ["+12124410010"])
      assert.deepStrictEqual(fake().requests.map((r) => r.answer), [429, 200])
      assert.isAtLeast(fake().requests[1]!.at - fake().requests[0]!.at, 950)
    }))

  it.live("a 500 is retried too (a search changes nothing); 503 three times gives up after two retries", () =>
    Effect.gen(function*() {
      fake().script({ type: "serverError", status: 500 })
      assert.strictEqual((yield* search()).length, 5)
      assert.deepStrictEqual(fake().requests.map((r) => r.answer), [500, 200])
      fake().reset()
      fake().script({ type: "serverError", status: 503 }, 5)
      const { error } = yield* failure(search())
      assert.strictEqual((error as CarrierError).reason, "unavailable")
      assert.include(error.message, "503")
      assert.include(error.message, "gave up after 2 retries")
      assert.strictEqual(fake().requests.length, 3)
      assert.strictEqual(inventoryError(error)._tag, "Internal")
    }))

  it.live("a hang is `unavailable` within the timeout", () =>
    Effect.gen(function*() {
      fake().script({ type: "hang" }, 3)
      const { error, ms } = yield* failure(search({}, { timeoutMs: 300 }))
      assert.strictEqual((error as CarrierError).reason, "unavailable")
      assert.include(error.message, "300 ms")
      assert.isBelow(ms, 1_500)
      assert.strictEqual(fake().requests.length, 1)
    }))

  it.live("a malformed answer is `unavailable`, not a defect", () =>
    Effect.gen(function*() {
      fake().script({ type: "malformed" })
      const { error } = yield* failure(search())
      assert.strictEqual((error as CarrierError).reason, "unavailable")
      assert.include(error.message, "not JSON")
      fake().script({ type: "malformed", body: JSON.stringify({ data: [{ phone_number: "3125550001" }] }) })
      const { error: notE164 } = yield* failure(search())
      assert.include(notE164.message, "malformed")
    }))
})

describe("Telnyx inventory: order", () => {
  const searched = (input: AvailableNumbersInput = {}) => Effect.map(search(input), (rows) => rows[0]!.phone_number)

  it.live("posts the number with our messaging profile and connection, waits for the order to settle, and returns it", () =>
    Effect.gen(function*() {
      const e164 = yield* searched({ locality: "San Francisco" })
      const ordered = yield* order(e164)
      const [post, ...polls] = fake().requests.filter((r) => r.path.startsWith("/v2/number_orders"))
      assert.strictEqual(post!.method, "POST")
      assert.strictEqual(post!.path, "/v2/number_orders")
      assert.match(post!.headers["content-type"] ?? "", /^application\/json/)
      assert.deepStrictEqual(post!.json, {
        phone_numbers: [{ phone_number: e164 }],
        messaging_profile_id: PROFILE,
        connection_id: CONNECTION
      })
      const [id] = [...fake().orders.keys()]
      assert.deepStrictEqual(ordered, { e164, type: "local", carrierOrderId: id! })
      // The order answered `pending`; one look at it found `success`.
      assert.deepStrictEqual(polls.map((r) => [r.method, r.path]), [["GET", `/v2/number_orders/${id}`]])
      assert.strictEqual(fake().orders.get(id!)!["status"], "success")
      assert.isTrue(fake().owned.has(e164))
    }))

  it.live("without a connection id, none is sent; an order settled at once is not polled", () =>
    Effect.gen(function*() {
      fake().setOrderFlow({ onCreate: "success", onRetrieve: "success" })
      const e164 = yield* searched({ type: "toll_free" })
      const ordered = yield* order(e164, "toll_free", { noConnection: true })
      assert.strictEqual(ordered.type, "toll_free")
      const posts = fake().requests.filter((r) => r.path.startsWith("/v2/number_orders"))
      assert.strictEqual(posts.length, 1)
      assert.deepStrictEqual(posts[0]!.json, { phone_numbers: [{ phone_number: e164 }], messaging_profile_id: PROFILE })
    }))

  it.live("a number another customer took after the search: Telnyx's detail as it is, and the order is not resent", () =>
    Effect.gen(function*() {
      const e164 = yield* searched()
      fake().takeNumber(e164)
      const { error } = yield* failure(order(e164))
      assert.deepStrictEqual([error._tag, error.message], [
        "NumberUnavailable",
        `The phone number ${e164} is no longer available for purchase.`
      ])
      assert.strictEqual(fake().requests.filter((r) => r.method === "POST").length, 1)
    }))

  it.live("a number no search returned is refused the same way; a refusal with only a title gives the title", () =>
    Effect.gen(function*() {
      const { error } = yield* failure(order("+13122010002"))
      assert.strictEqual(error._tag, "NumberUnavailable")
      assert.include(error.message, "no longer available for purchase")
      fake().script({ type: "error", status: 400, code: "10015", title: "Bad Request" })
      const { error: titled } = yield* failure(order("+13122010002"))
      assert.deepStrictEqual([titled._tag, titled.message], ["NumberUnavailable", "Bad Request"])
    }))

  it.live("an order that fails while settling is NumberUnavailable", () =>
    Effect.gen(function*() {
      fake().setOrderFlow({ onCreate: "pending", onRetrieve: "failure" })
      const e164 = yield* searched()
      const { error } = yield* failure(order(e164))
      assert.strictEqual(error._tag, "NumberUnavailable")
      assert.strictEqual(error.message, `Telnyx could not fulfil the order for ${e164}`)
      assert.isFalse(fake().owned.has(e164))
    }))

  it.live("an order still pending after settleMs is kept as bought, after a bounded number of looks", () =>
    Effect.gen(function*() {
      fake().setOrderFlow({ onCreate: "pending", onRetrieve: "pending" })
      const e164 = yield* searched()
      const started = Date.now()
      const ordered = yield* order(e164, "local", { settleMs: 300, pollMs: 100 })
      const ms = Date.now() - started
      assert.strictEqual(ordered.e164, e164)
      const polls = fake().requests.filter((r) => r.method === "GET" && r.path.startsWith("/v2/number_orders/"))
      assert.isAtLeast(polls.length, 2)
      assert.isAtMost(polls.length, 5)
      assert.isBelow(ms, 1_500)
    }))

  it.live("a 403 on the order is our account's problem: `unavailable`, and no order was placed", () =>
    Effect.gen(function*() {
      const e164 = yield* searched()
      fake().script({ type: "error", status: 403, code: "10010", title: "Authorization failed" })
      const { error } = yield* failure(order(e164))
      assert.strictEqual(error._tag, "CarrierError")
      assert.include(error.message, "403")
      assert.notInclude(error.message, "may have been placed")
      assert.strictEqual(inventoryError(error)._tag, "Internal")
    }))

  it.live("a failed look at a pending order counts as still pending: the next look settles it", () =>
    Effect.gen(function*() {
      const e164 = yield* searched()
      const running = yield* Effect.fork(order(e164, "local", { pollMs: 300 }))
      // Once the order is posted, the next request (the first look) answers 404.
      while (!fake().requests.some((r) => r.method === "POST")) yield* Effect.sleep("10 millis")
      fake().script({ type: "error", status: 404, code: "10005", title: "Resource not found" })
      const ordered = yield* running.await.pipe(Effect.flatten)
      assert.strictEqual(ordered.e164, e164)
      const looks = fake().requests.filter((r) => r.method === "GET" && r.path.startsWith("/v2/number_orders/"))
      assert.deepStrictEqual(looks.map((r) => r.answer), [404, 200])
    }))

  it.live("a 429 on the order is retried (Telnyx did not place it)", () =>
    Effect.gen(function*() {
      const e164 = yield* searched()
      fake().script({ type: "rateLimit", retryAfterSeconds: null })
      const ordered = yield* order(e164)
      assert.strictEqual(ordered.e164, e164)
      assert.deepStrictEqual(
        fake().requests.filter((r) => r.method === "POST").map((r) => r.answer),
        [429, 200]
      )
    }))

  it.live("a 5xx on the order is `unavailable` at once: the order may have been placed, so it is not resent", () =>
    Effect.gen(function*() {
      for (const status of [500, 503]) {
        fake().reset()
        const e164 = yield* searched()
        fake().script({ type: "serverError", status })
        const { error } = yield* failure(order(e164))
        assert.strictEqual((error as CarrierError).reason, "unavailable")
        assert.include(error.message, String(status))
        assert.include(error.message, "the order may have been placed")
        assert.deepStrictEqual(fake().requests.filter((r) => r.method === "POST").map((r) => r.answer), [status])
        assert.strictEqual(inventoryError(error)._tag, "Internal")
      }
    }))

  it.live("a hang on the order is `unavailable` within the timeout, and not resent", () =>
    Effect.gen(function*() {
      const e164 = yield* searched()
      fake().script({ type: "hang" }, 3)
      const { error, ms } = yield* failure(order(e164, "local", { timeoutMs: 300 }))
      assert.strictEqual((error as CarrierError).reason, "unavailable")
      assert.include(error.message, "300 ms")
      assert.include(error.message, "the order may have been placed")
      assert.isBelow(ms, 1_500)
      assert.strictEqual(fake().requests.filter((r) => r.method === "POST").length, 1)
    }))

  it.live("a malformed order answer is `unavailable`", () =>
    Effect.gen(function*() {
      const e164 = yield* searched()
      fake().script({ type: "malformed", body: JSON.stringify({ data: { status: "pending" } }) })
      const { error } = yield* failure(order(e164))
      assert.strictEqual((error as CarrierError).reason, "unavailable")
      assert.include(error.message, "malformed")
      assert.include(error.message, "the order may have been placed")
    }))
})
