/**
 * Quiet hours (core/pacing/quietHours.ts): whose clock (a +1 number's area code, else the
 * workspace's zone, else UTC; the generated table's zones all known to Intl), and `nextAllowed` by
 * hand in New York and Los Angeles, across both daylight-saving switches, then as properties over
 * random instants, zones and windows, with an oracle by plain offset arithmetic in zones that keep
 * one offset.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isTimeZone } from "../../core/agent/hours.ts"
import { AREA_CODES_BY_ZONE } from "../../core/pacing/areaCodeZones.ts"
import {
  areaCodeTimeZone,
  DEFAULT_QUIET_HOURS,
  isQuiet,
  nextAllowed,
  type QuietHours,
  recipientTimeZone
} from "../../core/pacing/quietHours.ts"
import { fixedZones, hhmm } from "../support/timeZones.ts"

const at = (iso: string) => Date.parse(iso)
const NY = "America/New_York"
const LA = "America/Los_Angeles"
const night = DEFAULT_QUIET_HOURS

describe("recipientTimeZone", () => {
  it("a +1 number's area code gives its zone; multi-zone area codes their dominant one", () => {
    expect(recipientTimeZone("+12125550100")).toBe(NY)
    expect(recipientTimeZone("+13105550100")).toBe(LA)
    expect(recipientTimeZone("+13125550100")).toBe("America/Chicago")
    expect(recipientTimeZone("+16045550100")).toBe("America/Vancouver")
    expect(recipientTimeZone("+17875550100")).toBe("America/Puerto_Rico")
    expect(recipientTimeZone("+14235550100")).toBe(NY) // eastern Tennessee, though the source's area-code entry says Chicago
    expect(recipientTimeZone("+12705550100")).toBe("America/Chicago") // western Kentucky
    expect(recipientTimeZone("+16055550100")).toBe("America/Chicago") // South Dakota, mostly Central
    expect(recipientTimeZone("+19865550100")).toBe(recipientTimeZone("+12085550100")) // an overlay follows its parent
  })

  it("other numbers: the workspace's zone, else UTC", () => {
    expect(recipientTimeZone("+442071838750", "Europe/London")).toBe("Europe/London")
    expect(recipientTimeZone("+442071838750", null)).toBe("UTC")
    expect(recipientTimeZone("+442071838750")).toBe("UTC")
    // Toll-free and unassigned area codes have no place.
    expect(areaCodeTimeZone("+18005550100")).toBeUndefined()
    expect(recipientTimeZone("+18885550100", "America/Denver")).toBe("America/Denver")
    expect(areaCodeTimeZone("+1212555010")).toBeUndefined()
  })

  it("the table names each area code once, in zones the runtime knows", () => {
    const codes = Object.values(AREA_CODES_BY_ZONE).flatMap((s) => s.split(" "))
    expect(new Set(codes).size).toBe(codes.length)
    expect(codes.every((c) => /^[2-9]\d\d$/.test(c))).toBe(true)
    expect(codes.length).toBeGreaterThan(400)
    for (const zone of Object.keys(AREA_CODES_BY_ZONE)) expect(isTimeZone(zone), zone).toBe(true)
  })
})

describe("nextAllowed", () => {
  it("New York at 23:00 waits for 08:00 Eastern the next day", () => {
    // 2026-01-15 23:00 EST
    expect(nextAllowed(at("2026-01-16T04:00:00Z"), NY, night)).toBe(at("2026-01-16T13:00:00Z"))
    expect(nextAllowed(new Date("2026-01-16T04:00:00Z"), NY, night)).toBe(at("2026-01-16T13:00:00Z"))
  })

  it("one instant: New York is released at 08:00 Eastern, Los Angeles waits until 08:00 Pacific", () => {
    const t = at("2026-01-16T07:00:00Z") // 02:00 Eastern, 23:00 Pacific
    const ny = nextAllowed(t, recipientTimeZone("+12125550100"), night)
    const la = nextAllowed(t, recipientTimeZone("+13105550100"), night)
    expect(new Date(ny).toISOString()).toBe("2026-01-16T13:00:00.000Z")
    expect(new Date(la).toISOString()).toBe("2026-01-16T16:00:00.000Z")
    // 20:00 Pacific is 23:00 Eastern: New York is held, Los Angeles is not.
    const evening = at("2026-01-16T04:00:00Z")
    expect(nextAllowed(evening, LA, night)).toBe(evening)
    expect(nextAllowed(evening, NY, night)).toBe(at("2026-01-16T13:00:00Z"))
  })

  it("the spring-forward night is an hour shorter: 08:00 EDT, not nine hours after 23:00 EST", () => {
    // 2026-03-07 23:00 EST; clocks go 02:00 -> 03:00 on 2026-03-08.
    expect(nextAllowed(at("2026-03-08T04:00:00Z"), NY, night)).toBe(at("2026-03-08T12:00:00Z"))
    expect(nextAllowed(at("2026-03-08T07:00:00Z"), LA, night)).toBe(at("2026-03-08T15:00:00Z"))
  })

  it("the fall-back night is an hour longer: 08:00 EST, ten hours after 22:00 EDT", () => {
    // 2026-10-31 22:00 EDT; clocks go 02:00 -> 01:00 on 2026-11-01.
    expect(nextAllowed(at("2026-11-01T02:00:00Z"), NY, night)).toBe(at("2026-11-01T13:00:00Z"))
  })

  it("a window ending inside the skipped hour ends at the clock change", () => {
    const q = { start: "01:00", end: "02:30" }
    // 01:30 EST on 2026-03-08: 02:30 never shows; at 07:00Z the clock reads 03:00 EDT.
    expect(nextAllowed(at("2026-03-08T06:30:00Z"), NY, q)).toBe(at("2026-03-08T07:00:00Z"))
  })

  it("a window inside the repeated hour holds each pass through it", () => {
    const q = { start: "01:00", end: "01:30" }
    expect(nextAllowed(at("2026-11-01T05:10:00Z"), NY, q)).toBe(at("2026-11-01T05:30:00Z")) // 01:10 EDT
    expect(nextAllowed(at("2026-11-01T05:45:00Z"), NY, q)).toBe(at("2026-11-01T05:45:00Z")) // 01:45 EDT
    expect(nextAllowed(at("2026-11-01T06:10:00Z"), NY, q)).toBe(at("2026-11-01T06:30:00Z")) // 01:10 EST
  })

  it("a window not wrapping midnight", () => {
    const lunch = { start: "12:00", end: "13:30" }
    expect(nextAllowed(at("2026-06-01T12:15:00Z"), "UTC", lunch)).toBe(at("2026-06-01T13:30:00Z"))
    expect(nextAllowed(at("2026-06-01T11:59:00Z"), "UTC", lunch)).toBe(at("2026-06-01T11:59:00Z"))
    expect(nextAllowed(at("2026-06-01T23:00:00Z"), "UTC", lunch)).toBe(at("2026-06-01T23:00:00Z"))
  })

  it("the window holds from its start, inclusive, to its end, exclusive", () => {
    // New York in June is UTC-4: 21:00 is 01:00Z, 08:00 is 12:00Z.
    expect(nextAllowed(at("2026-06-02T01:00:00Z"), NY, night)).toBe(at("2026-06-02T12:00:00Z"))
    expect(nextAllowed(at("2026-06-02T00:59:59.999Z"), NY, night)).toBe(at("2026-06-02T00:59:59.999Z"))
    expect(nextAllowed(at("2026-06-02T11:59:59.999Z"), NY, night)).toBe(at("2026-06-02T12:00:00Z"))
    expect(nextAllowed(at("2026-06-02T12:00:00Z"), NY, night)).toBe(at("2026-06-02T12:00:00Z"))
  })

  it("no quiet hours, or a window with start == end, hold nothing", () => {
    const t = at("2026-06-02T05:00:00Z")
    expect(nextAllowed(t, NY, null)).toBe(t)
    expect(nextAllowed(t, NY, { start: "01:00", end: "01:00" })).toBe(t)
    expect(isQuiet(t, NY, null)).toBe(false)
  })
})

/** Zones that switch, both hemispheres, half-hour offsets and Lord Howe's half-hour switch. */
const switchingZones = [NY, LA, "America/St_Johns", "Europe/London", "Australia/Sydney", "Australia/Lord_Howe"]

