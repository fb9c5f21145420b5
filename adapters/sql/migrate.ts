import { Migrator, SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option } from "effect"
import m0001 from "./migrations/0001_foundation.ts"
import m0002 from "./migrations/0002_webhooks.ts"
import m0003 from "./migrations/0003_search_statistics.ts"
import m0004 from "./migrations/0004_idempotency.ts"
import m0005 from "./migrations/0005_conversations.ts"
import m0006 from "./migrations/0006_search_statistics_activities.ts"
import m0007 from "./migrations/0007_search_separators.ts"
import m0008 from "./migrations/0008_webhook_previous_secrets.ts"
import m0009 from "./migrations/0009_idempotency_owner.ts"
import m0010 from "./migrations/0010_ledger.ts"
import m0011 from "./migrations/0011_mail.ts"
import m0012 from "./migrations/0012_texting.ts"
import m0013 from "./migrations/0013_agent.ts"
import m0014 from "./migrations/0014_call_sessions.ts"
import m0015 from "./migrations/0015_call_session_conversations.ts"
import m0016 from "./migrations/0016_rate_limits.ts"
import m0017 from "./migrations/0017_rate_limit_leases.ts"
import m0018 from "./migrations/0018_test_numbers.ts"
import m0019 from "./migrations/0019_call_session_voicemail.ts"
import m0020 from "./migrations/0020_campaign_assignment.ts"
import m0021 from "./migrations/0021_call_session_followers.ts"
import m0022 from "./migrations/0022_call_session_call_id.ts"
import m0023 from "./migrations/0023_opt_outs.ts"
import m0024 from "./migrations/0024_scheduling.ts"
import m0025 from "./migrations/0025_text_sends_order.ts"
import m0026 from "./migrations/0026_members.ts"
import m0027 from "./migrations/0027_sessions.ts"
import m0028 from "./migrations/0028_webhook_deliveries_unsettled.ts"
import m0029 from "./migrations/0029_call_session_ring.ts"
import m0030 from "./migrations/0030_billing_cycle.ts"
import m0031 from "./migrations/0031_payment_customers.ts"
import m0032 from "./migrations/0032_registry_lease.ts"
import m0033 from "./migrations/0033_search_without_workers.ts"
import m0034 from "./migrations/0034_search_windows.ts"

/**
 * A migration without the statement time limit (adapters/postgres/PgClient.ts): an index built
 * over a large table may take longer. SET LOCAL ends with the migrations' transaction.
 */
export const unbounded = <E>(migration: Effect.Effect<void, E, SqlClient.SqlClient>) =>
  Effect.zipRight(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SET LOCAL statement_timeout = 0`), migration)

/**
 * Static imports (not a directory scan) so the same migrations run on Node, Deno and PGlite.
 * On Postgres the migrator locks its table, so several processes may boot at once.
 */
const all = {
  "0001_foundation": m0001,
  "0002_webhooks": m0002,
  "0003_search_statistics": m0003,
  "0004_idempotency": m0004,
  "0005_conversations": m0005,
  "0006_search_statistics_activities": m0006,
  "0007_search_separators": m0007,
  "0008_webhook_previous_secrets": m0008,
  "0009_idempotency_owner": m0009,
  "0010_ledger": m0010,
  "0011_mail": m0011,
  "0012_texting": m0012,
  "0013_agent": m0013,
  "0014_call_sessions": m0014,
  "0015_call_session_conversations": m0015,
  "0016_rate_limits": m0016,
  "0017_rate_limit_leases": m0017,
  "0018_test_numbers": m0018,
  "0019_call_session_voicemail": m0019,
  "0020_campaign_assignment": m0020,
  "0021_call_session_followers": m0021,
  "0022_call_session_call_id": m0022,
  "0023_opt_outs": m0023,
  "0024_scheduling": m0024,
  "0025_text_sends_order": m0025,
  "0026_members": m0026,
  "0027_sessions": m0027,
  "0028_webhook_deliveries_unsettled": m0028,
  "0029_call_session_ring": m0029,
  "0030_billing_cycle": m0030,
  "0031_payment_customers": m0031,
  "0032_registry_lease": m0032,
  "0033_search_without_workers": m0033,
  "0034_search_windows": m0034
}

export const migrations = Migrator.fromRecord(
  Object.fromEntries(Object.entries(all).map(([name, migration]) => [name, unbounded(migration)]))
)

export const run = Migrator.make({})({ loader: migrations })

/**
 * Processes booting at once on an empty Postgres take turns: the Migrator's own lock is on its
 * table, which they would otherwise race to create (one failing its boot). The turn is a session
 * advisory lock on a connection of its own, since the Migrator checks for its table with a
 * statement that may fail, which a surrounding transaction would not survive. PGlite has one process.
 */
const MIGRATIONS_LOCK = "SELECT pg_advisory_lock(hashtextextended('switchboard:migrations', 0))"
const MIGRATIONS_UNLOCK = "SELECT pg_advisory_unlock(hashtextextended('switchboard:migrations', 0))"
/** Waiting for another process's migrations is not bound by the statement time limit either. */
const UNBOUNDED = "SET statement_timeout = 0"
const BOUNDED = "RESET statement_timeout"
const serialized = Effect.flatMap(Effect.serviceOption(PgClient.PgClient), (pg) =>
  Option.isNone(pg)
    ? run
    : Effect.scoped(
      Effect.flatMap(pg.value.reserve, (conn) =>
        // The limit comes back whatever fails after it was lifted: the connection returns to the pool.
        Effect.acquireUseRelease(
          conn.executeUnprepared(UNBOUNDED, [], undefined),
          () =>
            Effect.acquireUseRelease(
              conn.executeUnprepared(MIGRATIONS_LOCK, [], undefined),
              () => run,
              () => Effect.ignore(conn.executeUnprepared(MIGRATIONS_UNLOCK, [], undefined))
            ),
          () => Effect.ignore(conn.executeUnprepared(BOUNDED, [], undefined))
        ))
    ))

/** Migrates, logging how many migrations this boot applied and how long they took. */
export const layer = Layer.effectDiscard(
  serialized.pipe(
    Effect.timed,
    Effect.flatMap(([took, applied]) =>
      Effect.logInfo(`Migrations: ${applied.length} applied (${Math.round(Duration.toMillis(took))} ms)`)
    )
  )
)
