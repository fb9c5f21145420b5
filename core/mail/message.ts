/** Mail sent to a workspace's owner (receipts, notices), as the operator reads it back. */
import { Schema } from "effect"
import { projection } from "../kernel/records.ts"

/** A mail as the outbox keeps it: what was sent (or, without SMTP, would have been), to whom, when. */
export const MailRecord = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  to: Schema.String,
  subject: Schema.String,
  text: Schema.String,
  createdAt: Schema.String
})
export type MailRecord = typeof MailRecord.Type

/** The operator's view (`GET /v1/admin/workspaces/{id}/mail`). */
export const MailMessage = MailRecord.omit("workspaceId")
export type MailMessage = typeof MailMessage.Type
export const mailMessage = projection(MailMessage)

/** What a caller mails: the Mailer adds the sender, the outbox the id and the time. */
export const Mail = MailRecord.pick("to", "subject", "text")
export type Mail = typeof Mail.Type
