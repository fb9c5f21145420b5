/**
 * The Mailer port: how the core mails a workspace's owner. `layerOutbox`, the default, only keeps
 * the mail in the outbox the operator reads; with SMTP_URL set, adapters/mail/smtp.ts sends it and
 * then keeps it there too.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { Mail, MailRecord } from "./message.ts"
import { MailOutbox } from "./store.ts"

/**
 * The mail was not sent (server unreachable, refused the login, the sender or the recipient). Not a
 * DomainError: the caller decides whether a lost mail fails its use case or is only logged. The
 * message names no credential.
 */
export class MailError extends Schema.TaggedError<MailError>()("MailError", {
  message: Schema.String
}) {}

export interface Mailer {
  /** Sends the mail (or, without SMTP, keeps it) and returns the outbox row. */
  readonly send: (workspaceId: string, mail: Mail) => Effect.Effect<MailRecord, MailError>
}
export const Mailer = Context.GenericTag<Mailer>("core/Mailer")

/** `Mailer.send` from anywhere the Mailer is provided. */
export const sendMail = (workspaceId: string, mail: Mail): Effect.Effect<MailRecord, MailError, Mailer> =>
  Effect.flatMap(Mailer, (mailer) => mailer.send(workspaceId, mail))

/** No mail server: the mail is kept in the outbox only, where the operator reads it. */
export const layerOutbox: Layer.Layer<Mailer, never, MailOutbox> = Layer.effect(
  Mailer,
  Effect.map(MailOutbox, (outbox) => Mailer.of({ send: outbox.append }))
)
