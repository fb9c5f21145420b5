/**
 * `npm start`: the app on Node's HTTP server. SIGTERM/SIGINT/SIGHUP drain in-flight requests, then
 * close pools (lifecycle.ts); boot and shutdown steps are logged with their times.
 */
import { mkdirSync } from "node:fs"
import { HttpApiBuilder } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { ServerConfig } from "./config.ts"
import * as Lifecycle from "./lifecycle.ts"
import { AppLive } from "./main.ts"
import * as NodeServer from "../../adapters/http/nodeServer.ts"

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

// No tracing exporter is configured, so spans would only cost time on every request.
Lifecycle.handleSignals()
ServerLive.pipe(Layer.provide(Layer.setTracerEnabled(false)), Lifecycle.launch, NodeRuntime.runMain)
