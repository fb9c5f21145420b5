/**
 * The idempotency runner (CONTRACT "Idempotency"), for any transport: REST's `Idempotency-Key`,
 * MCP tools and the agent call it the same way and adapt its answer to their own wire.
 *
 * - No key: just run. A key outside 1..255 characters: InvalidArgument.
 * - Reserved: run; a success stores (status, the JSON of the success Schema's encoding). Every
 *   failure releases the key (nothing stored, a retry runs again), as Stripe does: only a request
 *   that executed is stored. A retry with the same key may then carry a fixed body. This holds
 *   because each use case behind a key fails before its side effect or undoes it: a send and a call
 *   fail (400, 404, a gate's 409, the carrier's refusal) before the carrier accepts them, and a
 *   purchase that fails after its payment refunds it. What can fail after the carrier accepted
 *   (storing the message or the call) is a 5xx: released too, so a retry may send again.
 * - Reservation, run and storing the outcome are one uninterruptible region: a caller that goes
 *   away cannot leave a reservation without an answer. The reservation is renewed while the run
 *   lasts, and held under a token of this call: a takeover happens only after a crash, and a late
 *   answer from a taken-over holder changes nothing.
 * - Replay: the stored answer as data (`Replayed`), the same bytes stored the first time.
 * - Same key, other request: InvalidArgument. Same key still running: the duplicate polls the store
 *   every `POLL_MS` for at most `IN_PROGRESS_WAIT_MS` (so a retry racing a fast first request gets
 *   its replay); still running after that: FailedPrecondition.
 */
