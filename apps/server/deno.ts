/**
 * `deno task start`: the same app served by Deno.serve through a web handler. SIGTERM/SIGINT stop
 * accepting, let in-flight requests finish, then release the layers (database pools).
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { withBodyLimit } from "../../adapters/http/web.ts"
import * as Otlp from "../../adapters/telemetry/otlp.ts"
import { ServerConfig } from "./config.ts"
import { AppLive } from "./main.ts"

declare const Deno: any

const config = await Effect.runPromise(ServerConfig)
await Deno.mkdir(config.dataDir, { recursive: true })

const { handler, dispose } = HttpApiBuilder.toWebHandler(
  Layer.mergeAll(AppLive(config), HttpServer.layerContext, Otlp.layer(config.otel))
)

// toWebHandler builds lazily and caches a failed build: warm it up so a bad config fails at boot.
const warm = await handler(new Request(`http://localhost/v1/api/openapi.json`))
if (warm.status !== 200) {
  console.error("Startup failed", warm.status, await warm.text())
  Deno.exit(1)
}

// Deno's server.shutdown() cuts the body streams of requests still uploading, so draining waits for
// in-flight requests to finish first (bounded), then closes the listener and the layers.
let inFlight = 0
const serve = withBodyLimit(handler, config.timeouts.requestMs)
const server = Deno.serve(
  { port: config.port, hostname: config.host, onListen: ({ hostname, port }: { hostname: string; port: number }) => console.log(`Listening on http://${hostname}:${port}`) },
  async (request: Request) => {
    inFlight++
    try {
      return await serve(request)
    } finally {
      inFlight--
    }
  }
)

const DRAIN_TIMEOUT_MS = 25_000
const stop = async () => {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS
  while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  await server.shutdown()
  await dispose()
  Deno.exit(0)
}
Deno.addSignalListener("SIGTERM", stop)
Deno.addSignalListener("SIGINT", stop)
