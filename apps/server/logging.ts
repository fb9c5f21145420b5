/**
 * LOG_FORMAT and LOG_LEVEL, applied to the whole server with Effect's loggers (Node and Deno):
 * - `json`: one object a line, `{message, logLevel, timestamp, annotations, spans, fiberId}` (and
 *   `cause` for a failure), what a log collector parses; the default when stdout is not a terminal
 *   (containers, systemd, files);
 * - `pretty`: colored and readable, annotations under the message; the default on a terminal;
 * - `logfmt`: one `key=value` line each, for text tools.
 *
 * `json` and `logfmt` lines are written to stdout once per turn of the event loop, all of that turn's
 * lines in one write: one `console.log` per line would be a write system call per line, paid on
 * every request under load (docs/architecture.md, "One write per event-loop turn for the log").
 * Nothing waits on a timer (Effect's `Logger.batched` wakes every window, even when idle), and
 * lines still pending when the process exits are written then.
 */
import { Cause, Console, Effect, FiberId, Layer, Logger, LogLevel } from "effect"
import process from "node:process"
import { setImmediate } from "node:timers"
import { formatWithOptions } from "node:util"

export const LOG_FORMATS = ["json", "pretty", "logfmt"] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export const LOG_LEVELS = ["debug", "info", "warning", "error", "none"] as const
export type LogLevelName = (typeof LOG_LEVELS)[number]

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

/** A sink for whole lines: each turn's lines leave in one write to `out`, and at exit whatever is left. */
export const lineSink = (out: (text: string) => unknown) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      let pending: Array<string> = []
      const flush = () => {
        if (pending.length === 0) return
        const text = pending.join("\n") + "\n"
        pending = []
        out(text)
      }
      process.on("exit", flush)
      const write = (line: string) => {
        if (pending.push(line) === 1) setImmediate(flush)
      }
      return { write, flush }
    }),
    ({ flush }) =>
      Effect.sync(() => {
        process.off("exit", flush)
        flush()
      })
  )

/**
 * The default logger replaced by one formatting with `format` and writing to stdout through a line
 * sink, and `Console.log` (the first boot's banner) through the same sink, so it keeps its place
 * among the lines logged before it.
 */
const toStdout = (format: Logger.Logger<unknown, string>): Layer.Layer<never> =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const { write } = yield* lineSink((text) => process.stdout.write(text))
      const base = yield* Effect.console
      const log = (...args: ReadonlyArray<unknown>) => write(formatWithOptions({}, ...args))
      const console: Console.Console = {
        ...base,
        log: (...args) => Effect.sync(() => log(...args)),
        unsafe: { ...base.unsafe, log }
      }
      return Layer.merge(Logger.replace(Logger.defaultLogger, Logger.map(format, write)), Console.setConsole(console))
    })
  )

/** A value JSON.stringify writes as Inspectable.stringifyCircular does: nothing it could meet twice or redact. */
const plain = (u: unknown) =>
  u === null || u === undefined || typeof u === "string" || typeof u === "number" || typeof u === "boolean"

/** The fiber as Logger.structuredLogger names it (`#7`), without the set FiberId.threadName builds for one id. */
const fiberName = (id: FiberId.FiberId): string => (id._tag === "Runtime" ? `#${id.id}` : FiberId.threadName(id))

/**
 * Logger.jsonLogger's lines. When the message and every annotation are plain values and there is no
 * cause (an access log line, most lines), the record Logger.structuredLogger would build is built
 * here and written with plain JSON.stringify: Inspectable.stringifyCircular's replacer calls back
 * for every key and keeps a list of the objects seen, and structuredLogger converts every value and
 * builds the fiber's name, on every line. Any other line is jsonLogger's own. The test holds the two
 * to the same characters.
 */
export const jsonLogger = Logger.make<unknown, string>((options) => {
  const message = Array.isArray(options.message) && options.message.length === 1 ? options.message[0] : options.message
  if (!plain(message) || !Cause.isEmpty(options.cause)) return Logger.jsonLogger.log(options)
  const annotations: Record<string, unknown> = {}
  for (const [key, value] of options.annotations) {
    if (!plain(value)) return Logger.jsonLogger.log(options)
    annotations[key] = value
  }
  const now = options.date.getTime()
  const spans: Record<string, number> = {}
  for (const span of options.spans) spans[span.label] = now - span.startTime
  return JSON.stringify({
    message,
    logLevel: options.logLevel.label,
    timestamp: options.date.toISOString(),
    annotations,
    spans,
    fiberId: fiberName(options.fiberId)
  })
})

const formats: Record<LogFormat, Layer.Layer<never>> = {
  json: toStdout(jsonLogger),
  pretty: Logger.pretty,
  logfmt: toStdout(Logger.logfmtLogger)
}

/** The format asked for, else pretty on a terminal and JSON elsewhere. */
export const formatFor = (asked: LogFormat | undefined, terminal: boolean): LogFormat =>
  asked ?? (terminal ? "pretty" : "json")

export const layer = (format: LogFormat, level: LogLevelName): Layer.Layer<never> =>
  Layer.merge(formats[format], Logger.minimumLogLevel(levels[level]))
