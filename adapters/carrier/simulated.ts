/**
 * The simulated carrier: accepts every message at once with a deterministic-looking id and reports
 * `queued`; outcomes are driven by the test helpers (`POST /test-helpers/delivery-status`). It is
 * the embedded default, so a fresh install never sends real traffic.
 */
import { Effect, Layer } from "effect"
import { Ids } from "../../core/kernel/ids.ts"
import { Carrier } from "../../core/messaging/carrier.ts"

export const layer = Layer.succeed(
  Carrier,
  Carrier.of({
    send: () => Effect.map(Ids, ({ uuid }) => ({ carrierMessageId: `sim_${uuid()}`, status: "queued" as const }))
  })
)
