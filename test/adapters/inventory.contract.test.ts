/**
 * The simulated carrier's number inventory, run unchanged over every NumberStore it can consult:
 * memory, SQL on PGlite (in-memory, migrated) and SQL on a real Postgres (a fresh database). Every
 * SPEC filter and their combinations, the limit, the stable carrier order (pinned, so it holds across
 * processes and releases), the retail quote, numbers held by any workspace vanishing from every
 * search (also past the first window of candidates), and orders: an available number is sold, a
 * held or unknown one fails with the carrier's message. Without a Postgres URL the Postgres suite is
 * skipped, except under CI=true where that fails. The port's promises, which Telnyx keeps too, are
 * carrier.inventory.contract.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { catalogue, matches, PER_CODE } from "../../adapters/carrier/simulatedInventory.ts"
import * as SimulatedInventory from "../../adapters/carrier/simulatedInventory.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import {
  type AvailableNumber,
  type AvailableNumbersInput,
  inventoryQuery,
  NumberInventory,
  numberTaken
} from "../../core/numbers/inventory.ts"
import { NumberStore, numberTypeOf } from "../../core/numbers/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { hold, newWorkspace, number, uuid } from "./stores.contract.ts"

type Ports = NumberInventory | NumberStore | WorkspaceStore

const search = (input: AvailableNumbersInput = {}) =>
  Effect.gen(function*() {
    const query = yield* inventoryQuery(input)
    return yield* (yield* NumberInventory).search(query)
  })

const e164s = (rows: ReadonlyArray<AvailableNumber>) => rows.map((r) => r.phone_number as string)
const national = (r: AvailableNumber) => r.phone_number.slice(2)
const region = (r: AvailableNumber, type: string) =>
  r.region_information.find((i) => i.region_type === type)?.region_name

/** What the carrier should answer: the first `limit` matching numbers of its catalogue that no workspace holds. */
const expected = (input: AvailableNumbersInput = {}) =>
  Effect.gen(function*() {
    const query = yield* inventoryQuery(input)
    const candidates = catalogue(query.type).filter(matches(query)).map((l) => l.view.phone_number as string)
    const taken = yield* (yield* NumberStore).taken(candidates)
    return candidates.filter((e) => !taken.has(e)).slice(0, query.limit)
  })

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { timeout: "60 seconds" })(name, (it) => {
    it.effect("the catalogue: 53 real area codes and 7 toll-free codes, distinct E.164 numbers of the right type", () =>
      Effect.sync(() => {
        const local = catalogue("local")
        const tollFree = catalogue("toll_free")
        assert.strictEqual(local.length, 53 * PER_CODE)
        assert.strictEqual(tollFree.length, 7 * PER_CODE)
        const all = [...local, ...tollFree].map((l) => l.view.phone_number)
        assert.strictEqual(new Set(all).size, all.length)
        for (const l of local) {
          assert.match(l.view.phone_number, /^\+1[2-9]\d{2}[2-9]\d{6}$/)
          assert.strictEqual(numberTypeOf(l.view.phone_number), "local")
          assert.notMatch(l.national.slice(3, 6), /^(\d11|555)$/)
        }
        for (const l of tollFree) assert.strictEqual(numberTypeOf(l.view.phone_number), "toll_free")
      }))

    it.effect("a default search: 20 local US numbers in carrier order (pinned), quoted at 5.00 USD a month", () =>
      Effect.gen(function*() {
        const rows = yield* search()
        assert.strictEqual(rows.length, 20)
        assert.deepStrictEqual(e164s(rows), yield* expected())
        // The carrier order is a pure function of the catalogue: the same on every process, run and release.
        assert.deepStrictEqual(
          catalogue("local").slice(0, 3).map((l) => l.view.phone_number),
          ["+12122700870", "+12134447230", "+13124600844"]
        )
        for (const r of rows) {
          assert.strictEqual(r.phone_number_type, "local")
          assert.deepStrictEqual(r.cost_information, { monthly_cost: "5.00", upfront_cost: "0.00", currency: "USD" })
          assert.deepStrictEqual(r.region_information.map((i) => i.region_type), [
            "rate_center",
            "state",
            "country_code"
          ])
          assert.strictEqual(region(r, "country_code"), "US")
        }
        // Round robin over the area codes: twenty different places.
        assert.strictEqual(new Set(rows.map((r) => national(r).slice(0, 3))).size, 20)
        assert.deepStrictEqual(rows[2]!.region_information, [
          { region_type: "rate_center", region_name: "CHICAGO" },
          { region_type: "state", region_name: "IL" },
          { region_type: "country_code", region_name: "US" }
        ])
      }))

    it.effect("the same search answers the same list, in the same order", () =>
      Effect.gen(function*() {
        const input = { contains: "42", limit: 50 }
        const first = yield* search(input)
        assert.deepStrictEqual(yield* search(input), first)
        assert.deepStrictEqual(e164s(first), yield* expected(input))
      }))

    it.effect("limit: 1 to 50", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* search({ limit: 1 })).length, 1)
        assert.strictEqual((yield* search({ limit: 50 })).length, 50)
        // A smaller limit is a prefix of a larger one.
        assert.deepStrictEqual(yield* search({ limit: 7 }), (yield* search({ limit: 50 })).slice(0, 7))
        // Fewer matches than the limit: all of them.
        const rare = yield* search({ startsWith: "907", contains: "00", limit: 50 })
        assert.isBelow(rare.length, 50)
        assert.deepStrictEqual(e164s(rare), yield* expected({ startsWith: "907", contains: "00", limit: 50 }))
      }))

    it.effect("type=toll_free: 8xx lines at 10.00 USD, with the country as their only region", () =>
      Effect.gen(function*() {
        const rows = yield* search({ type: "toll_free", limit: 50 })
        assert.strictEqual(rows.length, 50)
        assert.deepStrictEqual(e164s(rows), yield* expected({ type: "toll_free", limit: 50 }))
        for (const r of rows) {
          assert.strictEqual(r.phone_number_type, "toll_free")
          assert.strictEqual(numberTypeOf(r.phone_number), "toll_free")
          assert.deepStrictEqual(r.cost_information, { monthly_cost: "10.00", upfront_cost: "0.00", currency: "USD" })
          assert.deepStrictEqual(r.region_information, [{ region_type: "country_code", region_name: "US" }])
        }
        const prefixes = new Set(rows.map((r) => national(r).slice(0, 3)))
        assert.deepStrictEqual([...prefixes].sort(), ["800", "833", "844", "855", "866", "877", "888"])
        // contains works on toll-free numbers too.
        for (const r of yield* search({ type: "toll_free", contains: "888" })) assert.include(national(r), "888")
      }))

    it.effect("startsWith: leading digits of the national number, the area code or more", () =>
      Effect.gen(function*() {
        const chicago = yield* search({ startsWith: "312" })
        assert.strictEqual(chicago.length, 20)
        for (const r of chicago) {
          assert.isTrue(national(r).startsWith("312"))
          assert.strictEqual(region(r, "rate_center"), "CHICAGO")
          assert.strictEqual(region(r, "state"), "IL")
        }
        const longer = national(chicago[0]!).slice(0, 6)
        const narrow = yield* search({ startsWith: longer, limit: 50 })
        assert.isAtLeast(narrow.length, 1)
        for (const r of narrow) assert.isTrue(national(r).startsWith(longer))
        assert.deepStrictEqual(e164s(narrow), yield* expected({ startsWith: longer, limit: 50 }))
        // Two leading digits span several area codes.
        const codes = new Set((yield* search({ startsWith: "41", limit: 50 })).map((r) => national(r).slice(0, 3)))
        assert.deepStrictEqual([...codes].sort(), ["410", "412", "414", "415"])
        assert.deepStrictEqual(yield* search({ startsWith: "999" }), [])
      }))

    it.effect("contains: digits anywhere in the national number", () =>
      Effect.gen(function*() {
        const rows = yield* search({ contains: "77", limit: 50 })
        assert.strictEqual(rows.length, 50)
        for (const r of rows) assert.include(national(r), "77")
        assert.isTrue(rows.some((r) => !national(r).startsWith("77") && !national(r).endsWith("77")))
        assert.deepStrictEqual(e164s(rows), yield* expected({ contains: "77", limit: 50 }))
        // The whole national number matches itself.
        const one = rows[0]!
        assert.deepStrictEqual(e164s(yield* search({ contains: national(one) })), [one.phone_number])
      }))

    it.effect("locality: the city, whatever its case and spacing; every area code of that city", () =>
      Effect.gen(function*() {
        const rows = yield* search({ locality: "chicago", limit: 50 })
        assert.strictEqual(rows.length, 50)
        for (const r of rows) assert.strictEqual(region(r, "rate_center"), "CHICAGO")
        assert.deepStrictEqual([...new Set(rows.map((r) => national(r).slice(0, 3)))].sort(), ["312", "773"])
        assert.deepStrictEqual(yield* search({ locality: "  CHICAGO " }), yield* search({ locality: "Chicago" }))
        const ny = yield* search({ locality: "new   york", limit: 50 })
        assert.deepStrictEqual([...new Set(ny.map((r) => national(r).slice(0, 3)))].sort(), ["212", "646", "718"])
        assert.deepStrictEqual(yield* search({ locality: "Springfield" }), [])
      }))

    it.effect("state: a code or a name, either case", () =>
      Effect.gen(function*() {
        const il = yield* search({ state: "IL", limit: 50 })
        assert.strictEqual(il.length, 50)
        for (const r of il) assert.strictEqual(region(r, "state"), "IL")
        assert.deepStrictEqual(yield* search({ state: "illinois", limit: 50 }), il)
        assert.deepStrictEqual(yield* search({ state: "il", limit: 50 }), il)
        const tx = yield* search({ state: "Texas", limit: 50 })
        assert.deepStrictEqual([...new Set(tx.map((r) => national(r).slice(0, 3)))].sort(), [
          "210",
          "214",
          "512",
          "713"
        ])
        assert.deepStrictEqual(yield* search({ state: "Bavaria" }), [])
        // Toll-free lines belong to no state.
        assert.deepStrictEqual(yield* search({ type: "toll_free", state: "IL" }), [])
      }))

    it.effect("country: US by default, CA has its own area codes, elsewhere nothing", () =>
      Effect.gen(function*() {
        const ca = yield* search({ country: "ca", limit: 50 })
        assert.strictEqual(ca.length, 50)
        for (const r of ca) assert.strictEqual(region(r, "country_code"), "CA")
        assert.deepStrictEqual([...new Set(ca.map((r) => national(r).slice(0, 3)))].sort(), [
          "403",
          "416",
          "514",
          "604",
          "613"
        ])
        assert.deepStrictEqual(
          yield* search({ country: "CA", state: "Ontario", limit: 50 }),
          yield* search({ country: "CA", state: "ON", limit: 50 })
        )
        assert.deepStrictEqual(yield* search({ country: "GB" }), [])
        assert.deepStrictEqual(yield* search({ country: "CA", type: "toll_free" }), [])
        for (const r of yield* search({ limit: 50 })) assert.strictEqual(region(r, "country_code"), "US")
        // A Canadian area code is not in the US inventory.
        assert.deepStrictEqual(yield* search({ startsWith: "416" }), [])
      }))

    it.effect("filters combine: each result passes all of them", () =>
      Effect.gen(function*() {
        const input = { startsWith: "2", contains: "5", state: "NY", locality: "New York", limit: 50 }
        const rows = yield* search(input)
        assert.isAtLeast(rows.length, 1)
        for (const r of rows) {
          assert.isTrue(national(r).startsWith("2"))
          assert.include(national(r), "5")
          assert.strictEqual(region(r, "state"), "NY")
        }
        assert.deepStrictEqual(e164s(rows), yield* expected(input))
        assert.deepStrictEqual(yield* search({ startsWith: "212", state: "CA" }), [])
      }))

    it.effect("a number any workspace holds vanishes from every search; the next one moves up", () =>
      Effect.gen(function*() {
        const input = { startsWith: "808", limit: 5 }
        const before = e164s(yield* search(input))
        assert.strictEqual(before.length, 5)
        yield* hold([before[0]!, before[2]!])
        const after = e164s(yield* search(input))
        assert.deepStrictEqual(after.slice(0, 3), [before[1]!, before[3]!, before[4]!])
        assert.strictEqual(after.length, 5)
        assert.notInclude(after, before[0]!)
        // Gone from every search that would list it.
        assert.notInclude(
          e164s(yield* search({ contains: national({ phone_number: before[0]! } as AvailableNumber) })),
          before[0]!
        )
        assert.notInclude(e164s(yield* search({ state: "HI", limit: 50 })), before[2]!)
      }))

    it.effect("held numbers are skipped past the first window of candidates", () =>
      Effect.gen(function*() {
        const all = catalogue("local").filter((l) => l.national.startsWith("907")).map((l) =>
          l.view.phone_number as string
        )
        const held = yield* (yield* NumberStore).taken(all)
        const candidates = all.filter((e) => !held.has(e))
        // More than one window (50) held: the search must keep asking the store.
        yield* hold(candidates.slice(0, 120))
        const rows = e164s(yield* search({ startsWith: "907", limit: 20 }))
        assert.deepStrictEqual(rows, candidates.slice(120, 140))
        assert.deepStrictEqual(rows, yield* expected({ startsWith: "907", limit: 20 }))
      }))

    it.effect("order: an available number is sold with a carrier order id; the purchase's insert then hides it", () =>
      Effect.gen(function*() {
        const inventory = yield* NumberInventory
        const [first] = yield* search({ startsWith: "503", limit: 1 })
        const ordered = yield* inventory.order(first!.phone_number, "local")
        assert.strictEqual(ordered.e164, first!.phone_number)
        assert.strictEqual(ordered.type, "local")
        assert.match(ordered.carrierOrderId, /^sim_order_[0-9a-f-]{36}$/)
        // Ordering records nothing itself: the insert into the numbers table decides ownership.
        assert.include(e164s(yield* search({ startsWith: "503", limit: 1 })), first!.phone_number)
        yield* hold([first!.phone_number])
        assert.notInclude(e164s(yield* search({ startsWith: "503", limit: 1 })), first!.phone_number)
        const tollFree = (yield* search({ type: "toll_free", limit: 1 }))[0]!
        assert.strictEqual((yield* inventory.order(tollFree.phone_number, "toll_free")).type, "toll_free")
      }))

    it.effect("order: a number another workspace took after the search fails with the carrier's message", () =>
      Effect.gen(function*() {
        const inventory = yield* NumberInventory
        const [n] = yield* search({ startsWith: "971", limit: 1 })
        yield* hold([n!.phone_number])
        const error = yield* Effect.flip(inventory.order(n!.phone_number, "local"))
        assert.strictEqual(error._tag, "NumberUnavailable")
        assert.deepStrictEqual(error, numberTaken(n!.phone_number))
        assert.strictEqual(error.message, `Phone number ${n!.phone_number} is no longer available`)
      }))

    it.effect("order: a number the carrier never listed, or of the other type, is not for sale", () =>
      Effect.gen(function*() {
        const inventory = yield* NumberInventory
        const unlisted = yield* Effect.flip(inventory.order("+15550001111" as E164, "local"))
        assert.strictEqual(unlisted.message, "Phone number +15550001111 is not available for purchase")
        const [local] = yield* search({ limit: 1 })
        const wrongType = yield* Effect.flip(inventory.order(local!.phone_number, "toll_free"))
        assert.strictEqual(wrongType._tag, "NumberUnavailable")
        assert.include(wrongType.message, "is not available for purchase")
      }))

    it.effect("order: of two workspaces ordering one number at once, the numbers table keeps exactly one", () =>
      Effect.gen(function*() {
        const inventory = yield* NumberInventory
        const store = yield* NumberStore
        const [n] = yield* search({ startsWith: "720", limit: 1 })
        const e164 = n!.phone_number
        const [a, b] = [yield* newWorkspace, yield* newWorkspace]
        // Each purchase: the carrier order, then the insert; the insert decides, the loser reads the carrier's words.
        const buy = (workspaceId: string) =>
          inventory.order(e164, "local").pipe(
            Effect.flatMap(() => store.insert(workspaceId, number(e164), uuid())),
            Effect.catchAll((e) => Effect.fail(e === "taken" ? numberTaken(e164) : e)),
            Effect.either
          )
        const results = yield* Effect.all([buy(a), buy(b)], { concurrency: "unbounded" })
        assert.strictEqual(results.filter(Either.isRight).length, 1)
        const lost = results.find(Either.isLeft)!.left
        assert.strictEqual(lost.message, `Phone number ${e164} is no longer available`)
        const owners = [...(yield* store.list(a)), ...(yield* store.list(b))].map((x) => x.e164)
        assert.deepStrictEqual(owners, [e164])
      }))
  })

contract("NumberInventory (simulator): memory", SimulatedInventory.layer.pipe(Layer.provideMerge(MemoryStores.layer)))

sqlContract({
  name: (db) => `NumberInventory (simulator): ${db}`,
  adapter: (client) => SimulatedInventory.layer.pipe(Layer.provideMerge(sqlStores(client))),
  suite: contract,
  database: "inventory"
})
