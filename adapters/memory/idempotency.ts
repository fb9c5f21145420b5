/**
 * In-memory IdempotencyStore with the semantics of adapters/sql/idempotency.ts. Every operation is
 * one synchronous section, so concurrent fibers cannot interleave inside a reservation. Kept apart
 * from MemoryDb: a rolled-back domain transaction must not undo a reservation.
 */
import { Effect, Layer } from "effect"
import {
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_WINDOW_MS,
  IdempotencyStore,
  type Reservation
} from "../../core/idempotency/store.ts"

interface Entry {
  owner: string
  requestHash: string
  state: "running" | "done"
  status: number | null
  body: string | null
  createdAt: number
  lockedUntil: number | null
}

const id = (s: { readonly workspaceId: string; readonly keyKind: string; readonly key: string }) =>
  JSON.stringify([s.workspaceId, s.keyKind, s.key])

export const make = (): IdempotencyStore => {
  const entries = new Map<string, Entry>()
  return IdempotencyStore.of({
    reserve: (s) =>
      Effect.sync((): Reservation => {
        const k = id(s)
        const fresh: Entry = {
          owner: s.owner,
          requestHash: s.requestHash,
          state: "running",
          status: null,
          body: null,
          createdAt: s.now,
          lockedUntil: s.now + IDEMPOTENCY_LOCK_MS
        }
        const e = entries.get(k)
        const expired = e !== undefined && e.createdAt < s.now - IDEMPOTENCY_WINDOW_MS
        const stale = e !== undefined && e.state === "running" && e.lockedUntil !== null && e.lockedUntil < s.now
        if (e === undefined || expired || stale) {
          entries.set(k, fresh)
          return { _tag: "Reserved" }
        }
        if (e.requestHash !== s.requestHash) return { _tag: "Mismatch" }
        if (e.state === "running") return { _tag: "InProgress" }
        return { _tag: "Replay", answer: { status: e.status ?? 200, body: e.body ?? "" } }
      }),
    complete: (s, answer) =>
      Effect.sync(() => {
        const e = entries.get(id(s))
        if (e?.state === "running" && e.owner === s.owner) {
          e.state = "done"
          e.status = answer.status
          e.body = answer.body
          e.lockedUntil = null
        }
      }),
    release: (s) =>
      Effect.sync(() => {
        const k = id(s)
        const e = entries.get(k)
        if (e?.state === "running" && e.owner === s.owner) entries.delete(k)
      }),
    renew: (s, now) =>
      Effect.sync(() => {
        const e = entries.get(id(s))
        if (e?.state !== "running" || e.owner !== s.owner) return false
        e.lockedUntil = now + IDEMPOTENCY_LOCK_MS
        return true
      })
  })
}

export const layer = Layer.sync(IdempotencyStore, make)
