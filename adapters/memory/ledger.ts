/** In-memory LedgerStore. */
import { Effect, Layer } from "effect"
import { chargeRecords, LedgerStore } from "../../core/billing/store.ts"
import { MemoryDb, newestFirst } from "./db.ts"

export const layer = Layer.effect(
  LedgerStore,
  Effect.map(MemoryDb, (db) =>
    LedgerStore.of({
      append: (workspaceId, charges, at) =>
        Effect.tap(
          chargeRecords(workspaceId, charges, at),
          (rows) => Effect.sync(() => void db.state.ledger.push(...rows))
        ),
      list: (workspaceId) =>
        Effect.sync(() => db.state.ledger.filter((c) => c.workspaceId === workspaceId).sort(newestFirst))
    }))
)
