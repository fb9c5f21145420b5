/** `npm start`: the app on Node's HTTP server. SIGTERM/SIGINT drain in-flight requests, then close pools. */
import { createServer } from "node:http"
import { mkdirSync } from "node:fs"
import { HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { ServerConfig } from "./config.ts"
import { AppLive } from "./main.ts"

const ServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* ServerConfig
    mkdirSync(config.dataDir, { recursive: true })
    // No tracing exporter is configured, so spans would only cost time on every request.
    return HttpApiBuilder.serve().pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true),
      HttpServer.withLogAddress,
      // Order matters for shutdown: layers release in reverse, so the server closes (and waits for
      // in-flight requests) before the app's database pool is released.
      Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: config.host })),
      Layer.provide(AppLive(config))
    )
  })
)

ServerLive.pipe(Layer.provide(Layer.setTracerEnabled(false)), Layer.launch, NodeRuntime.runMain)
