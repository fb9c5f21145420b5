/**
 * The states and provinces of the North American Numbering Plan countries we sell numbers in, so a
 * `state` filter can be given as a code (`IL`) or a name (`Illinois`) and reaches every carrier as
 * the code (Telnyx's `filter[administrative_area]` takes the code).
 */
const US: ReadonlyArray<readonly [code: string, name: string]> = [
  ["AL", "Alabama"],
  ["AK", "Alaska"],
  ["AZ", "Arizona"],
  ["AR", "Arkansas"],
  ["CA", "California"],
  ["CO", "Colorado"],
  ["CT", "Connecticut"],
  ["DE", "Delaware"],
  ["DC", "District of Columbia"],
  ["FL", "Florida"],
  ["GA", "Georgia"],
  ["HI", "Hawaii"],
  ["ID", "Idaho"],
  ["IL", "Illinois"],
  ["IN", "Indiana"],
  ["IA", "Iowa"],
  ["KS", "Kansas"],
  ["KY", "Kentucky"],
  ["LA", "Louisiana"],
  ["ME", "Maine"],
  ["MD", "Maryland"],
  ["MA", "Massachusetts"],
  ["MI", "Michigan"],
  ["MN", "Minnesota"],
  ["MS", "Mississippi"],
  ["MO", "Missouri"],
  ["MT", "Montana"],
  ["NE", "Nebraska"],
  ["NV", "Nevada"],
  ["NH", "New Hampshire"],
  ["NJ", "New Jersey"],
  ["NM", "New Mexico"],
  ["NY", "New York"],
  ["NC", "North Carolina"],
  ["ND", "North Dakota"],
  ["OH", "Ohio"],
  ["OK", "Oklahoma"],
  ["OR", "Oregon"],
  ["PA", "Pennsylvania"],
  ["RI", "Rhode Island"],
  ["SC", "South Carolina"],
  ["SD", "South Dakota"],
  ["TN", "Tennessee"],
  ["TX", "Texas"],
  ["UT", "Utah"],
  ["VT", "Vermont"],
  ["VA", "Virginia"],
  ["WA", "Washington"],
  ["WV", "West Virginia"],
  ["WI", "Wisconsin"],
  ["WY", "Wyoming"],
  ["PR", "Puerto Rico"]
]

const CA: ReadonlyArray<readonly [code: string, name: string]> = [
  ["AB", "Alberta"],
  ["BC", "British Columbia"],
  ["MB", "Manitoba"],
  ["NB", "New Brunswick"],
  ["NL", "Newfoundland and Labrador"],
  ["NS", "Nova Scotia"],
  ["NT", "Northwest Territories"],
  ["NU", "Nunavut"],
  ["ON", "Ontario"],
  ["PE", "Prince Edward Island"],
  ["QC", "Quebec"],
  ["SK", "Saskatchewan"],
  ["YT", "Yukon"]
]

const byCountry: Readonly<Record<string, ReadonlyMap<string, string>>> = Object.fromEntries(
  ([["US", US], ["CA", CA]] as const).map(([country, regions]) => [
    country,
    new Map(regions.flatMap(([code, name]) => [[code, code], [name.toUpperCase(), code]] as const))
  ])
)

/** Trimmed, with single spaces: the caller's spelling, tidied. */
export const tidyPlace = (s: string): string => s.trim().replace(/\s+/g, " ")

/** Case and spacing folded, so `new  york` and `New York` compare equal. */
export const foldRegion = (s: string): string => tidyPlace(s).toUpperCase()

/** The region's code when the country's table knows the code or name (`Illinois` -> `IL`); otherwise the tidied input. */
/** The code of a state or province of `country` given as a code or a name, or null when it is none of them. */
export const knownRegion = (country: string, region: string): string | null =>
  byCountry[country]?.get(foldRegion(region)) ?? null

export const regionCode = (country: string, region: string): string =>
  byCountry[country]?.get(foldRegion(region)) ?? tidyPlace(region)
