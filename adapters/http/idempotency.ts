/**
 * The `Idempotency-Key` header for `POST /messages` (and later `POST /numbers`, `POST /calls`): the
 * core runner (core/idempotency/runner.ts) does the work; this adapts its answer to HTTP. A handler
 * passes its decoded payload, success status, success Schema and the effect to run:
 *
 *   .handle("send", ({ payload, headers }) => Effect.flatMap(CurrentPrincipal, (principal) =>
 *     idempotent({ principal, key: headers["idempotency-key"], request: payload, status: 201,
 *       success: SendMessageResult, run: messages.send(principal, payload) })))
 *
 * A replay answers the stored status and body as-is with `Idempotency-Replayed: true` (HttpApiBuilder
 * sends a returned `HttpServerResponse` without encoding it); a stored error is rebuilt as the
 * standard envelope with the current request id.
 */
import type { HttpServerRequest } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { FailedPrecondition, InvalidArgument } from "../../core/errors.ts"
import { type IdempotentOptions, runIdempotent, storedError } from "../../core/idempotency/runner.ts"
import type { IdempotencyStore, StoredAnswer } from "../../core/idempotency/store.ts"
import { CurrentRequest, envelope } from "./platform.ts"

export const REPLAYED_HEADER = "idempotency-replayed"

const replay = (answer: StoredAnswer) =>
  Effect.map(CurrentRequest, ({ requestId }) => {
    if (answer.status < 400) {
      return HttpServerResponse.text(answer.body, { status: answer.status, contentType: "application/json", headers: { [REPLAYED_HEADER]: "true" } })
    }
    const { code, message } = storedError(answer)
    return HttpServerResponse.setHeader(envelope(answer.status, code, message, requestId), REPLAYED_HEADER, "true")
  })

export const idempotent = <A, I, E, R>(
  options: IdempotentOptions<A, I, E, R>
): Effect.Effect<
  A | HttpServerResponse.HttpServerResponse,
  E | InvalidArgument | FailedPrecondition,
  IdempotencyStore | HttpServerRequest.HttpServerRequest | R
> =>
  Effect.flatMap(
    runIdempotent(options),
    (answer): Effect.Effect<A | HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
      answer._tag === "Fresh" ? Effect.succeed(answer.value) : replay(answer.answer)
  )
