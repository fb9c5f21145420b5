/**
 * The server process, the same under Node and Deno: read and check the configuration and the port
 * before anything is written, build the app behind the runtime's HTTP server, print the first boot's
 * key once it listens, log each boot step with its time, run until a signal, then drain and log the
 * shutdown (lifecycle.ts); a start that cannot succeed prints one line (startup.ts) and exits 1.
 * NodeRuntime.runMain runs it on both: Deno provides Node's `process` signals and exit.
 */
import type { HttpRouter, HttpServer, HttpServerError } from "@effect/platform"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Option } from "effect"
import { mkdirSync } from "node:fs"
import * as FastPath from "../../adapters/fastPath.ts"
import * as Http from "../../adapters/http/app.ts"
import type { Timeouts } from "../../adapters/http/platform.ts"
import * as Otlp from "../../adapters/telemetry/otlp.ts"
import { ServerConfig } from "./config.ts"
import * as Lifecycle from "./lifecycle.ts"
import * as Logging from "./logging.ts"
import { AppLive, BootstrapLive } from "./main.ts"
import { timeSliced } from "./scheduler.ts"
import { checkPort, reportFailure } from "./startup.ts"

/** The runtime's HTTP server with the platform services it brings (adapters/http nodeServer.ts, denoServer.ts); it may read FastPath. */
export type ServerLayer = (
  options: { readonly port: number; readonly host: string; readonly timeouts: Timeouts }
) => Layer.Layer<
  HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices,
  HttpServerError.ServeError
>

export const run = (server: ServerLayer): void => {
  const ServerLive = Layer.unwrapEffect(
    Effect.gen(function*() {
      const config = yield* ServerConfig
      yield* Effect.logInfo(
        `Configuration read (pid ${process.pid}, modules loaded in ${Math.round(process.uptime() * 1000)} ms)`
      )
      // Every setting was checked as it was read (config.ts); the port is the last thing that can stop
      // the boot before DATA_DIR, the database or the first boot's workspace is written.
      yield* checkPort({ port: config.port, host: config.host })
      mkdirSync(config.dataDir, { recursive: true })
      if (!config.fastPath) {
        yield* Effect.logInfo(
          "Fast path off (FAST_PATH=false): served by HttpApiBuilder and the platform's server, plain SQL statements"
        )
      }
      // The first boot's key is printed once the server listens, before "Listening on".
      return BootstrapLive(config).pipe(
        Layer.provideMerge(Http.serve()),
        Lifecycle.withLogListening,
        // Order matters for shutdown: layers release in reverse, so the server closes (and waits for
        // in-flight requests) before the app's database pool is released.
        Layer.provide(server({ port: config.port, host: config.host, timeouts: config.timeouts })),
        Layer.provide(AppLive(config)),
        // Read by every seam of the fast path as its layer is built (adapters/fastPath.ts).
        Layer.provide(FastPath.layer(config.fastPath))
      )
    })
  )

  // Tracing is on only with an OTLP endpoint: without an exporter, spans would only cost time on every request.
  const TelemetryLive = Layer.unwrapEffect(Effect.map(ServerConfig, (config) => Otlp.layer(config.otel)))
  // A failed start prints one line (startup.ts) instead of the runtime's report of the cause.
  const listen = () => ({ port: Number(process.env["PORT"] ?? 8080), host: process.env["HOST"] ?? "0.0.0.0" })
  // The logger wraps everything, boot and shutdown lines included; runMain adds none of its own.
  const LoggingLive = Layer.unwrapEffect(
    Effect.map(
      ServerConfig,
      (config) =>
        Logging.layer(
          Logging.formatFor(Option.getOrUndefined(config.logFormat), process.stdout.isTTY === true),
          config.logLevel
        )
    )
  )
  Lifecycle.handleSignals()
  ServerLive.pipe(
    Layer.provide(TelemetryLive),
    Lifecycle.launch,
    // Another process holds the embedded database: its one line, no stack.
    Effect.catchTag("DataDirLocked", (e) => Effect.sync(() => process.exit((console.error(e.message), 1)))),
    Effect.provide(LoggingLive),
    reportFailure(listen),
    // Fibers yield to I/O at least every few milliseconds, however busy the process (scheduler.ts).
    Effect.withScheduler(timeSliced()),
    (main) => NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
  )
}
