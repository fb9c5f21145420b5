/** In-memory MailOutbox. */
import { Effect, Layer } from "effect"
import { MailOutbox, mailRecord } from "../../core/mail/store.ts"
import { MemoryDb, newestFirst } from "./db.ts"

export const layer = Layer.effect(
  MailOutbox,
  Effect.map(MemoryDb, (db) =>
    MailOutbox.of({
      append: (workspaceId, mail) =>
        Effect.tap(mailRecord(workspaceId, mail), (row) => Effect.sync(() => void db.state.mail.push(row))),
      list: (workspaceId) =>
        Effect.sync(() => db.state.mail.filter((m) => m.workspaceId === workspaceId).sort(newestFirst))
    }))
)
