/** NumberStore on SQL. A number belongs to one workspace: its primary key says "taken". */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { type NumberRecord, NumberStore } from "../../core/numbers/model.ts"
import { PREPARED } from "./prepared.ts"
import { isUniqueViolation } from "./rows.ts"
import { numberOwners, numbers } from "./tables.ts"

const toRecord = (row: unknown): NumberRecord => ({ ...numberOwners.decode(row), number: numbers.decode(row) })
/** A number with its owner: every column, named (a prepared statement's). */
const recordColumns = `${numbers.columns()}, ${numberOwners.columns()}`

export const layer = Layer.effect(
  NumberStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    NumberStore.of({
      insert: (workspaceId, number, inboxId, ordered = true) =>
        sql`INSERT INTO numbers ${
          sql.insert({
            ...numbers.row(number),
            ...numberOwners.row({ workspaceId, inboxId, ordered, campaignAssignment: null })
          })
        }`.pipe(
          Effect.asVoid,
          Effect.catchAll((e) => (isUniqueViolation(e) ? Effect.fail("taken" as const) : Effect.die(e)))
        ),
      findByE164: (e164) =>
        Effect.orDie(
          sql`${sql.literal(PREPARED)} SELECT ${sql.literal(recordColumns)} FROM numbers WHERE e164 = ${e164}`
        ).pipe(Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(toRecord)))),
      setRouting: (workspaceId, e164, routing) =>
        Effect.orDie(
          sql`UPDATE numbers SET voice_mode = ${routing.voiceMode}, agent_id = ${routing.agentId}, forward_to = ${routing.forwardTo}
            WHERE e164 = ${e164} AND workspace_id = ${workspaceId} RETURNING *`
        ).pipe(Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(numbers.decode)))),
      taken: (e164s) =>
        e164s.length === 0
          ? Effect.succeed(new Set<string>())
          : Effect.orDie(sql<{ e164: string }>`SELECT e164 FROM numbers WHERE ${sql.in("e164", e164s)}`).pipe(
            Effect.map((rs) => new Set(rs.map((r) => r.e164)))
          ),
      markOrdered: (workspaceId, e164) =>
        Effect.orDie(
          sql`UPDATE numbers SET ordered = true
              WHERE e164 = ${e164} AND workspace_id = ${workspaceId} AND NOT ordered RETURNING e164`
        ).pipe(Effect.map((rs) => rs.length > 0)),
      setCampaignAssignment: (e164, assignment) =>
        Effect.asVoid(Effect.orDie(sql`UPDATE numbers SET campaign_assignment = ${assignment} WHERE e164 = ${e164}`)),
      remove: (workspaceId, e164) =>
        Effect.orDie(sql`DELETE FROM numbers WHERE e164 = ${e164} AND workspace_id = ${workspaceId} RETURNING *`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(numbers.decode)))
        ),
      list: (workspaceId) =>
        Effect.orDie(sql`SELECT * FROM numbers WHERE workspace_id = ${workspaceId} ORDER BY created_at, e164`).pipe(
          Effect.map((rs) => rs.map(numbers.decode))
        ),
      listActive: (workspaceId) =>
        Effect.orDie(
          sql`${sql.literal(PREPARED)} SELECT ${
            sql.literal(recordColumns)
          } FROM numbers WHERE workspace_id = ${workspaceId} AND status = 'active' ORDER BY created_at, e164`
        ).pipe(
          Effect.map((rs) => rs.map(toRecord))
        )
    }))
)
