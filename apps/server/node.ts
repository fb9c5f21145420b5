/**
 * `npm start`: the app on Node's HTTP server. SIGTERM/SIGINT/SIGHUP drain in-flight requests, then
 * close pools (lifecycle.ts); boot and shutdown steps are logged with their times.
 */
import { mkdirSync } from "node:fs"
import { HttpApiBuilder } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { ServerConfig } from "./config.ts"
import * as Logging from "./logging.ts"
import * as Lifecycle from "./lifecycle.ts"
import { AppLive } from "./main.ts"
import { reportFailure } from "./startup.ts"
import * as NodeServer from "../../adapters/http/nodeServer.ts"
import * as Otlp from "../../adapters/telemetry/otlp.ts"

const ServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* ServerConfig
    yield* Effect.logInfo(`Configuration read (pid ${process.pid}, modules loaded in ${Math.round(process.uptime() * 1000)} ms)`)
    mkdirSync(config.dataDir, { recursive: true })
    return HttpApiBuilder.serve().pipe(
      Lifecycle.withLogListening,
      // Order matters for shutdown: layers release in reverse, so the server closes (and waits for
      // in-flight requests) before the app's database pool is released.
      Layer.provide(NodeServer.layer({ port: config.port, host: config.host, timeouts: config.timeouts })),
      Layer.provide(AppLive(config))
    )
  })
)

// Tracing is on only with an OTLP endpoint: without an exporter, spans would only cost time on every request.
const TelemetryLive = Layer.unwrapEffect(Effect.map(ServerConfig, (config) => Otlp.layer(config.otel)))
// A failed start prints one line (startup.ts) instead of the runtime's report of the cause.
const listen = () => ({ port: Number(process.env["PORT"] ?? 8080), host: process.env["HOST"] ?? "0.0.0.0" })
// The logger wraps everything, boot and shutdown lines included; runMain adds none of its own.
const LoggingLive = Layer.unwrapEffect(
  Effect.map(ServerConfig, (config) => Logging.layer(Logging.formatFor(Option.getOrUndefined(config.logFormat), process.stdout.isTTY === true), config.logLevel))
)
Lifecycle.handleSignals()
ServerLive.pipe(
  Layer.provide(TelemetryLive),
  Lifecycle.launch,
  // Another process holds the embedded database: its one line, no stack.
  Effect.catchTag("DataDirLocked", (e) => Effect.sync(() => process.exit((console.error(e.message), 1)))),
  Effect.provide(LoggingLive),
  reportFailure(listen),
  (main) =>
  NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
)
