/**
 * The number inventory port (core/numbers/inventory.ts), one suite run over each adapter: the
 * simulator over the memory stores, and Telnyx over the fake Telnyx (test/support/fakeTelnyx.ts).
 * Every result passes every filter and is of the searched type at our retail price; at most
 * `limit`, in the carrier's stable order; a number bought and held, or held by someone else, is
 * never listed and never sold again (`NumberUnavailable` in the carrier's words), nor is one the
 * carrier never listed; a carrier that cannot answer is `unavailable`. What only one adapter does
 * (the simulator's catalogue over every store, Telnyx's query and order settling) stays in
 * inventory.contract.test.ts and telnyxInventory.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SimulatedInventory from "../../adapters/carrier/simulatedInventory.ts"
import * as TelnyxInventory from "../../adapters/carrier/telnyxInventory.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import {
  type AvailableNumber,
  type AvailableNumbersInput,
  inventoryError,
  inventoryQuery,
  NumberInventory,
  retailCost
} from "../../core/numbers/inventory.ts"
import { numberTypeOf } from "../../core/numbers/model.ts"
import { fakeAccount, fakeOutage, type Harness, simulated } from "../support/carrierContract.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"

/** One adapter, fresh for each test, and what holding a number means to it. */
interface Subject {
  readonly inventory: NumberInventory
  /** What a purchase does once the carrier sold us the number, for it to count as held. */
  readonly afterOrder: (e164: string) => Effect.Effect<void>
  /** Someone else (another customer, or for the simulator another workspace) holds the number now. */
  readonly takenElsewhere: (e164: string) => Effect.Effect<void>
}

const fake = useFakeTelnyx()

const simulator: Harness<Subject> = {
  name: "simulator",
  // The purchase's insert into the numbers table holds a number, as any workspace's would.
  make: simulated(
    SimulatedInventory.layer,
    (held) => Effect.map(NumberInventory, (inventory) => ({ inventory, afterOrder: held, takenElsewhere: held }))
  )
}

const telnyx: Harness<Subject> = {
  name: "Telnyx",
  make: Effect.sync(() => ({
    inventory: TelnyxInventory.make(fakeAccount(fake()), { pollMs: 50 }),
    // The order itself put the number on our account.
    afterOrder: () => Effect.void,
    takenElsewhere: (e164: string) => Effect.sync(() => fake().takeNumber(e164))
  })),
  outage: fakeOutage(fake)
}

const e164s = (rows: ReadonlyArray<AvailableNumber>) => rows.map((r) => r.phone_number as string)
const national = (e164: string) => e164.slice(2)
const region = (r: AvailableNumber, type: string) =>
  r.region_information.find((i) => i.region_type === type)?.region_name

