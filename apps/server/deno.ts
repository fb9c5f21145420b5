/**
 * `deno task start`: the same app served by Deno.serve through a web handler. SIGTERM/SIGINT stop
 * accepting, let in-flight requests finish, then release the layers (database pools).
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Cause, Effect, Layer, Option, Runtime } from "effect"
import { DataDirLocked } from "../../adapters/pglite/dataDirLock.ts"
import { withBodyLimit } from "../../adapters/http/web.ts"
import { ServerConfig } from "./config.ts"
import { AppLive } from "./main.ts"

declare const Deno: any

const config = await Effect.runPromise(ServerConfig)
await Deno.mkdir(config.dataDir, { recursive: true })

const { handler, dispose } = HttpApiBuilder.toWebHandler(
  Layer.mergeAll(AppLive(config), HttpServer.layerContext, Layer.setTracerEnabled(false))
)

// toWebHandler builds lazily and caches a failed build: warm it up so a bad config fails at boot.
const warm = await handler(new Request(`http://localhost/v1/api/openapi.json`)).catch((e) => {
  // Another process holds the embedded database: its one line, no stack.
  const failure = Runtime.isFiberFailure(e) ? Cause.failureOption(e[Runtime.FiberFailureCauseId]) : Option.none()
  if (Option.isNone(failure) || !(failure.value instanceof DataDirLocked)) throw e
  console.error(failure.value.message)
  return Deno.exit(1)
})
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
