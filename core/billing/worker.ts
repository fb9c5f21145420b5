/**
 * The billing worker, for the life of the server: every `pollMs`, a round of the billing cycle
 * (core/billing/cycle.ts) and the recovery of purchases that died mid-charge (core/billing/pending.ts).
 * Any number of processes may run it on one Postgres: invoices are unique per month and each
 * attempt is claimed by one process.
 */
import { Duration, Effect, Layer } from "effect"
import { forever } from "../kernel/forever.ts"
import { BillingCycle } from "./cycle.ts"

/** Invoices made, attempts claimed and pending charges recovered per round, at most. */
const BATCH = 25
export const DEFAULT_POLL_MS = 5_000

export const layer = (options: {
  readonly pollMs?: number
  /** How long a charge attempt's claim lasts before another process may ask its key again. */
  readonly leaseMs?: number
  /** No other process can use this database (the embedded one): what the last run left in flight is taken over at once. */
  readonly soleWorker?: boolean
}) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const cycle = yield* BillingCycle
      if (options.soleWorker === true) {
        yield* cycle.round(BATCH, true, options.leaseMs).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning("Billing: the last run's charges could not be settled", cause)
          )
        )
      }
      yield* Effect.forkScoped(
        forever(
          cycle.round(BATCH, false, options.leaseMs),
          Duration.millis(options.pollMs ?? DEFAULT_POLL_MS),
          "billing cycle",
          Effect.never
        )
      )
    })
  )
