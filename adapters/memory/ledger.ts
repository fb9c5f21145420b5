/** In-memory LedgerStore. */
import { Effect, Layer } from "effect"
import type { ChargeRecord } from "../../core/billing/ledger.ts"
import { chargeRecords, LedgerStore } from "../../core/billing/store.ts"
import { MemoryDb } from "./db.ts"

const newestFirst = (a: ChargeRecord, b: ChargeRecord) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1

export const layer = Layer.effect(
  LedgerStore,
  Effect.map(MemoryDb, (db) =>
    LedgerStore.of({
      append: (workspaceId, charges) =>
        Effect.tap(chargeRecords(workspaceId, charges), (rows) => Effect.sync(() => void db.state.ledger.push(...rows))),
      list: (workspaceId) => Effect.sync(() => db.state.ledger.filter((c) => c.workspaceId === workspaceId).sort(newestFirst))
    })
  )
)
