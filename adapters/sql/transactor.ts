/** The Transactor on SQL: database transactions, and advisory locks that end with them. */
import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Layer } from "effect"
import * as Signal from "../../core/events/signal.ts"
import { Transactor } from "../../core/transactor.ts"

export const layer = Layer.effect(
  Transactor,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const signal = yield* Signal.OutboxSignal
    return Signal.announcingCommits(signal, {
      withTransaction: (self) =>
        sql.withTransaction(self).pipe(
          Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die)
        ) as typeof self,
      // A transaction-scoped advisory lock: released by COMMIT or ROLLBACK, never leaked.
      lock: (key) => Effect.orDie(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`).pipe(Effect.asVoid)
    })
  })
)
