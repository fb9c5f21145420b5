/**
 * Quiet hours (CONTRACT "Quiet hours"): a broadcast or scheduled message due inside the workspace's
 * quiet window, read on the recipient's clock, waits for the window to end. Pure: the instant is an
 * argument, and local time comes from Intl's time zone data, daylight saving included.
 */
import { AREA_CODES_BY_ZONE } from "./areaCodeZones.ts"

/** The workspace setting: `HH:MM` local times; `start` after `end` wraps midnight (21:00-08:00). */
export interface QuietHours {
  readonly start: string
  readonly end: string
}

export const DEFAULT_QUIET_HOURS: QuietHours = { start: "21:00", end: "08:00" }

const zoneByAreaCode = new Map(
  Object.entries(AREA_CODES_BY_ZONE).flatMap(([zone, codes]) => codes.split(" ").map((code) => [code, zone] as const))
)

/** The IANA zone of a +1 number's area code, or undefined (another country, or a non-geographic code). */
export const areaCodeTimeZone = (e164: string): string | undefined => {
  const match = /^\+1(\d{3})\d{7}$/.exec(e164)
  return match === null ? undefined : zoneByAreaCode.get(match[1]!)
}

/**
 * Whose clock quiet hours are read on: the area code's zone for a +1 number, otherwise the
 * workspace's zone, else UTC. Numbers move with their owners, so this is a presumption.
 */
export const recipientTimeZone = (e164: string, workspaceTimeZone?: string | null): string =>
  areaCodeTimeZone(e164) ?? workspaceTimeZone ?? "UTC"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 86_400_000

const formatters = new Map<string, Intl.DateTimeFormat>()

/** Creating a formatter costs far more than using one, and a broadcast asks per recipient. */
const formatter = (timeZone: string): Intl.DateTimeFormat => {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      hourCycle: "h23"
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** Milliseconds the wall clock in `timeZone` is ahead of UTC at `t`. */
const offsetAt = (t: number, timeZone: string): number => {
  const p: Record<string, number> = {}
  for (const { type, value } of formatter(timeZone).formatToParts(t)) p[type] = Number(value)
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!)
  return wall - Math.floor(t / 1000) * 1000
}

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

/** Minute of the local day at `t` (0-1439). */
const localMinute = (t: number, timeZone: string): number => {
  const wall = t + offsetAt(t, timeZone)
  return Math.floor((((wall % DAY) + DAY) % DAY) / MINUTE)
}

/** Whether a minute of the day is in the window: start inclusive, end exclusive; start == end is no window. */
const inWindow = (minute: number, start: number, end: number): boolean =>
  start < end ? minute >= start && minute < end : start > end && (minute >= start || minute < end)

const millis = (at: Date | number): number => typeof at === "number" ? at : at.getTime()

/** Whether `at` falls inside the quiet window on `timeZone`'s clock (never, for null). */
export const isQuiet = (at: Date | number, timeZone: string, quiet: QuietHours | null): boolean =>
  quiet !== null && inWindow(localMinute(millis(at), timeZone), minutesOf(quiet.start), minutesOf(quiet.end))

/**
 * The earliest instant (epoch ms) at or after `at` outside the quiet window on `timeZone`'s clock:
 * `at` itself when it is outside, else the moment the local clock shows `end`. A clock change can
 * skip that moment (a window ending at 02:30 on the spring-forward night): then it is the change.
 */
export const nextAllowed = (at: Date | number, timeZone: string, quiet: QuietHours | null): number => {
  const t0 = millis(at)
  if (!isQuiet(t0, timeZone, quiet)) return t0
  const [start, end] = [minutesOf(quiet!.start), minutesOf(quiet!.end)]
  // The window is under a day, so the clock leaves it within 26 hours, a repeated hour included.
  // Outside begins where the clock reaches `end` (today's or tomorrow's) or where a clock change
  // jumps out: both are candidates. Offsets change at most once in 13 hours, so three samples find
  // every offset and change in that span, and a held broadcast asks Intl a few times per recipient.
  const samples = [t0, t0 + 13 * HOUR, t0 + 26 * HOUR]
  const offsets = samples.map((t) => offsetAt(t, timeZone))
  const candidates: Array<number> = []
  for (let k = 1; k < samples.length; k++) {
    if (offsets[k] !== offsets[k - 1]) candidates.push(changeBetween(samples[k - 1]!, samples[k]!, timeZone))
  }
  const firstDay = Math.floor((t0 + offsets[0]!) / DAY)
  for (let day = firstDay; day <= firstDay + 1; day++) {
    const wall = day * DAY + end * MINUTE
    // The wall time exists once per offset it is valid under: twice in a repeated hour, never in a gap.
    for (const offset of new Set(offsets)) {
      const t = wall - offset
      if (t >= t0 && offsetAt(t, timeZone) === offset) candidates.push(t)
    }
  }
  const allowed = candidates.sort((a, b) => a - b).find((t) => !inWindow(localMinute(t, timeZone), start, end))
  if (allowed === undefined) throw new Error(`no instant outside ${quiet!.start}-${quiet!.end} in ${timeZone}`)
  return allowed
}

/** The first millisecond in (from, to] with `to`'s offset, found by bisection. */
const changeBetween = (from: number, to: number, timeZone: string): number => {
  const after = offsetAt(to, timeZone)
  let [lo, hi] = [from, to]
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (offsetAt(mid, timeZone) === after) hi = mid
    else lo = mid
  }
  return hi
}
