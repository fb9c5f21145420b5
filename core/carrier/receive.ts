/**
 * The use case behind every carrier callback: the configured carrier authenticates and parses it
 * (the CarrierCallbacks port), then its event goes to the service it is about. The answer tells the
 * carrier whether to send it again, so what a retry cannot fix (a number we do not hold, a message
 * we cannot store, a registration that cannot move) is acknowledged and logged; an Internal failure
 * fails, and the carrier delivers the event again.
 */
import { Clock, Effect } from "effect"
import { Calls } from "../calls/service.ts"
import type { Internal, InvalidArgument, Unauthenticated } from "../kernel/errors.ts"
import { Messaging } from "../messaging/service.ts"
import { Registrations } from "../registration/service.ts"
import { type CallbackRequest, CarrierCallbacks, CarrierEvent } from "./callbacks.ts"

/** Hands one parsed callback to its service. */
export const dispatch = CarrierEvent.$match({
  Inbound: ({ message }) =>
    Effect.flatMap(Messaging, (messaging) => messaging.receive(message)).pipe(
      Effect.catchTag("NotFound", (e) => Effect.logWarning("Inbound message for an unknown number", e.message)),
      Effect.catchTag("InvalidArgument", (e) => Effect.logWarning("Inbound message could not be stored", e.message)),
      Effect.asVoid
    ),
  // A report for a message we do not know is acknowledged by the service itself.
  Status: ({ report }) => Effect.asVoid(Effect.flatMap(Messaging, (messaging) => messaging.applyStatus(report))),
  Call: ({ event }) => Effect.flatMap(Calls, (calls) => calls.onCarrierEvent(event)),
  // The poller would re-read it later; the callback only makes it sooner.
  RegistryChange: ({ change }) =>
    Effect.flatMap(Registrations, (registrations) => registrations.onRegistryChange(change)).pipe(
      Effect.catchAll((e) =>
        Effect.logWarning("10DLC webhook: the registration could not be moved forward", e.message)
      ),
      Effect.asVoid
    ),
  Ignored: () => Effect.void
})

/** Authenticates and parses a callback with `callbacks` (the configured carrier's), then dispatches it. */
export const receiveCallback = (
  callbacks: CarrierCallbacks,
  request: Omit<CallbackRequest, "now">
): Effect.Effect<void, InvalidArgument | Unauthenticated | Internal, Messaging | Calls | Registrations> =>
  Clock.currentTimeMillis.pipe(
    Effect.flatMap((now) => callbacks.parse({ ...request, now })),
    Effect.flatMap(dispatch)
  )
