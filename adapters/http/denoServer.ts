/**
 * Deno.serve as the app's `HttpServer` (@effect/platform has no Deno server), so Deno runs the same
 * layers and lifecycle as Node (apps/server/run.ts): the port is taken when the layer is built (a
 * busy port fails the build), requests go through the platform's web handler behind the body limit
 * (web.ts), and releasing the layer drains, logged as on Node. Only public platform API: the same
 * server with the fast path off (adapters/fastPath.ts), where it serves HttpApiBuilder's app.
 */
import { HttpApp, HttpServer, HttpServerError } from "@effect/platform"
import { Duration, Effect, Layer } from "effect"
import { DEFAULT_TIMEOUTS, type Timeouts } from "./platform.ts"
import { withBodyLimit } from "./web.ts"

declare const Deno: any

type Handler = (request: Request) => Promise<Response>

/** How long a shutdown waits for in-flight requests before closing the listener anyway. */
const DRAIN_TIMEOUT = Duration.seconds(25)

/** Between the port being taken and the app being served (boot) the server answers 503. */
const booting: Handler = async () => new Response(null, { status: 503, headers: { "retry-after": "1" } })

const make = (options: { readonly port: number; readonly host: string; readonly timeouts?: Timeouts | undefined }) =>
  Effect.gen(function*() {
    const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS
    let handler = booting
    let inFlight = 0
    const server = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          Deno.serve({ port: options.port, hostname: options.host, onListen: () => {} }, async (request: Request) => {
            inFlight++
            try {
              return await handler(request)
            } finally {
              inFlight--
            }
          }),
        catch: (cause) => new HttpServerError.ServeError({ cause })
      }),
      // Deno's shutdown() cuts the bodies of requests still uploading: wait for in-flight requests
      // to be answered first (bounded), then close the listener.
      (server) =>
        Effect.gen(function*() {
          yield* Effect.logInfo(`Draining: ${inFlight} request(s) in flight`)
          yield* Effect.sleep(50).pipe(
            Effect.repeat({ until: () => inFlight === 0 }),
            Effect.when(() => inFlight > 0),
            Effect.timeoutOption(DRAIN_TIMEOUT)
          )
          yield* Effect.promise(() => server.shutdown())
        })
    )
    return HttpServer.make({
      address: { _tag: "TcpAddress", hostname: server.addr.hostname, port: server.addr.port },
      serve: (httpApp, middleware) =>
        Effect.gen(function*() {
          const runtime = yield* Effect.runtime<never>()
          handler = withBodyLimit(HttpApp.toWebHandlerRuntime(runtime)(httpApp, middleware), timeouts.requestMs)
        })
    })
  })

/** The server and the platform services a server without a file system provides (HttpServer.layerContext). */
export const layer = (
  options: { readonly port: number; readonly host: string; readonly timeouts?: Timeouts | undefined }
) => Layer.merge(Layer.scoped(HttpServer.HttpServer, make(options)), HttpServer.layerContext)
