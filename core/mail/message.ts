/** Mail sent to a workspace's owner (receipts, notices), as the operator reads it back. */
import { Schema } from "effect"

export const MailMessage = Schema.Struct({
  id: Schema.String,
  to: Schema.String,
  subject: Schema.String,
  text: Schema.String,
  createdAt: Schema.String
})
export type MailMessage = typeof MailMessage.Type
