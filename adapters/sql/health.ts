/**
 * Readiness on SQL: the database answers, takes writes, and the migrator's table lists every
 * migration this code has (migrate.ts). A process started on a database another process is still
 * migrating, or one restored from an older backup, reports "pending" until the migrations run. A
 * database in read-only mode (a standby still in recovery, the address a failover is moving) is
 * "read_only": each write would answer 503 (unavailable.ts), so the process cannot serve.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { Readiness, type StoreReadiness } from "../../core/health/readiness.ts"
import { migrations } from "./migrate.ts"

/** The migrator's own table (@effect/sql Migrator's default name). */
const MIGRATIONS_TABLE = "effect_sql_migrations"

export const layer = Layer.effect(
  Readiness,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const expected = (yield* Effect.orDie(migrations)).map(([id]) => id)
    const applied = Effect.map(
      sql<{ readonly migration_id: number | string }>`SELECT migration_id FROM ${sql(MIGRATIONS_TABLE)}`,
      (rows) => {
        const ids = new Set(rows.map((r) => Number(r.migration_id)))
        return expected.every((id) => ids.has(id))
      }
    )
    const check: Effect.Effect<StoreReadiness> = sql<{ readonly readOnly: string }>`
      SELECT current_setting('transaction_read_only') AS "readOnly"`.pipe(
      Effect.matchEffect({
        onFailure: () => Effect.succeed<StoreReadiness>({ database: "unreachable", migrations: "unknown" }),
        onSuccess: ([row]) => {
          const database = row?.readOnly === "on" ? "read_only" : "ok"
          return Effect.match(applied, {
            // The table is missing: nothing was ever migrated here.
            onFailure: (): StoreReadiness => ({ database, migrations: "pending" }),
            onSuccess: (all): StoreReadiness => ({ database, migrations: all ? "ok" : "pending" })
          })
        }
      })
    )
    return Readiness.of({ check })
  })
)
