/**
 * The simulated carrier: a message from a number on its account is accepted at once with a
 * deterministic-looking id and reports `queued`; outcomes are driven by the test helpers
 * (`POST /test-helpers/delivery-status`). Its account is the numbers table, as for the simulated
 * inventory: a `from` no workspace holds is `rejected`, as Telnyx refuses a number not on the
 * account. It is the embedded default, so a fresh install never sends real traffic.
 */
import { Effect, Layer } from "effect"
import { Ids } from "../../core/kernel/ids.ts"
import { Carrier, CarrierError } from "../../core/messaging/carrier.ts"
import { NumberStore } from "../../core/numbers/model.ts"

export const layer = Layer.effect(
  Carrier,
  Effect.map(NumberStore, (store) =>
    Carrier.of({
      // The simulator answers no keyword: the service answers them all.
      answersKeywords: new Set(),
      send: ({ from }) =>
        Effect.gen(function*() {
          if (!(yield* store.taken([from])).has(from)) {
            return yield* new CarrierError({
              reason: "rejected",
              message: `${from} is not a number on the carrier account`
            })
          }
          const { uuid } = yield* Ids
          return { carrierMessageId: `sim_${uuid()}`, status: "queued" as const }
        })
    }))
)
