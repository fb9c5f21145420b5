/** `npm start`: the app on Node's HTTP server. SIGTERM/SIGINT drain in-flight requests, then close pools. */
import { mkdirSync } from "node:fs"
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { ServerConfig } from "./config.ts"
import * as Logging from "./logging.ts"
import { AppLive } from "./main.ts"
import { reportFailure } from "./startup.ts"
import * as NodeServer from "../../adapters/http/nodeServer.ts"
import * as Otlp from "../../adapters/telemetry/otlp.ts"

const ServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* ServerConfig
    mkdirSync(config.dataDir, { recursive: true })
    return HttpApiBuilder.serve().pipe(
      HttpServer.withLogAddress,
      // Order matters for shutdown: layers release in reverse, so the server closes (and waits for
      // in-flight requests) before the app's database pool is released.
      Layer.provide(NodeServer.layer({ port: config.port, host: config.host, timeouts: config.timeouts })),
      Layer.provide(AppLive(config)),
      Layer.provide(Logging.layer(Logging.formatFor(Option.getOrUndefined(config.logFormat), process.stdout.isTTY === true), config.logLevel))
    )
  })
)

// Tracing is on only with an OTLP endpoint: without an exporter, spans would only cost time on every request.
const TelemetryLive = Layer.unwrapEffect(Effect.map(ServerConfig, (config) => Otlp.layer(config.otel)))
// A failed start prints one line (startup.ts) instead of the runtime's report of the cause.
const listen = () => ({ port: Number(process.env["PORT"] ?? 8080), host: process.env["HOST"] ?? "0.0.0.0" })
ServerLive.pipe(Layer.provide(TelemetryLive), Layer.launch, reportFailure(listen), (main) => NodeRuntime.runMain(main, { disableErrorReporting: true }))
