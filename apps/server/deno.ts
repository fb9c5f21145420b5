/**
 * `deno task start`: the same app served by Deno.serve through a web handler. SIGTERM/SIGINT stop
 * accepting, let in-flight requests finish, then release the layers (database pools).
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
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
const warm = await handler(new Request(`http://localhost/v1/api/openapi.json`))
if (warm.status !== 200) {
  console.error("Startup failed", warm.status, await warm.text())
  Deno.exit(1)
}

const server = Deno.serve(
  { port: config.port, hostname: config.host, onListen: ({ hostname, port }: { hostname: string; port: number }) => console.log(`Listening on http://${hostname}:${port}`) },
  withBodyLimit(handler)
)

const stop = async () => {
  await server.shutdown()
  await dispose()
  Deno.exit(0)
}
Deno.addSignalListener("SIGTERM", stop)
Deno.addSignalListener("SIGINT", stop)
