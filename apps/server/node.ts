/** `npm start`: the app on Node's HTTP server. SIGTERM/SIGINT drain in-flight requests, then close pools. */
import { mkdirSync } from "node:fs"
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { ServerConfig } from "./config.ts"
import { AppLive } from "./main.ts"
import * as NodeServer from "../../adapters/http/nodeServer.ts"

const ServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* ServerConfig
    mkdirSync(config.dataDir, { recursive: true })
    return HttpApiBuilder.serve().pipe(
      HttpServer.withLogAddress,
      // Order matters for shutdown: layers release in reverse, so the server closes (and waits for
      // in-flight requests) before the app's database pool is released.
      Layer.provide(NodeServer.layer({ port: config.port, host: config.host, timeouts: config.timeouts })),
      Layer.provide(AppLive(config))
    )
  })
)

// No tracing exporter is configured, so spans would only cost time on every request.
ServerLive.pipe(
  Layer.provide(Layer.setTracerEnabled(false)),
  Layer.launch,
  // Another process holds the embedded database: its one line, no stack.
  Effect.catchTag("DataDirLocked", (e) => Effect.sync(() => process.exit((console.error(e.message), 1)))),
  NodeRuntime.runMain
)
