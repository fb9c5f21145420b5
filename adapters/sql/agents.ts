/** AgentStore on SQL: one row of `agents` per workspace, the configurations as jsonb. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { AgentStore } from "../../core/agent/store.ts"
import { agents } from "./tables.ts"

const columns = agents.columns()

export const layer = Layer.effect(
  AgentStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    AgentStore.of({
      get: (workspaceId) =>
        Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM agents WHERE workspace_id = ${workspaceId}`).pipe(
          Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), agents.decode))
        ),
      put: (agent) => {
        const row = agents.row(agent)
        return Effect.orDie(
          sql`INSERT INTO agents ${sql.insert(row)} ON CONFLICT (workspace_id) DO UPDATE SET ${
            sql.update(row, ["workspace_id"])
          }`
        )
      }
    }))
)
