/** In-memory InvoiceStore. */
import { Effect, Layer, Option } from "effect"
import { monthStart, renews } from "../../core/billing/cycle.ts"
import { type ClaimedAttempt, type InvoiceRecord, InvoiceStore } from "../../core/billing/invoices.ts"
import { nowIso } from "../../core/kernel/time.ts"
import { MemoryDb } from "./db.ts"

export const layer = Layer.effect(
  InvoiceStore,
  Effect.map(MemoryDb, (db) => {
    const all = () => [...db.state.invoices.values()]
    const offset = (ws: string) => db.state.clockOffsets.get(ws) ?? 0
    const put = (i: InvoiceRecord) => void db.state.invoices.set(i.id, i)
    return InvoiceStore.of({
      create: (invoice) =>
        Effect.map(nowIso, (at) => {
          if (all().some((i) => i.workspaceId === invoice.workspaceId && i.periodStart === invoice.periodStart)) {
            return Option.none()
          }
          const record = { ...invoice, createdAt: at, updatedAt: at }
          put(record)
          return Option.some(record)
        }),
      unbilled: (now, limit) =>
        Effect.sync(() =>
          [...db.state.workspaces.values()]
            .filter((w) => renews(w.billing))
            .filter((w) => {
              const month = monthStart(now + offset(w.id)).toISOString()
              return w.createdAt < month && !all().some((i) => i.workspaceId === w.id && i.periodStart === month)
            })
            .slice(0, limit)
            .map((w) => ({ workspaceId: w.id, offsetMs: offset(w.id) }))
        ),
      claim: (now, leaseUntil, limit) =>
        Effect.sync(() => {
          const nowIso = Number.isFinite(now) ? new Date(now).toISOString() : "infinity"
          const claimed: Array<ClaimedAttempt> = []
          for (const i of all().sort((a, b) => (a.periodStart < b.periodStart ? -1 : 1))) {
            if (claimed.length >= limit) break
            const expired = i.charging && i.leaseUntil !== null && i.leaseUntil < nowIso
            const wsNow = Number.isFinite(now) ? new Date(now + offset(i.workspaceId)).toISOString() : "infinity"
            const due = !i.charging && (i.status === "open" || i.status === "failed") && i.nextAttemptAt !== null &&
              i.nextAttemptAt <= wsNow
            if (!expired && !due) continue
            const next = { ...i, attempts: due ? i.attempts + 1 : i.attempts, charging: true, leaseUntil }
            put(next)
            claimed.push({ invoice: next, attempt: next.attempts })
          }
          return claimed
        }),
      settle: (workspaceId, invoiceId, attempt, outcome, at) =>
        Effect.sync(() => {
          const i = db.state.invoices.get(invoiceId)
          if (i === undefined || i.workspaceId !== workspaceId || !i.charging || i.attempts !== attempt) {
            return Option.none()
          }
          const next: InvoiceRecord = {
            ...i,
            charging: false,
            leaseUntil: null,
            status: outcome._tag,
            nextAttemptAt: outcome._tag === "failed" ? outcome.nextAttemptAt : null,
            paymentId: outcome._tag === "paid" ? outcome.paymentId : i.paymentId,
            updatedAt: at
          }
          put(next)
          return Option.some(next)
        }),
      dueNow: (workspaceId, invoiceId, at) =>
        Effect.sync(() => {
          const i = db.state.invoices.get(invoiceId)
          if (i === undefined || i.workspaceId !== workspaceId || i.status !== "failed" || i.charging) {
            return Option.none()
          }
          const next = { ...i, nextAttemptAt: at, updatedAt: at }
          put(next)
          return Option.some(next)
        }),
      get: (workspaceId, invoiceId) =>
        Effect.sync(() =>
          Option.filter(Option.fromNullable(db.state.invoices.get(invoiceId)), (i) => i.workspaceId === workspaceId)
        ),
      list: (workspaceId) =>
        Effect.sync(() =>
          all().filter((i) => i.workspaceId === workspaceId).sort((a, b) => (a.periodStart < b.periodStart ? 1 : -1))
        )
    })
  })
)
