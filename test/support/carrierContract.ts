/**
 * What the carrier ports' contract suites (test/adapters/carrier.*.contract.test.ts) share: one
 * harness per adapter, the simulator over fresh memory stores (its carrier account is the numbers
 * table) and Telnyx over the fake Telnyx.
 */
import { Effect, Layer, Redacted } from "effect"
import type { TelnyxConfig } from "../../adapters/carrier/telnyxClient.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { NumberStore } from "../../core/numbers/model.ts"
import type { WorkspaceStore } from "../../core/workspaces/store.ts"
import { hold } from "../adapters/stores.contract.ts"
import type { FakeTelnyx } from "./fakeTelnyx.ts"

export interface Harness<Subject> {
  readonly name: string
  /** A fresh adapter for one test, with the steps the suite takes on it. */
  readonly make: Effect.Effect<Subject>
  /** The carrier fails every request from now on: only a carrier we can script (the fake) can be made to. */
  readonly outage?: () => void
}

/**
 * The simulated adapter `layer` over fresh memory stores; `held` puts a number in a new workspace,
 * which is how the simulator's carrier account holds it.
 */
export const simulated = <Port, Subject>(
  layer: Layer.Layer<Port, never, NumberStore>,
  subject: (held: (e164: string) => Effect.Effect<void>) => Effect.Effect<Subject, never, Port>
): Effect.Effect<Subject> =>
  Effect.gen(function*() {
    const stores = yield* Effect.context<NumberStore | WorkspaceStore>()
    return yield* subject((e164) => hold([e164]).pipe(Effect.provide(stores), Effect.orDie, Effect.asVoid))
  }).pipe(Effect.provide(layer.pipe(Layer.provideMerge(MemoryStores.layer))))

/** Our account at the fake Telnyx. */
export const fakeAccount = (fake: FakeTelnyx): TelnyxConfig => ({
  apiKey: Redacted.make(fake.apiKey),
  messagingProfileId: "40017f8e-0000-4000-8000-000000000001",
  baseUrl: fake.baseUrl
})

/** Every request to the fake fails with a 503 (for more tries than any adapter makes). */
export const fakeOutage = (fake: () => FakeTelnyx) => () => fake().script({ type: "serverError", status: 503 }, 10)