import { Clock, Duration, Effect, type Exit, Fiber, Metric, Schedule, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { displayText } from "../kernel/display.ts"
import { type ErrorCode, FailedPrecondition, InvalidArgument } from "../kernel/errors.ts"
import { WorkspaceClock, workspaceNow } from "../workspaces/clock.ts"
import {
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_RENEW_MS,
  IdempotencyStore,
  type KeyHold,
  type Reservation,
  type StoredAnswer
} from "./store.ts"

export const MAX_KEY_LENGTH = 255
/** How long a duplicate waits for a running first request before it is refused. */
export const IN_PROGRESS_WAIT_MS = 1000
export const POLL_MS = 20
/** A key whose release failed is released again every second, until the reservation could be taken over anyway. */
const RELEASE_RETRY = Schedule.spaced(Duration.seconds(1)).pipe(Schedule.upTo(Duration.millis(IDEMPOTENCY_LOCK_MS)))

/** Answers given from the store instead of running again (exported as a metric: adapters/telemetry). */
export const idempotencyReplays = Metric.counter("idempotency_replays_total", {
  description: "Requests answered by replaying a stored answer",
  incremental: true
})

/** JSON with object keys sorted at every depth; `undefined` fields dropped as JSON does. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v) ?? "null"

/** Hex SHA-256 (Web Crypto, so it also runs on Deno) of the canonical JSON of `request`. */
export const requestHash = (request: unknown): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(request)))).pipe(
    Effect.map((buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join(""))
  )

/** What a call answers: its own result, or the answer stored by the first call with this key. */
export type Idempotent<A> =
  | { readonly _tag: "Fresh"; readonly value: A }
  | { readonly _tag: "Replayed"; readonly answer: StoredAnswer }

/** A stored error's code and message (answers stored by earlier versions, which kept 4xx errors); an unreadable one reads as internal. */
export const storedError = (answer: StoredAnswer): { readonly code: ErrorCode; readonly message: string } => {
  let code: ErrorCode = "internal"
  let message = "Internal error"
  try {
    const stored = JSON.parse(answer.body) as { code?: unknown; message?: unknown }
    if (typeof stored.code === "string") code = stored.code as ErrorCode
    if (typeof stored.message === "string") message = stored.message
  } catch {
    // an unreadable stored error still replays its status
  }
  return { code, message }
}

type Outcome<A, E> =
  | { readonly _tag: "Ran"; readonly exit: Exit.Exit<A, E> }
  | Exclude<Reservation, { readonly _tag: "Reserved" }>

export interface IdempotentOptions<A, I, E, R> {
  /** Keys are scoped to the principal's workspace and key kind. */
  readonly principal: Principal
  readonly key: string | undefined
  /** The decoded request; hashed canonically to detect a key reused with another request. */
  readonly request: unknown
  /** The success status, e.g. 201. */
  readonly status: number
  /** The success as the caller's answer schema encodes it; a replay gives back exactly its JSON. */
  readonly success: Schema.Schema<A, I>
  readonly run: Effect.Effect<A, E, R>
}

export const runIdempotent = <A, I, E, R>(
  options: IdempotentOptions<A, I, E, R>
): Effect.Effect<Idempotent<A>, E | InvalidArgument | FailedPrecondition, IdempotencyStore | WorkspaceClock | R> => {
  const { key } = options
  if (key === undefined) return Effect.map(options.run, (value) => ({ _tag: "Fresh", value }) as const)
  if (key.length < 1 || key.length > MAX_KEY_LENGTH) {
    return Effect.fail(new InvalidArgument({ message: `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters` }))
  }
  const encode = Schema.encode(options.success)
  return Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const hold: KeyHold = {
      workspaceId: options.principal.workspaceId,
      keyKind: options.principal.kind,
      key,
      owner: crypto.randomUUID()
    }
    const hash = yield* requestHash(options.request)
    // Test keys' window runs on the workspace's clock, so the `clock` test helper can expire it.
    const clock = yield* WorkspaceClock
    const now = hold.keyKind === "test"
      ? Effect.provideService(workspaceNow(hold.workspaceId), WorkspaceClock, clock)
      : Clock.currentTimeMillis

    /**
     * A release that fails (the database away) is tried again in the background until it succeeds:
     * meanwhile a retry of this request is refused as still running, until the reservation could be
     * taken over (IDEMPOTENCY_LOCK_MS), although the client was told to retry after a few seconds.
     */
    const release = store.release(hold).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Idempotency: could not release the key; trying again", cause).pipe(
          Effect.annotateLogs({ key: displayText(key, 64), workspaceId: hold.workspaceId }),
          Effect.zipRight(
            Effect.forkDaemon(Effect.ignore(Effect.retry(Effect.sandbox(store.release(hold)), RELEASE_RETRY)))
          )
        )
      )
    )
    /** Never fails: a store failure after the run is logged, and the caller still gets its outcome. */
    const settle = (exit: Exit.Exit<A, E>): Effect.Effect<void> => {
      const save: Effect.Effect<void, unknown> = exit._tag === "Success"
        ? encode(exit.value).pipe(
          Effect.flatMap((encoded) =>
            store.complete(hold, { status: options.status, body: JSON.stringify(encoded) ?? "null" })
          ),
          Effect.tapError(() => release)
        )
        : release
      return save.pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError("Idempotency: could not settle the key", cause).pipe(
            Effect.annotateLogs({ key: displayText(key, 64), workspaceId: hold.workspaceId })
          )
        )
      )
    }

    // A failed renewal is logged and the next one tried: one database blip must not end the lease.
    const renew = Effect.flatMap(now, (at) => store.renew(hold, at)).pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("Idempotency: could not renew the key", cause), true)
      ),
      Effect.delay(IDEMPOTENCY_RENEW_MS),
      Effect.repeat({ while: (held) => held })
    )

    // Reserve, run and settle with interruption off: once reserved, the key always gets its outcome.
    const attempt: Effect.Effect<Outcome<A, E>, never, R> = Effect.uninterruptible(
      Effect.gen(function*() {
        const reservation = yield* store.reserve({ ...hold, requestHash: hash, now: yield* now })
        if (reservation._tag !== "Reserved") return reservation
        // Renewed while the request runs, so only a dead process's reservation is ever taken over.
        const renewing = yield* Effect.fork(Effect.interruptible(renew))
        const exit = yield* Effect.exit(options.run)
        yield* Fiber.interrupt(renewing)
        yield* settle(exit)
        return { _tag: "Ran", exit } as const
      })
    )

    const polls = Math.ceil(IN_PROGRESS_WAIT_MS / POLL_MS)
    for (let i = 0;; i++) {
      const outcome = yield* attempt
      switch (outcome._tag) {
        case "Ran":
          return { _tag: "Fresh", value: yield* outcome.exit } as const
        case "Replay":
          yield* Metric.increment(idempotencyReplays)
          return { _tag: "Replayed", answer: outcome.answer } as const
        case "Mismatch":
          return yield* Effect.fail(
            new InvalidArgument({ message: "Idempotency-Key was used with a different request body" })
          )
        case "InProgress":
          if (i >= polls) {
            return yield* Effect.fail(
              new FailedPrecondition({ message: "A request with this Idempotency-Key is still in progress" })
            )
          }
          yield* Effect.sleep(POLL_MS)
      }
    }
  })
}
