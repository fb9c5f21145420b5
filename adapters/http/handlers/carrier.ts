/** Carrier webhooks: authenticated by the carrier's signature (the CarrierCallbacks port), not by an API key. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { CarrierCallbacks } from "../../../core/carrier/callbacks.ts"
import { receiveCallback } from "../../../core/carrier/receive.ts"
import { InvalidArgument, NotFound } from "../../../core/kernel/errors.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

export const CarrierLive = group(Api, "carrier", (handlers) =>
  Effect.gen(function*() {
    // The configured carrier's callbacks; the simulator provides none, so every name is 404.
    const callbacks = yield* Effect.serviceOption(CarrierCallbacks)
    return handlers.handle(
      "callback",
      ({ path }) =>
        Effect.gen(function*() {
          if (Option.isNone(callbacks) || callbacks.value.name !== path.name) {
            return yield* new NotFound({ message: "No such route" })
          }
          const req = yield* HttpServerRequest.HttpServerRequest
          const rawBody = yield* req.text.pipe(
            Effect.orElseFail(() => new InvalidArgument({ message: "Request body could not be read" }))
          )
          yield* receiveCallback(callbacks.value, { headers: req.headers, rawBody })
          return { ok: true as const }
        }),
      // A client disconnect must not cut a callback off halfway through storing what it carries.
      { uninterruptible: true }
    )
  }))
