/** The payment provider's webhooks: authenticated by its signature (the HostedPayments port), not by an API key. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { HostedPayments } from "../../../core/billing/hosted.ts"
import { InvalidArgument, NotFound } from "../../../core/kernel/errors.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

export const PaymentsLive = group(Api, "payments", (handlers) =>
  Effect.gen(function*() {
    // The simulator and the ledger have no webhooks: every name is 404.
    const hosted = yield* Effect.serviceOption(HostedPayments)
    return handlers.handle(
      "webhook",
      ({ path }) =>
        Effect.gen(function*() {
          if (Option.isNone(hosted) || hosted.value.name !== path.name) {
            return yield* new NotFound({ message: "No such route" })
          }
          const req = yield* HttpServerRequest.HttpServerRequest
          // The signature is over the exact bytes sent.
          const rawBody = yield* req.text.pipe(
            Effect.orElseFail(() => new InvalidArgument({ message: "Request body could not be read" }))
          )
          yield* hosted.value.receive({ headers: req.headers, rawBody })
          return { received: true as const }
        }),
      // A client disconnect must not cut an event off halfway through applying it.
      { uninterruptible: true }
    )
  }))
