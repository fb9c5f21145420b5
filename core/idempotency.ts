/**
 * Idempotency keys (CONTRACT.md): scoped to workspace and key kind; 1 to 255 characters; the stored
 * answer replays for 24 h with `Idempotency-Replayed: true`; the same key with a different body is a
 * 400; the same key while the first request is still running is a 409; 5xx answers and failures
 * before execution (401, 403, 429) are not stored. The reservation is a unique insert in the
 * database, so it holds across processes and concurrent retries.
 */
import { Context, Effect } from "effect"

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000
/** A reservation whose request never finished (the process died) can be taken over after this. */
export const IDEMPOTENCY_LOCK_MS = 60 * 1000

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

export interface IdempotencyStore {
  /**
   * Reserves `key` for a request whose body hashes to `requestHash`, or reports what the key already
   * holds. Expired entries (older than the window) and stale reservations (older than the lock) are
   * taken over.
   */
  readonly reserve: (scope: {
    readonly workspaceId: string
    readonly keyKind: string
    readonly key: string
    readonly requestHash: string
    readonly now: number
  }) => Effect.Effect<Reservation>
  readonly complete: (scope: { readonly workspaceId: string; readonly keyKind: string; readonly key: string }, answer: StoredAnswer) => Effect.Effect<void>
  /** Drops a reservation whose request must not be stored (5xx, or failed before it ran). */
  readonly release: (scope: { readonly workspaceId: string; readonly keyKind: string; readonly key: string }) => Effect.Effect<void>
}
export const IdempotencyStore = Context.GenericTag<IdempotencyStore>("core/IdempotencyStore")
