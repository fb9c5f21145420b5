import { Context, Effect } from "effect"
import { Ids } from "../kernel/ids.ts"
import { nowIso } from "../kernel/time.ts"
import type { Mail, MailRecord } from "./message.ts"

/** The mail outbox port: every mail the Mailer handled, kept for the operator (admin `mail` route). */
export interface MailOutbox {
  /** Keeps the mail as a row of the workspace and returns it. */
  readonly append: (workspaceId: string, mail: Mail) => Effect.Effect<MailRecord>
  /** The workspace's mail, newest first (`createdAt`, then id). */
  readonly list: (workspaceId: string) => Effect.Effect<ReadonlyArray<MailRecord>>
}
export const MailOutbox = Context.GenericTag<MailOutbox>("core/MailOutbox")

/** The row an `append` writes: the mail with a new id and now (Clock), for every adapter alike. */
export const mailRecord = (workspaceId: string, mail: Mail): Effect.Effect<MailRecord> =>
  Effect.gen(function*() {
    const { uuid } = yield* Ids
    return { id: uuid(), workspaceId, to: mail.to, subject: mail.subject, text: mail.text, createdAt: yield* nowIso }
  })
