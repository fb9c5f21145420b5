/** Test helpers (CONTRACT.md): drive the simulated carrier end to end through core/messaging/simulator.ts. */
import { type HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import type { Principal } from "../../../core/auth/principal.ts"
import { Calls } from "../../../core/calls/service.ts"
import { NotFound } from "../../../core/kernel/errors.ts"
import { Simulator } from "../../../core/messaging/simulator.ts"
import { Api } from "../api.ts"
import { CurrentPrincipal } from "../platform.ts"
import { group } from "../router.ts"

export const TestHelpersLive = (enabled: boolean) =>
  group(Api, "testHelpers", (handlers) =>
    Effect.gen(function*() {
      const simulator = yield* Simulator
      const calls = yield* Calls
      // Served only when TEST_HELPERS is on; otherwise the routes do not exist.
      const caller: Effect.Effect<Principal, NotFound, HttpServerRequest.HttpServerRequest> = enabled
        ? CurrentPrincipal
        : Effect.fail(new NotFound({ message: "No such route" }))
      return handlers
        .handle(
          "inboundMessage",
          ({ payload }) => Effect.flatMap(caller, (p) => simulator.inboundMessage(p, payload)),
          { uninterruptible: true }
        )
        .handle("inboundCall", ({ payload }) => Effect.flatMap(caller, (p) => calls.simulateInbound(p, payload)), {
          uninterruptible: true
        })
        .handle("deliveryStatus", ({ payload }) => Effect.flatMap(caller, (p) => simulator.deliveryStatus(p, payload)))
        .handle("registry", ({ payload }) => Effect.flatMap(caller, (p) => simulator.registryOutcome(p, payload)))
        .handle("otp", () => Effect.flatMap(caller, (p) => simulator.lastOtp(p)))
        .handle("clock", ({ payload }) => Effect.flatMap(caller, (p) => simulator.advanceClock(p, payload)))
    }))
