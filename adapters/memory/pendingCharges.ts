/** In-memory PendingChargeStore. */
import { Effect, Layer } from "effect"
import { PendingChargeStore } from "../../core/billing/pending.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  PendingChargeStore,
  Effect.map(MemoryDb, (db) => {
    const all = () => [...db.state.pendingCharges.values()]
    return PendingChargeStore.of({
      reserve: (record) =>
        Effect.sync(() => {
          const taken = all().some((p) =>
            p.workspaceId === record.workspaceId && p.purpose === record.purpose &&
            (p.state === "pending" || p.state === "refunding")
          )
          if (taken) return false
          db.state.pendingCharges.set(record.id, record)
          return true
        }),
      move: (workspaceId, id, from, to, paymentId, at) =>
        Effect.sync(() => {
          const p = db.state.pendingCharges.get(id)
          if (p === undefined || p.workspaceId !== workspaceId || p.state !== from) return false
          db.state.pendingCharges.set(id, { ...p, state: to, paymentId: paymentId ?? p.paymentId, updatedAt: at })
          return true
        }),
      claimExpired: (now, leaseUntil, limit, workspaceId) =>
        Effect.sync(() => {
          const expired = all()
            .filter((p) =>
              (p.state === "pending" || p.state === "refunding") && p.leaseUntil < now &&
              (workspaceId === null || p.workspaceId === workspaceId)
            )
            .slice(0, limit)
          for (const p of expired) db.state.pendingCharges.set(p.id, { ...p, leaseUntil })
          return expired.map((p) => ({ ...p, leaseUntil }))
        }),
      pending: (workspaceId, prefix) =>
        Effect.sync(() =>
          all().filter((p) =>
            p.workspaceId === workspaceId && p.purpose.startsWith(prefix) &&
            (p.state === "pending" || p.state === "refunding")
          )
        )
    })
  })
)
