/**
 * Whether a failure means the database cannot answer right now: the connection refused, reset
 * or ended (a restart, a failover), the server shutting down or still starting, a standby that
 * takes no writes yet, a statement past its time limit. Such a request is answered `503 unavailable` with `Retry-After`, not 500: the
 * same request succeeds once the pool reaches the database again, which it does by itself (pg drops
 * a broken connection and opens a new one on the next checkout).
 */
import { SqlError } from "@effect/sql/SqlError"

/** Node's codes for a connection that could not be made or was lost. */
const NETWORK = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND"
])

/**
 * SQLSTATEs: class 08 (connection exception), admin/crash shutdown, cannot connect now (starting or
 * in recovery), a read-only transaction (a standby not yet promoted), too many connections, and a
 * statement cancelled (past `statement_timeout`, or by an operator).
 */
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "25006", "53300", "57014"])

/** What pg says when a connection ends under a query, or a checkout times out. */
const MESSAGES =
  /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection timed out/i

const isUnavailable = (error: unknown, depth: number): boolean => {
  if (depth > 4 || typeof error !== "object" || error === null) return false
  const { cause, code, message } = error as { code?: unknown; message?: unknown; cause?: unknown }
  if (typeof code === "string" && (NETWORK.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) {
    return true
  }
  if (typeof message === "string" && MESSAGES.test(message)) return true
  return isUnavailable(cause, depth + 1)
}

/** `error` (a defect, usually a store's SqlError) as a database that is away for now. */
export const databaseUnavailable = (error: unknown): boolean =>
  error instanceof SqlError && isUnavailable(error.cause, 0)

/** Seconds a client waits before retrying while the database is away: a restart takes a few. */
export const UNAVAILABLE_RETRY_SECONDS = 2