const contract = (harness: Harness<Subject>) =>
  describe(`NumberInventory (${harness.name})`, () => {
    const search = (inventory: NumberInventory, input: AvailableNumbersInput = {}) =>
      Effect.flatMap(Effect.orDie(inventoryQuery(input)), inventory.search)

    /** The first number a search lists. */
    const first = (inventory: NumberInventory, input: AvailableNumbersInput) =>
      Effect.map(search(inventory, { ...input, limit: 1 }), ([row]) => row!.phone_number)

    /** The order fails as `NumberUnavailable` for `e164`, in words naming it, answered 409 with those words. */
    const unavailable = (inventory: NumberInventory, e164: E164, type: "local" | "toll_free" = "local") =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(inventory.order(e164, type))
        assert.strictEqual(error._tag, "NumberUnavailable", error.message)
        if (error._tag !== "NumberUnavailable") return
        assert.strictEqual(error.e164, e164)
        assert.include(error.message, e164)
        const answer = inventoryError(error)
        assert.deepStrictEqual([answer._tag, answer.message], ["FailedPrecondition", error.message])
      })

    it.live("every result passes every filter of the search, is of its type and quoted at our retail price", () =>
      Effect.gen(function*() {
        const { inventory } = yield* harness.make
        const inputs: ReadonlyArray<AvailableNumbersInput> = [
          { limit: 50 },
          { startsWith: "312" },
          { contains: "01" },
          { locality: " chicago " },
          { state: "Illinois" },
          { startsWith: "312", contains: "20", locality: "Chicago", state: "IL" },
          { type: "toll_free" },
          { type: "toll_free", contains: "5" }
        ]
        for (const input of inputs) {
          const q = yield* Effect.orDie(inventoryQuery(input))
          const rows = yield* inventory.search(q)
          assert.isNotEmpty(rows, JSON.stringify(input))
          for (const r of rows) {
            const why = `${r.phone_number} for ${JSON.stringify(input)}`
            assert.strictEqual(r.phone_number_type, q.type, why)
            assert.strictEqual(numberTypeOf(r.phone_number), q.type, why)
            assert.deepStrictEqual(r.cost_information, retailCost(q.type), why)
            assert.strictEqual(region(r, "country_code"), q.country, why)
            if (q.startsWith !== null) assert.isTrue(national(r.phone_number).startsWith(q.startsWith), why)
            if (q.contains !== null) assert.include(national(r.phone_number), q.contains, why)
            // Both carriers name a local number's rate center after its city.
            if (q.locality !== null) assert.strictEqual(region(r, "rate_center")?.toLowerCase(), "chicago", why)
            if (q.state !== null) assert.strictEqual(region(r, "state"), "IL", why)
          }
        }
      }))

    it.live("a search nothing matches answers no numbers", () =>
      Effect.gen(function*() {
        const { inventory } = yield* harness.make
        assert.deepStrictEqual(yield* search(inventory, { startsWith: "999" }), [])
        assert.deepStrictEqual(yield* search(inventory, { locality: "New York", state: "IL" }), [])
      }))

    it.live("at most `limit`, in the carrier's order: a smaller limit answers the start of a larger one", () =>
      Effect.gen(function*() {
        const { inventory } = yield* harness.make
        const three = yield* search(inventory, { locality: "Chicago", limit: 3 })
        assert.strictEqual(three.length, 3)
        assert.deepStrictEqual(yield* search(inventory, { locality: "Chicago", limit: 2 }), three.slice(0, 2))
        assert.deepStrictEqual(yield* search(inventory, { locality: "Chicago", limit: 1 }), three.slice(0, 1))
      }))

    it.live("the same search answers the same list", () =>
      Effect.gen(function*() {
        const { inventory } = yield* harness.make
        for (const input of [{}, { state: "NY" }, { type: "toll_free" as const }]) {
          const once = yield* search(inventory, input)
          assert.isNotEmpty(once)
          assert.deepStrictEqual(yield* search(inventory, input), once)
        }
      }))

    it.live("an available number is sold, local or toll-free; once held it is in no search", () =>
      Effect.gen(function*() {
        const { afterOrder, inventory } = yield* harness.make
        for (const input of [{ locality: "San Francisco" }, { type: "toll_free" as const }]) {
          const type = input.type ?? "local"
          const e164 = yield* first(inventory, input)
          const ordered = yield* inventory.order(e164, type)
          assert.deepStrictEqual([ordered.e164, ordered.type], [e164, type])
          assert.isNotEmpty(ordered.carrierOrderId)
          yield* afterOrder(e164)
          assert.notInclude(e164s(yield* search(inventory, input)), e164)
          assert.notInclude(e164s(yield* search(inventory, { type, contains: national(e164) })), e164)
        }
      }))

    it.live("a number someone else took after the search is in no search, and not for sale", () =>
      Effect.gen(function*() {
        const { inventory, takenElsewhere } = yield* harness.make
        const e164 = yield* first(inventory, { state: "NY" })
        yield* takenElsewhere(e164)
        assert.notInclude(e164s(yield* search(inventory, { state: "NY", limit: 50 })), e164)
        yield* unavailable(inventory, e164)
      }))

    it.live("a number we bought and hold is not sold to us again", () =>
      Effect.gen(function*() {
        const { afterOrder, inventory } = yield* harness.make
        const e164 = yield* first(inventory, { locality: "Chicago" })
        yield* inventory.order(e164, "local")
        yield* afterOrder(e164)
        yield* unavailable(inventory, e164)
      }))

    it.live("a number the carrier never listed is not for sale", () =>
      Effect.gen(function*() {
        const { inventory } = yield* harness.make
        yield* unavailable(inventory, "+15550001111" as E164)
      }))

    if (harness.outage !== undefined) {
      const outage = harness.outage
      it.live("a carrier that keeps failing is `unavailable` to searches and orders", () =>
        Effect.gen(function*() {
          const { inventory } = yield* harness.make
          const e164 = yield* first(inventory, {})
          outage()
          const searching = yield* Effect.flip(search(inventory))
          assert.strictEqual(searching.reason, "unavailable")
          const ordering = yield* Effect.flip(inventory.order(e164, "local"))
          assert.strictEqual(ordering._tag, "CarrierError")
          if (ordering._tag === "CarrierError") assert.strictEqual(ordering.reason, "unavailable")
        }))
    }
  })

contract(simulator)
contract(telnyx)
