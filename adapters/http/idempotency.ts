/**
 * The `Idempotency-Key` wrapper for `POST /messages`, `POST /numbers` and `POST /calls` (CONTRACT
 * "Idempotency"). A handler passes its decoded payload, success status, success encoder and the
 * effect to run:
 *
 *   .handle("send", ({ payload, headers }) => Effect.flatMap(CurrentPrincipal, (principal) =>
 *     idempotent({ principal, key: headers["idempotency-key"], request: payload, status: 201,
 *       encode: Schema.encodeSync(SendMessageResponse), run: messages.send(principal, payload) })))
 *
 * `encode` must give the JSON the endpoint's success schema gives, since a replay sends it as-is
 * (HttpApiBuilder sends a returned `HttpServerResponse` without encoding it).
 *
 * - No key: just run. A key outside 1..255 characters: 400.
 * - Reserved: run; a success stores (status, body); a domain error under 500 other than 401/403/429
 *   stores `{code, message}` with its status and fails with it; 5xx, defects and interruption
 *   release the key (nothing stored, a retry runs again).
 * - Reservation, run and storing the outcome are one uninterruptible region: a client that
 *   disconnects cannot leave a reservation without an answer. The reservation is renewed while the
 *   run lasts, and held under a token of this request: a takeover happens only after a crash, and
 *   a late answer from a taken-over holder changes nothing.
 * - Replay: the stored status and body with `Idempotency-Replayed: true`; a stored error is rebuilt
 *   as the standard envelope with the current request id.
 * - Same key, other body: 400. Same key still running: the duplicate polls the store every
 *   `POLL_MS` for at most `IN_PROGRESS_WAIT_MS` (so a retry racing a fast first request gets its
 *   replay); still running after that: 409.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Effect, type Exit, Fiber, Option } from "effect"
import type { Principal } from "../../core/auth/principal.ts"
import { type ErrorCode, errorStatus, FailedPrecondition, InvalidArgument, isDomainError } from "../../core/errors.ts"
import { IDEMPOTENCY_RENEW_MS, IdempotencyStore, type KeyHold, type Reservation, type StoredAnswer } from "../../core/idempotency.ts"
import { CurrentRequest, envelope } from "./platform.ts"

export const MAX_KEY_LENGTH = 255
/** How long a duplicate waits for a running first request before answering 409. */
export const IN_PROGRESS_WAIT_MS = 1000
export const POLL_MS = 20

export const REPLAYED_HEADER = "idempotency-replayed"

/** JSON with object keys sorted at every depth; `undefined` fields dropped as JSON does. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v
  ) ?? "null"

/** Hex SHA-256 (Web Crypto, so it also runs on Deno) of the canonical JSON of `request`. */
export const requestHash = (request: unknown): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(request)))).pipe(
    Effect.map((buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join(""))
  )

/** A typed domain failure a retry would answer the same way: stored and replayed. */
const storableError = (cause: Cause.Cause<unknown>): Option.Option<StoredAnswer> => {
  if (Cause.isInterrupted(cause) || Option.isSome(Cause.dieOption(cause))) return Option.none()
  return Cause.failureOption(cause).pipe(
    Option.filter(isDomainError),
    Option.flatMap((e) => {
      const { status, code } = errorStatus[e._tag]
      return status < 500 && status !== 401 && status !== 403 && status !== 429
        ? Option.some({ status, body: JSON.stringify({ code, message: e.message }) })
        : Option.none()
    })
  )
}

const replay = (answer: StoredAnswer) =>
  Effect.map(CurrentRequest, ({ requestId }) => {
    if (answer.status < 400) {
      return HttpServerResponse.text(answer.body, { status: answer.status, contentType: "application/json", headers: { [REPLAYED_HEADER]: "true" } })
    }
    let code: ErrorCode = "internal"
    let message = "Internal error"
    try {
      const stored = JSON.parse(answer.body) as { code?: unknown; message?: unknown }
      if (typeof stored.code === "string") code = stored.code as ErrorCode
      if (typeof stored.message === "string") message = stored.message
    } catch {
      // an unreadable stored error still replays its status
    }
    return HttpServerResponse.setHeader(envelope(answer.status, code, message, requestId), REPLAYED_HEADER, "true")
  })

type Outcome<A, E> = { readonly _tag: "Ran"; readonly exit: Exit.Exit<A, E> } | Exclude<Reservation, { readonly _tag: "Reserved" }>

export const idempotent = <A, E>(options: {
  readonly principal: Principal
  /** The `Idempotency-Key` header. */
  readonly key: string | undefined
  /** The decoded payload; hashed canonically to detect a key reused with another body. */
  readonly request: unknown
  /** The success status, e.g. 201. */
  readonly status: number
  /** The JSON body of a success, as the endpoint's success schema encodes it. */
  readonly encode: (a: A) => unknown
  readonly run: Effect.Effect<A, E>
}): Effect.Effect<
  A | HttpServerResponse.HttpServerResponse,
  E | InvalidArgument | FailedPrecondition,
  IdempotencyStore | HttpServerRequest.HttpServerRequest
> => {
  const { key } = options
  if (key === undefined) return options.run
  if (key.length < 1 || key.length > MAX_KEY_LENGTH) {
    return Effect.fail(new InvalidArgument({ message: `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters` }))
  }
  return Effect.gen(function* () {
    const store = yield* IdempotencyStore
    const scope: KeyHold = { workspaceId: options.principal.workspaceId, keyKind: options.principal.kind, key, owner: crypto.randomUUID() }
    const hash = yield* requestHash(options.request)

    /** Never fails: a store failure after the run is logged, and the client still gets its outcome. */
    const settle = (exit: Exit.Exit<A, E>): Effect.Effect<void> => {
      const save: Effect.Effect<void, unknown> =
        exit._tag === "Success"
          ? Effect.try(() => JSON.stringify(options.encode(exit.value)) ?? "null").pipe(
              Effect.flatMap((body) => store.complete(scope, { status: options.status, body })),
              Effect.tapError(() => store.release(scope))
            )
          : Option.match(storableError(exit.cause), {
              onNone: () => store.release(scope),
              onSome: (answer) => store.complete(scope, answer)
            })
      return save.pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError("Idempotency: could not settle the key", cause).pipe(Effect.annotateLogs({ key, workspaceId: scope.workspaceId }))
        )
      )
    }

    // A failed renewal is logged and the next one tried: one database blip must not end the lease.
    const renew = Effect.flatMap(Clock.currentTimeMillis, (now) => store.renew(scope, now)).pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("Idempotency: could not renew the key", cause), true)),
      Effect.delay(IDEMPOTENCY_RENEW_MS),
      Effect.repeat({ while: (held) => held })
    )

    // Reserve, run and settle with interruption off: once reserved, the key always gets its outcome.
    const attempt: Effect.Effect<Outcome<A, E>> = Effect.uninterruptible(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const reservation = yield* store.reserve({ ...scope, requestHash: hash, now })
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
    for (let i = 0; ; i++) {
      const outcome = yield* attempt
      switch (outcome._tag) {
        case "Ran":
          return yield* outcome.exit
        case "Replay":
          return yield* replay(outcome.answer)
        case "Mismatch":
          return yield* Effect.fail(new InvalidArgument({ message: "Idempotency-Key was used with a different request body" }))
        case "InProgress":
          if (i >= polls) {
            return yield* Effect.fail(new FailedPrecondition({ message: "A request with this Idempotency-Key is still in progress" }))
          }
          yield* Effect.sleep(POLL_MS)
      }
    }
  })
}
