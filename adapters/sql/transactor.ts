/** The Transactor on SQL: database transactions, and advisory locks that end with them. */
import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Layer, Scope } from "effect"
import * as Signal from "../../core/events/signal.ts"
import { Transactor } from "../../core/transactor.ts"

/**
 * A transaction-scoped advisory lock: released by COMMIT or ROLLBACK, never leaked. `key` goes in
 * as a literal only where a statement cannot take parameters (see `lockedFromStart`).
 */
const lockOf = (key: string) => `SELECT pg_advisory_xact_lock(hashtextextended(${literal(key)}, 0))`

/** A string literal safe whatever `standard_conforming_strings` says, as `pg`'s escapeLiteral writes it. */
const literal = (s: string) => {
  const quoted = s.replaceAll("'", "''")
  return s.includes("\\") ? `E'${quoted.replaceAll("\\", "\\\\")}'` : `'${quoted}'`
}

export const layer = Layer.effect(
  Transactor,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * `sql.withTransaction` whose BEGIN (or SAVEPOINT, nested) carries the lock: the two go as one
     * simple query, with no parameters (which is what lets Postgres take two statements at once),
     * so the lock costs no round trip of its own.
     */
    const lockedFromStart = (key: string) =>
      SqlClient.makeWithTransaction({
        transactionTag: SqlClient.TransactionConnection,
        spanAttributes: [],
        acquireConnection: Effect.flatMap(Scope.make(), (scope) => Effect.map(Scope.extend(sql.reserve, scope), (conn) => [scope, conn] as const)),
        begin: (conn) => Effect.asVoid(conn.executeUnprepared(`BEGIN; ${lockOf(key)}`, [], undefined)),
        savepoint: (conn, id) => Effect.asVoid(conn.executeUnprepared(`SAVEPOINT effect_sql_${id}; ${lockOf(key)}`, [], undefined)),
        commit: (conn) => Effect.asVoid(conn.executeUnprepared("COMMIT", [], undefined)),
        rollback: (conn) => Effect.asVoid(conn.executeUnprepared("ROLLBACK", [], undefined)),
        rollbackSavepoint: (conn, id) => Effect.asVoid(conn.executeUnprepared(`ROLLBACK TO SAVEPOINT effect_sql_${id}`, [], undefined))
      })

    const signal = yield* Signal.OutboxSignal
    return Signal.announcingCommits(signal, {
      withTransaction: (self, lock) =>
        (lock === undefined ? sql.withTransaction(self) : lockedFromStart(lock)(self)).pipe(
          Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die)
        ) as typeof self,
      lock: (key) => Effect.orDie(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`).pipe(Effect.asVoid)
    })
  })
)
