/**
 * The workspace clock (CONTRACT "Test helpers" `POST /clock`): an offset a test key moves forward, so
 * a client can see a 24-hour PIN expiry or idempotency window pass in a second, like Stripe's test
 * clocks. Read by the rules that wait on time: PIN expiry, the resend limit, the idempotency
 * window of test keys, when webhook retries come due, and when scheduled messages and broadcasts
 * fall due and quiet hours end (the stores' `claimDue`). Everything else
 * (timestamps, rate limits) keeps real time.
 */
import { Clock, Context, Effect } from "effect"

export interface WorkspaceClock {
  /** How far (ms, never negative) the workspace's clock is ahead of real time. */
  readonly offset: (workspaceId: string) => Effect.Effect<number>
  /** Moves the clock forward by `millis`; answers the new offset. */
  readonly advance: (workspaceId: string, millis: number) => Effect.Effect<number>
}
export const WorkspaceClock = Context.GenericTag<WorkspaceClock>("core/WorkspaceClock")

/** Now on the workspace's clock, in ms since the epoch. */
export const workspaceNow = (workspaceId: string): Effect.Effect<number, never, WorkspaceClock> =>
  Effect.zipWith(
    Clock.currentTimeMillis,
    Effect.flatMap(WorkspaceClock, (c) => c.offset(workspaceId)),
    (now, offset) => now + offset
  )
