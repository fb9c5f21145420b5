/**
 * The texting pace (CONTRACT "Pacing"): each workspace's sends leave one after the other, spaced by
 * their segments at its `textingSegmentsPerMinute`, whichever process sends them. A reservation
 * books the next free time; none is booked further ahead than the horizon, so nothing a worker
 * drops (a cancel, a crash) holds the workspace's later sends back by more than that.
 * Adapters: adapters/{memory,sql}/pacer.ts.
 */
import { Context, type Effect, type Option } from "effect"

export interface Pacer {
  /**
   * Books `segments` at `segmentsPerMinute` for the workspace: answers when the send may leave (ms,
   * real time, `now` or later), or none when the next free time is beyond `now + horizonMs`.
   */
  readonly reserve: (
    workspaceId: string,
    segments: number,
    segmentsPerMinute: number,
    now: number,
    horizonMs: number
  ) => Effect.Effect<Option.Option<number>>
}
export const Pacer = Context.GenericTag<Pacer>("core/Pacer")

/** How long a send of `segments` occupies the workspace's pace. */
export const spacingMs = (segments: number, segmentsPerMinute: number): number =>
  Math.ceil((Math.max(1, segments) * 60_000) / segmentsPerMinute)

/** The next free time after booking at `now` when the pace stood at `next` (null: never booked). */
export const book = (next: number | null, now: number, cost: number, horizonMs: number) => {
  const start = Math.max(next ?? now, now)
  return start > now + horizonMs ? null : { start, next: start + cost }
}
