/**
 * The `Idempotency-Key` header of the routes whose tool takes one (`tool.idempotencyKey`: send,
 * place a call, buy a number): the core runner (core/idempotency/runner.ts) does the work; this
 * adapts its answer to HTTP, for the handlers capabilities.ts derives.
 *
 * A replay answers the stored status and body as-is with `Idempotency-Replayed: true` (HttpApiBuilder
 * sends a returned `HttpServerResponse` without encoding it); an error stored by an earlier version
 * (which kept 4xx errors; none is stored now) is rebuilt as the standard envelope with the current
 * request id.
 */
import type { HttpServerRequest } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { type IdempotentOptions, runIdempotent, storedError } from "../../core/idempotency/runner.ts"
import type { IdempotencyStore, StoredAnswer } from "../../core/idempotency/store.ts"
import type { FailedPrecondition, InvalidArgument } from "../../core/kernel/errors.ts"
import type { WorkspaceClock } from "../../core/workspaces/clock.ts"
import { CurrentRequest, envelope } from "./platform.ts"

export const REPLAYED_HEADER = "idempotency-replayed"

const replay = (answer: StoredAnswer) =>
  Effect.map(CurrentRequest, ({ requestId }) => {
    if (answer.status < 400) {
      return HttpServerResponse.text(answer.body, {
        status: answer.status,
        contentType: "application/json",
        headers: { [REPLAYED_HEADER]: "true" }
      })
    }
    const { code, message } = storedError(answer)
    return HttpServerResponse.setHeader(envelope(answer.status, code, message, requestId), REPLAYED_HEADER, "true")
  })

export const idempotent = <A, I, E, R>(
  options: IdempotentOptions<A, I, E, R>
): Effect.Effect<
  A | HttpServerResponse.HttpServerResponse,
  E | InvalidArgument | FailedPrecondition,
  IdempotencyStore | WorkspaceClock | HttpServerRequest.HttpServerRequest | R
> =>
  Effect.flatMap(
    runIdempotent(options),
    (answer): Effect.Effect<A | HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
      answer._tag === "Fresh" ? Effect.succeed(answer.value) : replay(answer.answer)
  )
