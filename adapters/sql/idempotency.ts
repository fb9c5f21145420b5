/**
 * IdempotencyStore on SQL, race-safe across processes without explicit transactions:
 * - the reservation is `INSERT ... ON CONFLICT DO NOTHING RETURNING` on the primary key, so exactly
 *   one contender inserts;
 * - an expired row (created before `now - window`) or a stale reservation (`running` with
 *   `locked_until < now`) is taken over by an UPDATE whose WHERE repeats that condition: Postgres
 *   re-checks it on the row version it locks, so once one contender has rewritten the row the
 *   others match nothing and look again;
 * - `complete`, `release` and `renew` only touch a `running` row its owner still holds: after a
 *   takeover, the previous holder's late answer changes nothing.
 * Times come from the `now` argument (ms), never from the database clock.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import {
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_WINDOW_MS,
  IdempotencyStore,
  type Reservation
} from "../../core/idempotency/store.ts"
import { PREPARED } from "./prepared.ts"

interface KeyRow {
  readonly request_hash: string
  readonly state: string
  readonly response_status: number | null
  readonly response_body: string | null
  readonly expired: boolean
  readonly stale: boolean
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Rounds through insert / read / take over only repeat when another contender changed the row. */
const MAX_ROUNDS = 20

export const layer = Layer.effect(
  IdempotencyStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const reserve: IdempotencyStore["reserve"] = (s) => {
      const now = iso(s.now)
      const lockedUntil = iso(s.now + IDEMPOTENCY_LOCK_MS)
      const expiredBefore = iso(s.now - IDEMPOTENCY_WINDOW_MS)
      const where = sql`workspace_id = ${s.workspaceId}::uuid AND key_kind = ${s.keyKind} AND key = ${s.key}`
      const reserved: Reservation = { _tag: "Reserved" }

      const round = (n: number): Effect.Effect<Reservation, unknown> =>
        Effect.gen(function*() {
          const inserted = yield* sql`${sql.literal(PREPARED)}
            INSERT INTO idempotency_keys (workspace_id, key_kind, key, owner, request_hash, state, created_at, locked_until)
            VALUES (${s.workspaceId}::uuid, ${s.keyKind}, ${s.key}, ${s.owner}, ${s.requestHash}, 'running', ${now}::timestamptz, ${lockedUntil}::timestamptz)
            ON CONFLICT (workspace_id, key_kind, key) DO NOTHING
            RETURNING 1 AS ok`
          if (inserted.length > 0) return reserved
          const rows = yield* sql<KeyRow>`${sql.literal(PREPARED)}
            SELECT request_hash, state, response_status, response_body,
                   created_at < ${expiredBefore}::timestamptz AS expired,
                   (state = 'running' AND locked_until < ${now}::timestamptz) AS stale
            FROM idempotency_keys WHERE ${where}`
          const row = rows[0]
          if (row === undefined) {
            // Released between our insert and our read: try again.
            return n < MAX_ROUNDS ? yield* round(n + 1) : ({ _tag: "InProgress" } as const)
          }
          if (row.expired || row.stale) {
            const taken = yield* sql`
              UPDATE idempotency_keys
              SET owner = ${s.owner}, request_hash = ${s.requestHash}, state = 'running', response_status = NULL, response_body = NULL,
                  created_at = ${now}::timestamptz, locked_until = ${lockedUntil}::timestamptz
              WHERE ${where}
                AND (created_at < ${expiredBefore}::timestamptz OR (state = 'running' AND locked_until < ${now}::timestamptz))
              RETURNING 1 AS ok`
            if (taken.length > 0) return reserved
            // Someone else took it over (or released it) first: look again.
            return n < MAX_ROUNDS ? yield* round(n + 1) : ({ _tag: "InProgress" } as const)
          }
          if (row.request_hash !== s.requestHash) return { _tag: "Mismatch" } as const
          if (row.state === "running") return { _tag: "InProgress" } as const
          return {
            _tag: "Replay",
            answer: { status: Number(row.response_status), body: String(row.response_body) }
          } as const
        })

      return Effect.orDie(round(0))
    }

    return IdempotencyStore.of({
      reserve,
      complete: (s, answer) =>
        Effect.orDie(sql`${sql.literal(PREPARED)}
          UPDATE idempotency_keys
          SET state = 'done', response_status = ${answer.status}, response_body = ${answer.body}, locked_until = NULL
          WHERE workspace_id = ${s.workspaceId}::uuid AND key_kind = ${s.keyKind} AND key = ${s.key} AND state = 'running' AND owner = ${s.owner}`),
      release: (s) =>
        Effect.orDie(sql`
          DELETE FROM idempotency_keys
          WHERE workspace_id = ${s.workspaceId}::uuid AND key_kind = ${s.keyKind} AND key = ${s.key} AND state = 'running' AND owner = ${s.owner}`),
      renew: (s, now) =>
        Effect.orDie(sql`
          UPDATE idempotency_keys SET locked_until = ${iso(now + IDEMPOTENCY_LOCK_MS)}::timestamptz
          WHERE workspace_id = ${s.workspaceId}::uuid AND key_kind = ${s.keyKind} AND key = ${s.key} AND state = 'running' AND owner = ${s.owner}
          RETURNING 1 AS ok`).pipe(Effect.map((rows) => rows.length > 0))
    })
  })
)
