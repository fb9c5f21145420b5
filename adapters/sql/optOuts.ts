/** OptOutStore on SQL: one row of `opt_outs` per workspace and phone. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { OptOutStore } from "../../core/optouts/store.ts"
import { optOuts } from "./tables.ts"

const columns = optOuts.columns()

export const layer = Layer.effect(
  OptOutStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    OptOutStore.of({
      get: (workspaceId, phone) =>
        Effect.orDie(
          sql`SELECT ${sql.literal(columns)} FROM opt_outs WHERE workspace_id = ${workspaceId} AND phone = ${phone}`
        ).pipe(Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), optOuts.decode))),
      insert: (record) =>
        Effect.orDie(
          sql`INSERT INTO opt_outs ${
            sql.insert(optOuts.row(record))
          } ON CONFLICT (workspace_id, phone) DO NOTHING RETURNING phone`
        ).pipe(Effect.map((rs) => rs.length === 1)),
      remove: (workspaceId, phone) =>
        Effect.orDie(
          sql`DELETE FROM opt_outs WHERE workspace_id = ${workspaceId} AND phone = ${phone} RETURNING phone`
        ).pipe(Effect.map((rs) => rs.length === 1)),
      list: ({ after, limit, phone, workspaceId }) =>
        Effect.orDie(
          sql`SELECT ${sql.literal(columns)} FROM opt_outs WHERE workspace_id = ${workspaceId}${
            phone === null ? sql`` : sql` AND phone = ${phone}`
          }${
            after === null ? sql`` : sql` AND (created_at, phone) < (${after.createdAt}, ${after.phone})`
          } ORDER BY created_at DESC, phone DESC LIMIT ${limit}`
        ).pipe(Effect.map((rs) => rs.map(optOuts.decode)))
    }))
)
