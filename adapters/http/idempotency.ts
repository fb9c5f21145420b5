/**
 * The `Idempotency-Key` header for `POST /messages` (and later `POST /numbers`, `POST /calls`): the
 * core runner (core/idempotency/runner.ts) does the work; this adapts its answer to HTTP. A create
 * route hands over its tool, whose `output` encodes the answer it stores:
 *
 *   .handle("send", idempotentCreate(sendMessage), { uninterruptible: true })
 *
 * A replay answers the stored status and body as-is with `Idempotency-Replayed: true` (HttpApiBuilder
 * sends a returned `HttpServerResponse` without encoding it); an error stored by an earlier version
 * (which kept 4xx errors; none is stored now) is rebuilt as the standard envelope with the current
 * request id.
 */
import type { HttpServerRequest } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { FailedPrecondition, InvalidArgument } from "../../core/kernel/errors.ts"
import { type IdempotentOptions, runIdempotent, storedError } from "../../core/idempotency/runner.ts"
import type { IdempotencyStore, StoredAnswer } from "../../core/idempotency/store.ts"
import type { WorkspaceClock } from "../../core/workspaces/clock.ts"
import type { DomainError } from "../../core/kernel/errors.ts"
import type { Tool } from "../../core/tools/tool.ts"
import { CurrentPrincipal, CurrentRequest, envelope } from "./platform.ts"

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
  IdempotencyStore | WorkspaceClock | HttpServerRequest.HttpServerRequest | R
> =>
  Effect.flatMap(
    runIdempotent(options),
    (answer): Effect.Effect<A | HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
      answer._tag === "Fresh" ? Effect.succeed(answer.value) : replay(answer.answer)
  )

/** The handler of a create route (`201`) with `Idempotency-Key`, running `tool` with the decoded payload. */
export const idempotentCreate =
  <I, IE, A, E extends DomainError, R>(tool: Tool<I, IE, A, E, R>) =>
  ({ headers, payload }: { readonly headers: { readonly "idempotency-key"?: string | undefined }; readonly payload: I }) =>
    Effect.flatMap(CurrentPrincipal, (principal) =>
      idempotent({ principal, key: headers["idempotency-key"], request: payload, status: 201, success: tool.output, run: tool.run(principal, payload) })
    )
