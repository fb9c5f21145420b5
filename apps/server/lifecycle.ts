/**
 * The server process's life: each boot step logged with its time, shutdown logged from the signal to
 * the last pool closed, and signals handled the same way however the process was started.
 */
import { HttpServer } from "@effect/platform"
import { Clock, Duration, Effect, Exit, Layer, Scope } from "effect"

const took = (millis: number) => `${Math.round(millis)} ms`

/** `layer`, logging `done` with the time its build took once it is built. */
export const step = <A, E, R>(done: string, layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.unwrapEffect(
    Effect.map(Clock.currentTimeMillis, (start) =>
      Layer.tap(layer, () =>
        Effect.flatMap(Clock.currentTimeMillis, (end) =>
          Effect.logInfo(`${done} (${took(end - start)})`))))
  )

/** How long after the boot's collection its resident size is read. */
const SETTLE_MS = 500

/**
 * One full garbage collection where the runtime allows it (`--expose-gc`, which apps/server/start.sh
 * gives Node and Deno on the embedded database only; not on Postgres, where it changed nothing), then the
 * resident memory, logged. A first boot on the embedded database runs PGlite's initdb, and V8 would
 * keep its garbage resident until its memory reducer runs, which it does not always do
 * (docs/operating.md, "Memory and Node flags"). The collection holds the event loop for its
 * duration, logged with it.
 */
const collectBootGarbage = Effect.suspend(() => {
  const gc = (globalThis as { gc?: () => void }).gc
  const started = performance.now()
  gc?.()
  const collected = gc === undefined ? "" : `, garbage collected in ${Math.round(performance.now() - started)} ms`
  // V8 hands large buffers' memory back on background threads after the collection, so right after
  // it much of a first boot's garbage still counts as resident: the size is read a moment on.
  // Only a diagnostic: a resident size the system cannot report must not fail the boot.
  return Effect.sleep(gc === undefined ? 0 : SETTLE_MS).pipe(
    Effect.zipRight(Effect.try(() => `${Math.round(process.memoryUsage().rss / 1_048_576)} MB resident`)),
    Effect.orElseSucceed(() => "resident size unknown"),
    Effect.flatMap((resident) => Effect.logInfo(`Memory after boot: ${resident}${collected}`))
  )
})

/**
 * "Listening on <address>" with the boot's total, counted from the process's start (so module
 * loading is in it), in place of HttpServer.withLogAddress; then the boot's garbage collected.
 */
export const withLogListening = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.effectDiscard(
    HttpServer.addressFormattedWith((address) =>
      Effect.logInfo(`Listening on ${address} (booted in ${took(process.uptime() * 1000)})`)
    ).pipe(
      Effect.zipRight(collectBootGarbage)
    )
  ).pipe(Layer.provideMerge(layer))

/**
 * Layer.launch with the shutdown logged: builds `layer` and runs until interrupted (a signal, through
 * NodeRuntime.runMain), then releases it (the HTTP server drains first) and logs how long that took.
 */
export const launch = <E>(layer: Layer.Layer<never, E>): Effect.Effect<never, E> =>
  Effect.acquireUseRelease(
    Scope.make(),
    (scope) => Effect.zipRight(Layer.buildWithScope(layer, scope), Effect.never),
    (scope, exit) =>
      Exit.isInterrupted(exit)
        ? Effect.logInfo("Stopping").pipe(
          Effect.zipRight(Effect.timed(Scope.close(scope, exit))),
          Effect.flatMap(([duration]) => Effect.logInfo(`Stopped (${took(Duration.toMillis(duration))})`))
        )
        : Scope.close(scope, exit)
  )

/** How long a repeated SIGINT/SIGTERM is taken as the same request to stop (see handleSignals). */
const REPEAT_WINDOW_MS = 2_000

/**
 * Signals beyond NodeRuntime.runMain's (which stops on the first SIGINT or SIGTERM, then leaves
 * later ones to Node's default: exit at once, undrained):
 * - the same signal twice within REPEAT_WINDOW_MS is one request: Ctrl-C in a terminal reaches both
 *   npm and the server, and npm relays it again; a later one still kills at once, for a stuck drain;
 * - SIGHUP (the terminal closed) stops gracefully like SIGTERM instead of killing;
 * - under npm, a server whose npm went away (`kill -9`, or a SIGHUP npm does not relay) stops
 *   itself instead of running on orphaned.
 * Call before NodeRuntime.runMain.
 */
export const handleSignals = () => {
  const ignore = () => {}
  const first = () => {
    process.off("SIGINT", first).off("SIGTERM", first)
    process.on("SIGINT", ignore).on("SIGTERM", ignore)
    setTimeout(() => process.off("SIGINT", ignore).off("SIGTERM", ignore), REPEAT_WINDOW_MS).unref()
  }
  process.on("SIGINT", first).on("SIGTERM", first)
  process.once("SIGHUP", () => process.kill(process.pid, "SIGTERM"))
  if (process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid
    const watch = setInterval(() => {
      if (process.ppid === parent) return
      clearInterval(watch)
      Effect.runFork(Effect.logWarning(`npm (pid ${parent}) is gone; stopping`))
      process.kill(process.pid, "SIGTERM")
    }, 1_000)
    watch.unref()
  }
}
