/**
 * A server that cannot start says why in one line and exits non-zero: a configuration error names
 * the variable, a busy port names the port. Both are found before anything is written (run.ts). Anything else is unexpected and keeps its full cause.
 * Written to stderr as plain text, whatever LOG_FORMAT says: the logger may not be configured yet
 * (LOG_FORMAT itself may be the bad setting).
 */
import { HttpServerError } from "@effect/platform"
import { Cause, ConfigError, Effect } from "effect"
import { createServer } from "node:net"

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1)

const configLeaves = (e: ConfigError.ConfigError): Array<string> => {
  switch (e._op) {
    case "And":
    case "Or":
      return [...configLeaves(e.left), ...configLeaves(e.right)]
    default:
      return [e.path.length === 0 ? e.message : `${e.path.join(".")}: ${lowerFirst(e.message)}`]
  }
}

/** The error, or one it wraps (`cause`), that carries a system error code. */
const withCode = (e: unknown, code: string): Record<string, unknown> | undefined => {
  for (
    let cur = e, depth = 0;
    typeof cur === "object" && cur !== null && depth < 5;
    cur = (cur as { cause?: unknown }).cause, depth++
  ) {
    if ((cur as { code?: unknown }).code === code) return cur as Record<string, unknown>
  }
  return undefined
}

/**
 * A setting checked while a layer is built (SECRETS_KEY's format, CARRIER=telnyx's credentials)
 * fails with a message that starts with the variable's name: `SECRETS_KEY: ...`, `CARRIER=telnyx needs ...`.
 */
const SETTING_MESSAGE = /^[A-Z][A-Z0-9_]*(=\S+)?:? /

/** The one line for an error the operator can fix, else undefined. */
export const describeError = (
  e: unknown,
  listen: { readonly port: number; readonly host: string }
): string | undefined => {
  if (ConfigError.isConfigError(e)) return `Configuration error: ${[...new Set(configLeaves(e))].join("; ")}`
  // Node's listen error carries the code; Deno throws Deno.errors.AddrInUse.
  const busy = withCode(e, "EADDRINUSE") ?? (e instanceof Error && e.name === "AddrInUse" ? {} : undefined)
  if (busy !== undefined) {
    const port = typeof busy["port"] === "number" ? busy["port"] : listen.port
    return `Port ${port} is already in use (HOST ${listen.host}); set PORT to another port`
  }
  if (withCode(e, "EACCES") !== undefined) {
    return `Port ${listen.port} needs privileges this process lacks (HOST ${listen.host}); set PORT to 1024 or above`
  }
  if (withCode(e, "EADDRNOTAVAIL") !== undefined) {
    return `HOST ${listen.host} is not an address of this machine; set HOST to one (0.0.0.0: all)`
  }
  if (e instanceof Error && SETTING_MESSAGE.test(e.message)) return `Configuration error: ${e.message}`
  return undefined
}

/**
 * Fails as the server's own listen would (EADDRINUSE, EACCES) when `port` on `host` cannot be taken
 * now, so a busy port stops the boot before anything is written. Port 0 takes any free port.
 */
export const checkPort = (listen: { readonly port: number; readonly host: string }) =>
  listen.port === 0
    ? Effect.void
    : Effect.async<void, HttpServerError.ServeError>((resume) => {
      const probe = createServer()
      probe.once("error", (cause) => resume(Effect.fail(new HttpServerError.ServeError({ cause }))))
      probe.listen(listen.port, listen.host, () => probe.close(() => resume(Effect.void)))
    })

/** The line for a failed start: the described error, or the full cause when nothing describes it. */
export const describeFailure = (
  cause: Cause.Cause<unknown>,
  listen: { readonly port: number; readonly host: string }
): string => {
  const errors = [...Cause.failures(cause), ...Cause.defects(cause)]
  for (const e of errors) {
    const line = describeError(e, listen)
    if (line !== undefined) return line
  }
  return Cause.pretty(cause)
}

/** Writes the line of a failure to stderr (an interruption, a signal's stop, is no failure). */
export const reportFailure =
  (listen: () => { readonly port: number; readonly host: string }) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.tapErrorCause(
      self,
      (cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.void
          : Effect.sync(() => console.error(describeFailure(cause, listen())))
    )
