/**
 * The Transactor on SQL: database transactions, and advisory locks that end with them. Its lean
 * outermost transaction, with BEGIN sent ahead of the first statement, is the fast path
 * (adapters/fastPath.ts); with it off every transaction is @effect/sql's.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Context, Effect, Exit, FiberRef, Layer, Option, Scope } from "effect"
import * as Signal from "../../core/events/signal.ts"
import { makeKeyedLock } from "../../core/kernel/keyedLock.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { FastPath } from "../fastPath.ts"
import { leadingOf, type LeadStatement } from "./leading.ts"
import { isSingleConnection } from "./singleConnection.ts"

/** A transaction-scoped advisory lock on `$1`: released by COMMIT or ROLLBACK, never leaked. */
const LOCK = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"

/** The lock with `key` as a literal, only where a statement cannot take parameters (see `lockedFromStart`). */
const lockOf = (key: string) => LOCK.replace("$1", () => literal(key))

/** A string literal safe whatever `standard_conforming_strings` says, as `pg`'s escapeLiteral writes it. */
const literal = (s: string) => {
  const quoted = s.replaceAll("'", "''")
  return s.includes("\\") ? `E'${quoted.replaceAll("\\", "\\\\")}'` : `'${quoted}'`
}

/**
 * The statements both transaction paths send (@effect/sql's defaults, which both clients use): the
 * outermost BEGIN carries the lock in the same simple query, and a savepoint its own.
 */
const begin = (lock: string | undefined) => (lock === undefined ? "BEGIN" : `BEGIN; ${lockOf(lock)}`)

/** The same BEGIN and lock as statements a connection sends ahead of the transaction's first (leading.ts). */
const BEGIN_LEAD: ReadonlyArray<LeadStatement> = [{ text: "BEGIN", values: [] }]
const beginLead = (lock: string | undefined): ReadonlyArray<LeadStatement> =>
  lock === undefined ? BEGIN_LEAD : [...BEGIN_LEAD, { text: LOCK, values: [lock] }]
const COMMIT = "COMMIT"
const ROLLBACK = "ROLLBACK"

export const layer = Layer.effect(
  Transactor,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    /** A connection reserved for a transaction, released when its scope closes (both paths). */
    const reserved = Effect.flatMap(
      Scope.make(),
      (scope) => Effect.map(Scope.extend(sql.reserve, scope), (conn) => [scope, conn] as const)
    )

    /**
     * `sql.withTransaction` whose BEGIN (or SAVEPOINT, nested) carries the lock: the two go as one
     * simple query, with no parameters (which is what lets Postgres take two statements at once),
     * so the lock costs no round trip of its own.
     */
    const lockedFromStart = (key: string) =>
      SqlClient.makeWithTransaction({
        transactionTag: SqlClient.TransactionConnection,
        spanAttributes: [],
        acquireConnection: reserved,
        begin: (conn) => Effect.asVoid(conn.executeUnprepared(begin(key), [], undefined)),
        savepoint: (conn, id) =>
          Effect.asVoid(conn.executeUnprepared(`SAVEPOINT effect_sql_${id}; ${lockOf(key)}`, [], undefined)),
        commit: (conn) => Effect.asVoid(conn.executeUnprepared(COMMIT, [], undefined)),
        rollback: (conn) => Effect.asVoid(conn.executeUnprepared(ROLLBACK, [], undefined)),
        rollbackSavepoint: (conn, id) =>
          Effect.asVoid(conn.executeUnprepared(`ROLLBACK TO SAVEPOINT effect_sql_${id}`, [], undefined))
      })

    /**
     * An outermost transaction while tracing is off: what `makeWithTransaction` does for it (a
     * connection reserved for the transaction, BEGIN, the effect on that connection, COMMIT or
     * ROLLBACK by its exit, the connection released), without its `sql.transaction` span and in
     * fewer fiber steps (docs/architecture.md, "Lean statements"). Savepoints and traced
     * transactions take @effect/sql's path.
     *
     * On Postgres, BEGIN and the lock travel with the transaction's first statement (leading.ts):
     * one round trip less. A transaction that ran no statement then sent nothing, and ends nothing.
     */
    const lean = <A, E, R>(self: Effect.Effect<A, E, R>, lock: string | undefined) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(reserved, ([scope, conn]) => {
          const leading = leadingOf(conn)
          leading?.lead(beginLead(lock))
          const started = leading === undefined ? conn.executeUnprepared(begin(lock), [], undefined) : Effect.void
          return started.pipe(
            Effect.zipRight(restore(Effect.provideService(self, SqlClient.TransactionConnection, [conn, 0]))),
            Effect.exit,
            Effect.flatMap((exit) =>
              (leading?.cancel()
                ? Effect.void
                : Effect.orDie(conn.executeUnprepared(Exit.isSuccess(exit) ? COMMIT : ROLLBACK, [], undefined))).pipe(
                  Effect.ensuring(Scope.close(scope, exit)),
                  Effect.zipRight(exit)
                )
            )
          )
        })
      )

    const lockNow = (key: string) => Effect.asVoid(Effect.orDie(sql.unsafe(LOCK, [key])))
    const signal = yield* Signal.OutboxSignal
    const fast = yield* FastPath
    const keyed = isSingleConnection(sql) ? makeKeyedLock() : null
    const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>, lock?: string) =>
      Effect.withFiberRuntime<A, E | SqlError.SqlError, R>((fiber) =>
        fast && Option.isNone(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)) &&
          !fiber.getFiberRef(FiberRef.currentTracerEnabled)
          ? lean(self, lock)
          : lock === undefined
          ? sql.withTransaction(self)
          : lockedFromStart(lock)(self)
      ).pipe(
        Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die)
      ) as Effect.Effect<A, E, R>
    return Signal.announcingCommits(signal, {
      // PGlite: one process, one connection, so a lock in the process; Postgres: other processes too.
      // On Postgres the lock is taken at once: a transaction's lock otherwise travels with its first
      // statement (leading.ts), which may come after the outside call.
      exclusive: (key) => (self) =>
        keyed === null ? withTransaction(Effect.zipRight(lockNow(key), self)) : keyed(key)(self),
      withTransaction,
      lock: lockNow
    })
  })
)
