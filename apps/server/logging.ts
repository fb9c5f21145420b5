/**
 * LOG_FORMAT and LOG_LEVEL, applied to the whole server with Effect's loggers (Node and Deno):
 * - `json`: one object a line, `{message, logLevel, timestamp, annotations, spans, fiberId}` (and
 *   `cause` for a failure), what a log collector parses; the default when stdout is not a terminal
 *   (containers, systemd, files);
 * - `pretty`: colored and readable, annotations under the message; the default on a terminal;
 * - `logfmt`: one `key=value` line each, for text tools.
 */
import { Layer, Logger, LogLevel } from "effect"

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

const formats: Record<LogFormat, Layer.Layer<never>> = { json: Logger.json, pretty: Logger.pretty, logfmt: Logger.logFmt }

/** The format asked for, else pretty on a terminal and JSON elsewhere. */
export const formatFor = (asked: LogFormat | undefined, terminal: boolean): LogFormat => asked ?? (terminal ? "pretty" : "json")

export const layer = (format: LogFormat, level: LogLevelName): Layer.Layer<never> =>
  Layer.merge(formats[format], Logger.minimumLogLevel(levels[level]))
