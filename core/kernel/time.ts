import { Clock, Effect } from "effect"

/** Now as an ISO 8601 string, from Effect's Clock so tests can move time. */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())
