/** MailOutbox on SQL: rows of `mail_messages`. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { MailOutbox, mailRecord } from "../../core/mail/store.ts"
import { mailMessages } from "./tables.ts"

export const layer = Layer.effect(
  MailOutbox,
  Effect.map(SqlClient.SqlClient, (sql) =>
    MailOutbox.of({
      append: (workspaceId, mail) =>
        Effect.tap(mailRecord(workspaceId, mail), (row) =>
          Effect.orDie(sql`INSERT INTO mail_messages ${sql.insert(mailMessages.row(row))}`)),
      list: (workspaceId) =>
        Effect.orDie(
          sql`SELECT * FROM mail_messages WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id DESC`
        ).pipe(
          Effect.map((rs) =>
            rs.map(mailMessages.decode)
          )
        )
    }))
)
