/**
 * Idempotency keys (CONTRACT.md): scoped to workspace and key kind; 1 to 255 characters; the stored
 * answer replays for 24 h with `Idempotency-Replayed: true`; the same key with a different body is a
 * 400; the same key while the first request is still running is a 409; 5xx answers and failures
 * before execution (401, 403, 429) are not stored. This is the store port of runner.ts; the
 * reservation is a unique insert in the database, so it holds across processes and concurrent retries.
 */
import { Context, Effect } from "effect"

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000
/**
 * A reservation not renewed for this long can be taken over: its process died. A running request
 * renews it every IDEMPOTENCY_RENEW_MS, however long it runs.
 */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000
export const IDEMPOTENCY_RENEW_MS = 20 * 1000

export interface StoredAnswer {
  readonly status: number
  /** The JSON body sent the first time. */
  readonly body: string
}

export type Reservation =
  | { readonly _tag: "Reserved" }
  | { readonly _tag: "Replay"; readonly answer: StoredAnswer }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch" }

/**
 * One request's hold on a key. `owner` is a token the request makes up: after a takeover, the
 * previous holder's late complete, release or renew changes nothing.
 */
export interface KeyHold {
  readonly workspaceId: string
  readonly keyKind: string
  readonly key: string
  readonly owner: string
}

export interface IdempotencyStore {
  /**
   * Reserves `key` for `owner`'s request whose body hashes to `requestHash`, or reports what the key
   * already holds. Expired entries (older than the window) and stale reservations (not renewed within
   * the lock) are taken over.
   */
  readonly reserve: (
    hold: KeyHold & { readonly requestHash: string; readonly now: number }
  ) => Effect.Effect<Reservation>
  /** Stores the answer, if `owner` still holds the running reservation. */
  readonly complete: (hold: KeyHold, answer: StoredAnswer) => Effect.Effect<void>
  /** Drops a reservation whose request must not be stored (5xx, or failed before it ran), if `owner` still holds it. */
  readonly release: (hold: KeyHold) => Effect.Effect<void>
  /** Extends the lock to `now + IDEMPOTENCY_LOCK_MS` while the request runs; false once `owner` no longer holds it. */
  readonly renew: (hold: KeyHold, now: number) => Effect.Effect<boolean>
}
export const IdempotencyStore = Context.GenericTag<IdempotencyStore>("core/IdempotencyStore")
