/** Delivery policy of CONTRACT.md: retry schedule, timeout, success, auto-disable. Pure. */

/** Delay before attempt n+1 (index n = attempts already made), in seconds: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_SCHEDULE_SECONDS = [0, 5, 300, 1800, 7200, 18000, 36000, 36000] as const
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length
export const ATTEMPT_TIMEOUT_MS = 15_000
/** An endpoint whose deliveries have all failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000
/**
 * How long a claimed delivery stays locked to its worker before another may take it over (a worker
 * that died). Must outlast one attempt: the DNS re-check (up to 5 s) plus the request (15 s).
 */
export const LEASE_MS = 30_000

export const isSuccess = (status: number) => status >= 200 && status <= 299

/**
 * When the next attempt is due after `attemptsMade` attempts, or null when none is left. Jitter of up
 * to ±10% (`random` in [0, 1)) spreads retries of a burst so a recovering receiver is not stampeded.
 */
export const nextAttemptAt = (attemptsMade: number, nowMs: number, random: number): number | null => {
  const base = RETRY_SCHEDULE_SECONDS[attemptsMade]
  if (base === undefined) return null
  const jitter = base * 0.1 * (random * 2 - 1)
  return nowMs + Math.round((base + jitter) * 1000)
}

export type AttemptOutcome =
  | { readonly _tag: "Succeeded"; readonly responseStatus: number }
  | { readonly _tag: "Failed"; readonly responseStatus: number | null; readonly error: string }
  /** 410 Gone: the receiver asks us to stop; the endpoint is disabled. */
  | { readonly _tag: "Gone"; readonly responseStatus: 410 }

export const classify = (response: { readonly status: number } | { readonly error: string }): AttemptOutcome => {
  if ("error" in response) return { _tag: "Failed", responseStatus: null, error: response.error }
  if (isSuccess(response.status)) return { _tag: "Succeeded", responseStatus: response.status }
  if (response.status === 410) return { _tag: "Gone", responseStatus: 410 }
  const error = response.status >= 300 && response.status < 400
    ? `redirect ${response.status} not followed`
    : `HTTP ${response.status}`
  return { _tag: "Failed", responseStatus: response.status, error }
}

/** Whether an endpoint failing since `failingSince` should now be disabled. */
export const shouldDisable = (failingSinceMs: number | null, nowMs: number) =>
  failingSinceMs !== null && nowMs - failingSinceMs >= DISABLE_AFTER_MS
