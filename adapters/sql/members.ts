/** MemberStore on SQL: one row of `members` per person and workspace. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { MemberStore } from "../../core/members/store.ts"
import { members } from "./tables.ts"

const columns = members.columns()

export const layer = Layer.effect(
  MemberStore,
  Effect.map(SqlClient.SqlClient, (sql) =>
    MemberStore.of({
      insert: (m) =>
        Effect.orDie(
          sql`INSERT INTO members ${
            sql.insert(members.row(m))
          } ON CONFLICT (workspace_id, email) DO NOTHING RETURNING id`
        ).pipe(Effect.map((rs) => rs.length === 1)),
      get: (id) =>
        Effect.orDie(sql`SELECT ${sql.literal(columns)} FROM members WHERE id = ${id}`).pipe(
          Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), members.decode))
        ),
      list: (workspaceId) =>
        Effect.orDie(
          sql`SELECT ${sql.literal(columns)} FROM members WHERE workspace_id = ${workspaceId} ORDER BY created_at, id`
        ).pipe(Effect.map((rs) => rs.map(members.decode))),
      findByEmail: (email) =>
        Effect.orDie(
          sql`SELECT ${sql.literal(columns)} FROM members WHERE email = ${email} ORDER BY created_at, id`
        ).pipe(Effect.map((rs) => rs.map(members.decode))),
      update: (m) =>
        Effect.orDie(
          sql`UPDATE members SET email = ${m.email}, name = ${m.name}, role = ${m.role}, phone = ${m.phone}
              WHERE id = ${m.id} AND NOT EXISTS (
                SELECT 1 FROM members o WHERE o.workspace_id = ${m.workspaceId} AND o.email = ${m.email} AND o.id <> ${m.id}
              ) RETURNING id`
        ).pipe(Effect.map((rs) => rs.length === 1)),
      remove: (id) =>
        Effect.orDie(sql`DELETE FROM members WHERE id = ${id} RETURNING id`).pipe(Effect.map((rs) => rs.length === 1))
    }))
)
