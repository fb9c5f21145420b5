/**
 * `deno task start`: the same app served by Deno.serve through a web handler. SIGTERM/SIGINT stop
 * accepting, let in-flight requests finish, then release the layers (database pools).
 */
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { Cause, Effect, Exit, Layer, Option, Runtime } from "effect"
import { DataDirLocked } from "../../adapters/pglite/dataDirLock.ts"
import { withBodyLimit } from "../../adapters/http/web.ts"
import * as Otlp from "../../adapters/telemetry/otlp.ts"
import { ServerConfig } from "./config.ts"
import * as Logging from "./logging.ts"
import { AppLive } from "./main.ts"
import { describeError, describeFailure } from "./startup.ts"

declare const Deno: any

/** A failed start prints one line (startup.ts) and exits 1. */
function refuse(line: string): never {
  console.error(line)
  return Deno.exit(1) as never
}
const listen = () => ({ port: Number(Deno.env.get("PORT") ?? 8080), host: Deno.env.get("HOST") ?? "0.0.0.0" })
const configExit = await Effect.runPromiseExit(ServerConfig)
const config: ServerConfig = Exit.isSuccess(configExit) ? configExit.value : refuse(describeFailure(configExit.cause, listen()))
await Deno.mkdir(config.dataDir, { recursive: true })

const { handler, dispose } = HttpApiBuilder.toWebHandler(
  Layer.mergeAll(
    AppLive(config),
    HttpServer.layerContext,
    Otlp.layer(config.otel),
    Logging.layer(Logging.formatFor(Option.getOrUndefined(config.logFormat), Deno.stdout.isTerminal()), config.logLevel)
  )
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
const server = serveOrExit(() => Deno.serve(
  { port: config.port, hostname: config.host, onListen: ({ hostname, port }: { hostname: string; port: number }) => console.log(`Listening on http://${hostname}:${port}`) },
  async (request: Request) => {
    inFlight++
    try {
      return await serve(request)
    } finally {
      inFlight--
    }
  }
))

function serveOrExit<A>(serve: () => A): A {
  try {
    return serve()
  } catch (e) {
    const line = describeError(e, { port: config.port, host: config.host })
    if (line === undefined) throw e
    return refuse(line)
  }
}

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
