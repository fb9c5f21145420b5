/**
 * LedgerStore on SQL: rows of `ledger_charges`. `sql` runs on the connection of the transaction the
 * fiber is in, so an append inside `Transactor.withTransaction` commits or rolls back with it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { chargeRecords, LedgerStore } from "../../core/billing/store.ts"
import { ledgerCharges } from "./tables.ts"

export const layer = Layer.effect(
  LedgerStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    LedgerStore.of({
      append: (workspaceId, charges, at) =>
        charges.length === 0
          ? Effect.succeed([])
          : Effect.tap(
            chargeRecords(workspaceId, charges, at),
            (rows) => Effect.orDie(sql`INSERT INTO ledger_charges ${sql.insert(rows.map(ledgerCharges.row))}`)
          ),
      list: (workspaceId) =>
        Effect.orDie(
          sql`SELECT * FROM ledger_charges WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id DESC`
        ).pipe(
          Effect.map((rs) => rs.map(ledgerCharges.decode))
        )
    }))
)