const window: fc.Arbitrary<QuietHours> = fc
  .tuple(fc.integer({ min: 0, max: 1439 }), fc.integer({ min: 0, max: 1439 }))
  .filter(([s, e]) => s !== e)
  .map(([s, e]) => ({ start: hhmm(s), end: hhmm(e) }))
const instant = fc.integer({ min: at("2020-01-01T00:00:00Z"), max: at("2030-01-01T00:00:00Z") })
/** Instants near the daylight-saving switches, where the mistakes would be. */
const nearSwitch = fc
  .tuple(
    fc.constantFrom("2026-03-08T07:00:00Z", "2026-11-01T06:00:00Z", "2026-03-29T01:00:00Z", "2026-10-04T16:00:00Z"),
    fc.integer({ min: -30 * 60 * 60_000, max: 30 * 60 * 60_000 })
  )
  .map(([iso, d]) => at(iso) + d)

describe("nextAllowed: properties", () => {
  it("the result is at or after `at`, outside the window, `at` itself when `at` is outside, and nothing earlier is", () => {
    fc.assert(
      fc.property(fc.oneof(instant, nearSwitch), fc.constantFrom(...switchingZones), window, (t, zone, q) => {
        const next = nextAllowed(t, zone, q)
        if (next < t || isQuiet(next, zone, q)) return false
        if (!isQuiet(t, zone, q)) return next === t
        // Held: the millisecond before is still quiet, and so are points along the wait.
        const along = Array.from({ length: 8 }, (_, i) => t + Math.floor(((next - t) * i) / 8))
        return next - t < 26 * 60 * 60_000 && isQuiet(next - 1, zone, q) && along.every((u) => isQuiet(u, zone, q))
      }),
      { numRuns: 500 }
    )
  })

  it("in a zone with one offset it is plain arithmetic on the local clock", () => {
    fc.assert(
      fc.property(instant, fc.constantFrom(...Object.keys(fixedZones)), window, (t, zone, q) => {
        const offset = fixedZones[zone]! * 60_000
        const local = (((t + offset) % 86_400_000) + 86_400_000) % 86_400_000
        const minute = Math.floor(local / 60_000)
        const [s, e] = [q.start, q.end].map((x) => Number(x.slice(0, 2)) * 60 + Number(x.slice(3)))
        const quiet = s! < e! ? minute >= s! && minute < e! : minute >= s! || minute < e!
        const wait = (((e! - minute) % 1440) + 1440) % 1440
        const expected = quiet ? t - (local % 60_000) + wait * 60_000 : t
        return nextAllowed(t, zone, q) === expected
      }),
      { numRuns: 500 }
    )
  })
})
