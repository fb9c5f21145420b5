/** NumberStore on SQL. A number belongs to one workspace: its primary key says "taken". */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { NumberStore } from "../../core/numbers.ts"
import { isUniqueViolation } from "./rows.ts"
import { numberOwners, numbers } from "./tables.ts"

export const layer = Layer.effect(
  NumberStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    NumberStore.of({
      insert: (workspaceId, number, inboxId) =>
        sql`INSERT INTO numbers ${sql.insert({ ...numbers.row(number), ...numberOwners.row({ workspaceId, inboxId }) })}`.pipe(
          Effect.asVoid,
          Effect.catchAll((e) => (isUniqueViolation(e) ? Effect.fail("taken" as const) : Effect.die(e)))
        ),
      findByE164: (e164) =>
        Effect.orDie(sql`SELECT * FROM numbers WHERE e164 = ${e164}`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map((r) => ({ ...numberOwners.decode(r), number: numbers.decode(r) }))))
        ),
      list: (workspaceId) =>
        Effect.orDie(sql`SELECT * FROM numbers WHERE workspace_id = ${workspaceId} ORDER BY created_at, e164`).pipe(Effect.map((rs) => rs.map(numbers.decode)))
    })
  )
)
