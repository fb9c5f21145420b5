/**
 * The simulated carrier's number inventory: a fixed, realistic catalogue (real US and Canadian area
 * codes with their main city and state or province, and US toll-free 8xx numbers), generated from a
 * hash of area code and index so every process, test and restart sees the same numbers in the same
 * order. No randomness, no clock.
 *
 * What is for sale is the catalogue less the numbers table: a search asks the NumberStore which of
 * its candidates some workspace holds, and an order asks again for its one number at the moment it
 * is placed. The numbers table is the one record of ownership, shared by every process on the
 * database and kept across restarts; numbers the admin API seeds and numbers any process bought are
 * in it alike. A private "sold" set here would forget on restart, differ between processes and miss
 * seeded numbers. Two orders checked at the same moment can both pass; the purchase's insert into
 * the numbers table (unique on e164) then decides, as it would between two real customers.
 */
import { Effect, Layer, Option } from "effect"
import { Ids } from "../../core/kernel/ids.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import {
  type AvailableNumber,
  type InventoryQuery,
  NumberInventory,
  numberTaken,
  NumberUnavailable,
  retailCost
} from "../../core/numbers/inventory.ts"
import { NumberStore, type NumberType } from "../../core/numbers/model.ts"
import { foldRegion } from "../../core/numbers/regions.ts"

/** Area codes in the catalogue's order: code, main city, state or province code, country. */
const AREA_CODES: ReadonlyArray<readonly [npa: string, city: string, state: string, country: "US" | "CA"]> = [
  ["212", "New York", "NY", "US"],
  ["213", "Los Angeles", "CA", "US"],
  ["312", "Chicago", "IL", "US"],
  ["415", "San Francisco", "CA", "US"],
  ["617", "Boston", "MA", "US"],
  ["206", "Seattle", "WA", "US"],
  ["202", "Washington", "DC", "US"],
  ["305", "Miami", "FL", "US"],
  ["512", "Austin", "TX", "US"],
  ["303", "Denver", "CO", "US"],
  ["404", "Atlanta", "GA", "US"],
  ["713", "Houston", "TX", "US"],
  ["214", "Dallas", "TX", "US"],
  ["215", "Philadelphia", "PA", "US"],
  ["602", "Phoenix", "AZ", "US"],
  ["619", "San Diego", "CA", "US"],
  ["408", "San Jose", "CA", "US"],
  ["503", "Portland", "OR", "US"],
  ["612", "Minneapolis", "MN", "US"],
  ["615", "Nashville", "TN", "US"],
  ["702", "Las Vegas", "NV", "US"],
  ["704", "Charlotte", "NC", "US"],
  ["313", "Detroit", "MI", "US"],
  ["314", "St. Louis", "MO", "US"],
  ["412", "Pittsburgh", "PA", "US"],
  ["504", "New Orleans", "LA", "US"],
  ["801", "Salt Lake City", "UT", "US"],
  ["808", "Honolulu", "HI", "US"],
  ["813", "Tampa", "FL", "US"],
  ["816", "Kansas City", "MO", "US"],
  ["907", "Anchorage", "AK", "US"],
  ["916", "Sacramento", "CA", "US"],
  ["919", "Raleigh", "NC", "US"],
  ["317", "Indianapolis", "IN", "US"],
  ["414", "Milwaukee", "WI", "US"],
  ["502", "Louisville", "KY", "US"],
  ["614", "Columbus", "OH", "US"],
  ["216", "Cleveland", "OH", "US"],
  ["210", "San Antonio", "TX", "US"],
  ["410", "Baltimore", "MD", "US"],
  ["401", "Providence", "RI", "US"],
  ["201", "Jersey City", "NJ", "US"],
  ["646", "New York", "NY", "US"],
  ["718", "New York", "NY", "US"],
  ["773", "Chicago", "IL", "US"],
  ["310", "Los Angeles", "CA", "US"],
  ["720", "Denver", "CO", "US"],
  ["971", "Portland", "OR", "US"],
  ["416", "Toronto", "ON", "CA"],
  ["604", "Vancouver", "BC", "CA"],
  ["514", "Montreal", "QC", "CA"],
  ["403", "Calgary", "AB", "CA"],
  ["613", "Ottawa", "ON", "CA"]
]

/** The toll-free codes (the same set `numberTypeOf` reads as toll-free). */
const TOLL_FREE_CODES = ["800", "888", "877", "866", "855", "844", "833"] as const

/** Numbers per area code or toll-free code. */
export const PER_CODE = 200

/** One number for sale, with what the filters compare. */
export interface Listing {
  readonly view: AvailableNumber
  /** The 10-digit national number that `startsWith` and `contains` read. */
  readonly national: string
  readonly country: string
  /** Folded city (`foldRegion`), or null for toll-free. */
  readonly locality: string | null
  readonly state: string | null
}

