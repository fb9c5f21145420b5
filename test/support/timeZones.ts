/** Time zone fixtures for the property tests of local-time rules (agent hours, quiet hours). */

/**
 * Zones with one offset (minutes east of UTC) for 2020-2030, so an oracle can compute their local
 * time by plain arithmetic, independent of the Intl code under test.
 */
export const fixedZones: Readonly<Record<string, number>> = {
  UTC: 0,
  "Etc/GMT+5": -300,
  "Asia/Kolkata": 330,
  "Asia/Kathmandu": 345,
  "Pacific/Kiritimati": 840,
  "Pacific/Pago_Pago": -660
}

/** A minute of the day as `HH:MM`. */
export const hhmm = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`
