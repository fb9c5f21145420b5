import { Context, Effect } from "effect"
import { Ids } from "../kernel/ids.ts"
import { type Charge, type ChargeRecord, CURRENCY } from "./ledger.ts"

/**
 * The ledger port. `append` writes through the caller's transaction: run it inside the same
 * `Transactor.withTransaction` as the change the charge pays for (the number, its outbox event), so
 * the row commits with that change or not at all (core/billing/payments.ts has the whole order).
 */
export interface LedgerStore {
  /**
   * Writes the charges as rows of the workspace, in order, and returns them. `at` is when they were
   * made on the workspace's clock (core/workspaces/clock.ts), which the billing cycle reads.
   */
  readonly append: (
    workspaceId: string,
    charges: ReadonlyArray<Charge>,
    at: string
  ) => Effect.Effect<ReadonlyArray<ChargeRecord>>
  /** The workspace's charges, newest first (`createdAt`, then id: rows of one append keep their order). */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<ChargeRecord>>
}
export const LedgerStore = Context.GenericTag<LedgerStore>("core/LedgerStore")

/** The rows an `append` writes: each charge with a new id and the currency, for every adapter alike. */
export const chargeRecords = (
  workspaceId: string,
  charges: ReadonlyArray<Charge>,
  createdAt: string
): Effect.Effect<Array<ChargeRecord>> =>
  Effect.map(Ids, ({ uuid }) => charges.map((c) => ({ id: uuid(), workspaceId, ...c, currency: CURRENCY, createdAt })))