/** FNV-1a, then murmur3's finaliser to spread the bits: a stable 32-bit hash of a string. */
const hash32 = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** A central-office code real numbers use: 2xx-9xx, not N11 (service codes), 555 (directory and fiction) or 950/958/959/976. */
const usableExchange = (nxx: number) => nxx % 100 !== 11 && ![555, 950, 958, 959, 976].includes(nxx)

/** `PER_CODE` distinct subscriber numbers (NXX-XXXX) of one code, in the order the hash gives them. */
const subscribers = (code: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  for (let i = 0; seen.size < PER_CODE; i++) {
    const nxx = 200 + (hash32(`${code}:${i}:exchange`) % 800)
    const line = hash32(`${code}:${i}:line`) % 10_000
    if (usableExchange(nxx)) seen.add(`${nxx}${String(line).padStart(4, "0")}`)
  }
  return [...seen]
}

/** Round robin over the codes, so the carrier's order mixes places the way a real search answers. */
const interleave = <A>(rows: ReadonlyArray<ReadonlyArray<A>>): ReadonlyArray<A> =>
  Array.from({ length: PER_CODE }, (_, i) => rows.map((row) => row[i]!)).flat()

const listing = (
  type: NumberType,
  national: string,
  place: { city: string; state: string; country: string } | null
): Listing => ({
  view: {
    phone_number: `+1${national}` as E164,
    phone_number_type: type,
    region_information: place
      ? [
        { region_type: "rate_center", region_name: place.city.toUpperCase() },
        { region_type: "state", region_name: place.state },
        { region_type: "country_code", region_name: place.country }
      ]
      : [{ region_type: "country_code", region_name: "US" }],
    cost_information: retailCost(type)
  },
  national,
  country: place?.country ?? "US",
  locality: place ? foldRegion(place.city) : null,
  state: place?.state ?? null
})

const build = () => {
  const local = interleave(
    AREA_CODES.map(([npa, city, state, country]) =>
      subscribers(npa).map((s) => listing("local", `${npa}${s}`, { city, state, country }))
    )
  )
  const tollFree = interleave(
    TOLL_FREE_CODES.map((code) => subscribers(code).map((s) => listing("toll_free", `${code}${s}`, null)))
  )
  const byE164 = new Map([...local, ...tollFree].map((l) => [l.view.phone_number as string, l]))
  return { local, toll_free: tollFree, byE164 }
}

let built: ReturnType<typeof build> | undefined
/** The whole catalogue of one type, in the carrier's order (numbers held by workspaces included). */
export const catalogue = (type: NumberType): ReadonlyArray<Listing> => (built ??= build())[type]
const find = (e164: string): Listing | undefined => (built ??= build()).byE164.get(e164)

/** Whether a listing passes every filter of the query; places compare without regard to case. */
export const matches = (q: InventoryQuery) => {
  const locality = q.locality === null ? null : foldRegion(q.locality)
  const state = q.state === null ? null : foldRegion(q.state)
  return (l: Listing): boolean =>
    l.country === q.country &&
    (q.startsWith === null || l.national.startsWith(q.startsWith)) &&
    (q.contains === null || l.national.includes(q.contains)) &&
    (locality === null || l.locality === locality) &&
    (state === null || l.state === state)
}

export const layer = Layer.effect(
  NumberInventory,
  Effect.map(NumberStore, (store) =>
    NumberInventory.of({
      search: (q) =>
        Effect.gen(function*() {
          const candidates = catalogue(q.type).filter(matches(q))
          const found: Array<AvailableNumber> = []
          // Ask the store about a window of candidates at a time; usually the first answers the search.
          const window = Math.max(2 * q.limit, 50)
          for (let from = 0; from < candidates.length && found.length < q.limit; from += window) {
            const slice = candidates.slice(from, from + window).map((l) => l.view)
            const taken = yield* store.taken(slice.map((v) => v.phone_number))
            for (const view of slice) if (!taken.has(view.phone_number) && found.length < q.limit) found.push(view)
          }
          return found
        }),
      order: (e164, type) =>
        Effect.gen(function*() {
          const listed = find(e164)
          if (listed === undefined || listed.view.phone_number_type !== type) {
            return yield* new NumberUnavailable({ e164, message: `Phone number ${e164} is not available for purchase` })
          }
          // A test number (added with a test key) was never ordered here: still for sale.
          if (Option.exists(yield* store.findByE164(e164), (held) => held.ordered)) return yield* numberTaken(e164)
          const { uuid } = yield* Ids
          return { e164, type, carrierOrderId: `sim_order_${uuid()}` }
        })
    }))
)
