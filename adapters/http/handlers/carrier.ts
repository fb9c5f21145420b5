/** Carrier webhooks: authenticated by the carrier's signature rather than an API key. */
import { HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Either, Option, Redacted } from "effect"
import { InvalidArgument, NotFound, Unauthenticated } from "../../../core/kernel/errors.ts"
import { Messaging } from "../../../core/messaging/service.ts"
import { Calls } from "../../../core/calls/service.ts"
import { parseCallEvent } from "../../carrier/telnyxCallWebhooks.ts"
import { registryChange } from "../../carrier/telnyxRegistryWebhooks.ts"
import { verifyAndParse } from "../../carrier/telnyxWebhooks.ts"
import { Registrations } from "../../../core/registration/service.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

export interface CarrierWebhookOptions {
  /** The Telnyx account's Ed25519 public key; none unless CARRIER=telnyx. */
  readonly telnyxPublicKey: Option.Option<Redacted.Redacted<string>>
}

/** A call event, when the body is one (a malformed call payload falls through, as no registry change either). */
const callEvent = (rawBody: string) => Option.flatten(Either.getRight(parseCallEvent(rawBody)))

export const CarrierLive = (options: CarrierWebhookOptions) =>
  group(Api, "carrier", (handlers) =>
    Effect.gen(function* () {
      const messaging = yield* Messaging
      const texting = yield* Registrations
      const calls = yield* Calls
      return handlers.handle(
        "telnyx",
        () =>
          Effect.gen(function* () {
            if (Option.isNone(options.telnyxPublicKey)) return yield* new NotFound({ message: "No such route" })
            const key = options.telnyxPublicKey.value
            const req = yield* HttpServerRequest.HttpServerRequest
            const rawBody = yield* req.text.pipe(Effect.orElseFail(() => new InvalidArgument({ message: "Request body could not be read" })))
            const parsed = yield* verifyAndParse({
              rawBody,
              signature: req.headers["telnyx-signature-ed25519"] ?? null,
              timestamp: req.headers["telnyx-timestamp"] ?? null,
              publicKey: Redacted.value(key),
              nowSeconds: Math.floor((yield* Clock.currentTimeMillis) / 1000)
            }).pipe(
              Effect.mapError((e) =>
                e.reason === "malformed" ? new InvalidArgument({ message: e.message }) : new Unauthenticated({ message: e.message })
              )
            )
            const call = parsed._tag === "Inbound" || parsed._tag === "Status" ? Option.none() : callEvent(rawBody)
            if (parsed._tag === "Inbound") {
              // A number we do not hold is acknowledged (so the carrier stops retrying) and logged.
              yield* messaging.receive(parsed.message).pipe(
                Effect.catchTag("NotFound", (e) => Effect.logWarning("Inbound message for an unknown number", e.message)),
                Effect.catchTag("InvalidArgument", (e) => Effect.logWarning("Inbound message could not be stored", e.message))
              )
            } else if (parsed._tag === "Status") {
              yield* messaging.applyStatus(parsed.report)
            } else if (Option.isSome(call)) {
              // A call's step; an Internal failure (500) has Telnyx deliver the event again.
              yield* calls.onCarrierEvent(call.value)
            } else {
              // A 10DLC brand or campaign changed: re-read it from the registry (the poller would, later).
              const change = registryChange(rawBody)
              if (Option.isSome(change)) {
                yield* texting.onRegistryChange(change.value).pipe(
                  Effect.catchAll((e) => Effect.logWarning("10DLC webhook: the registration could not be moved forward", e.message))
                )
              }
            }
            return { ok: true as const }
          }),
        { uninterruptible: true }
      )
    })
  )
