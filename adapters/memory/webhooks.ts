/** In-memory WebhookStore; the memory transactor serialises fan-out, standing in for row locks. */
import { Effect, Layer, Option } from "effect"
import type { DeliveryRecord } from "../../core/webhooks/model.ts"
import { type AttemptRecord, WebhookStore } from "../../core/webhooks/store.ts"
import { MemoryDb } from "./db.ts"

const newestFirst = (a: DeliveryRecord, b: DeliveryRecord) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1

export const layer = Layer.effect(
  WebhookStore,
  Effect.map(MemoryDb, (db) => {
    const st = () => db.state
    const recordAttempt = (a: AttemptRecord) =>
      Effect.sync(() => {
        const d = st().deliveries.get(a.deliveryId)
        // Only the attempt the delivery was claimed for: a late record never moves it back.
        if (!d || d.workspaceId !== a.workspaceId || d.status !== "pending" || d.attempts !== a.attempts - 1) return
        st().deliveries.set(d.id, {
          ...d,
          status: a.status,
          attempts: a.attempts,
          responseStatus: a.responseStatus,
          error: a.error,
          lastAttemptAt: a.lastAttemptAt,
          nextAttemptAt: a.nextAttemptAt
        })
        st().leases.delete(d.id)
        st().attempts.push(a)
      })
    return WebhookStore.of({
      insertEndpoint: (e) => Effect.sync(() => void st().endpoints.set(e.id, e)),
      getEndpoint: (ws, id) =>
        Effect.sync(() => Option.fromNullable(st().endpoints.get(id)).pipe(Option.filter((e) => e.workspaceId === ws))),
      listEndpoints: (ws) =>
        Effect.sync(() =>
          [...st().endpoints.values()].filter((e) => e.workspaceId === ws).sort((
            a,
            b
          ) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
        ),
      updateEndpoint: (e) =>
        Effect.sync(() => {
          const cur = st().endpoints.get(e.id)
          if (cur && cur.workspaceId === e.workspaceId) st().endpoints.set(e.id, e)
        }),
      deleteEndpoint: (ws, id) =>
        Effect.sync(() => {
          const cur = st().endpoints.get(id)
          if (!cur || cur.workspaceId !== ws) return false
          st().endpoints.delete(id)
          for (const [k, d] of st().deliveries) if (d.endpointId === id) st().deliveries.delete(k)
          return true
        }),
      insertDeliveries: (ds) =>
        Effect.sync(() => {
          for (const d of ds) {
            // One delivery per (endpoint, event), as the SQL unique index guarantees.
            const dup = [...st().deliveries.values()].some((x) =>
              x.endpointId === d.endpointId && x.eventId === d.eventId
            )
            if (!dup) st().deliveries.set(d.id, d)
          }
        }),
      getDelivery: (ws, id) =>
        Effect.sync(() =>
          Option.fromNullable(st().deliveries.get(id)).pipe(Option.filter((d) => d.workspaceId === ws))
        ),
      listDeliveries: (ws, endpointId, limit) =>
        Effect.sync(() =>
          [...st().deliveries.values()]
            .filter((d) => d.workspaceId === ws && d.endpointId === endpointId)
            .sort(newestFirst)
            .slice(0, limit)
        ),
      leaseDelivery: (ws, endpointId, id, { leaseUntil, now }) =>
        Effect.sync(() => {
          const d = st().deliveries.get(id)
          if (!d || d.workspaceId !== ws || d.endpointId !== endpointId) return Option.none()
          const lease = st().leases.get(id)
          if (lease !== undefined && lease >= now) return Option.none()
          const leased: DeliveryRecord = { ...d, status: "pending", nextAttemptAt: now }
          st().deliveries.set(id, leased)
          st().leases.set(id, leaseUntil)
          return Option.some(leased)
        }),
      requeueFailed: (ws, endpointId, { limit, now, since, types }) =>
        Effect.sync(() => {
          const found = [...st().deliveries.values()]
            .filter((d) => {
              const lease = st().leases.get(d.id)
              return d.workspaceId === ws && d.endpointId === endpointId && d.createdAt >= since &&
                types.includes(d.eventType) && (lease === undefined || lease < now) &&
                (d.status === "failed" ||
                  (d.status === "pending" && d.attempts > 0 && d.nextAttemptAt !== null && d.nextAttemptAt > now))
            })
            .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
            .slice(0, limit)
          for (const d of found) st().deliveries.set(d.id, { ...d, status: "pending", nextAttemptAt: now })
          return found.length
        }),
      claimOutbox: (limit) => Effect.sync(() => st().outbox.filter((e) => !st().dispatched.has(e.id)).slice(0, limit)),
      markDispatched: (ids) => Effect.sync(() => ids.forEach((id) => st().dispatched.add(id))),
      enabledEndpoints: (wss) =>
        Effect.sync(() =>
          [...st().endpoints.values()].filter((e) => e.status === "enabled" && wss.includes(e.workspaceId))
        ),
      claimDue: (now, leaseUntil, limit) =>
        Effect.sync(() => {
          const due = [...st().deliveries.values()]
            .filter((d) => {
              const endpoint = st().endpoints.get(d.endpointId)
              const lease = st().leases.get(d.id)
              return (
                d.status === "pending" &&
                d.nextAttemptAt !== null &&
                // Due on its workspace's clock (the clock test helper moves it forward).
                d.nextAttemptAt <=
                  new Date(Date.parse(now) + (st().clockOffsets.get(d.workspaceId) ?? 0)).toISOString() &&
                (lease === undefined || lease < now) &&
                endpoint?.status === "enabled"
              )
            })
            .sort((a, b) => (a.nextAttemptAt! < b.nextAttemptAt! ? -1 : 1))
            .slice(0, limit)
          for (const d of due) st().leases.set(d.id, leaseUntil)
          return due.map((delivery) => ({ delivery, endpoint: st().endpoints.get(delivery.endpointId)! }))
        }),
      releaseLeases: () =>
        Effect.sync(() => {
          let n = 0
          for (const id of st().leases.keys()) if (st().deliveries.get(id)?.status === "pending") n++
          st().leases.clear()
          return n
        }),
      pendingDeliveries: () =>
        Effect.sync(() => {
          let count = 0
          let oldestCreatedAt: string | null = null
          for (const d of st().deliveries.values()) {
            if (d.status !== "pending") continue
            count++
            if (oldestCreatedAt === null || d.createdAt < oldestCreatedAt) oldestCreatedAt = d.createdAt
          }
          return { count, oldestCreatedAt }
        }),
      recordAttempts: (as) => Effect.forEach(as, recordAttempt, { discard: true }),
      setEndpointHealth: (ws, id, health) =>
        Effect.sync(() => {
          const e = st().endpoints.get(id)
          if (e && e.workspaceId === ws) {
            st().endpoints.set(id, {
              ...e,
              failingSince: health.failingSince,
              status: health.disable ? "disabled" : e.status
            })
          }
        })
    })
  })
)
