/**
 * The Mailer over SMTP (nodemailer), used when SMTP_URL is set. A mail the server accepted is then
 * kept in the outbox as well, so the operator's `mail` route shows what was sent whichever way mail
 * goes; a mail the server did not take is a MailError and is not kept (the outbox lists mail that
 * left, and the caller, who gets the error, decides what a lost mail means).
 */
import { Effect, Layer, Redacted } from "effect"
import nodemailer from "nodemailer"
import { displayText, displayUrl } from "../../core/kernel/display.ts"
import { Mailer, MailError } from "../../core/mail/mailer.ts"
import { MailOutbox } from "../../core/mail/store.ts"

export interface SmtpConfig {
  /** `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://...:465` (TLS from the start); nodemailer's query options apply. */
  readonly url: Redacted.Redacted<string>
  /** The From header, e.g. `Switchboard <no-reply@example.com>`. */
  readonly from: string
}

/** Bounds on a server that accepts the connection and then stalls (nodemailer waits minutes by default). */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }

/** The URL's user and password, raw and decoded: scrubbed from any server or library message we pass on. */
const secretsOf = (url: URL): Array<string> =>
  [url.username, url.password].flatMap((s) => (s === "" ? [] : [s, decodeURIComponent(s)])).filter((s) => s.length >= 3)

/**
 * What is wrong with SMTP_URL, or undefined; shown without credentials. ServerConfig checks it
 * before anything is written, and the layer again for callers that build it themselves.
 */
export const smtpUrlProblem = (text: string): string | undefined => {
  // Not echoed when it does not parse: without a scheme nothing marks where a credential in it ends.
  if (!URL.canParse(text)) return "must be a URL: smtp://user:pass@host:587 or smtps://user:pass@host:465"
  const u = new URL(text)
  return (u.protocol === "smtp:" || u.protocol === "smtps:") && u.hostname !== ""
    ? undefined
    : `must be smtp://host or smtps://host, got ${displayUrl(u.href)}`
}

/** SMTP_URL parsed, or a MailError that says what is wrong with it. */
export const parseSmtpUrl = (url: Redacted.Redacted<string>): Effect.Effect<URL, MailError> =>
  Effect.suspend(() => {
    const problem = smtpUrlProblem(Redacted.value(url))
    return problem === undefined
      ? Effect.succeed(new URL(Redacted.value(url)))
      : Effect.fail(new MailError({ message: `SMTP_URL ${problem}` }))
  })

export const layer = (config: SmtpConfig): Layer.Layer<Mailer, MailError, MailOutbox> =>
  Layer.scoped(
    Mailer,
    Effect.gen(function*() {
      const url = yield* parseSmtpUrl(config.url)
      const outbox = yield* MailOutbox
      // The bounds go in as query options, so SMTP_URL's own (`?socketTimeout=`, `?tls.servername=`) win.
      const withBounds = new URL(url)
      for (const [key, ms] of Object.entries(TIMEOUTS)) {
        if (!withBounds.searchParams.has(key)) withBounds.searchParams.set(key, String(ms))
      }
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => nodemailer.createTransport(withBounds.href)),
        (t) => Effect.sync(() => t.close())
      )
      const server = `${url.protocol}//${url.host}`
      const secrets = secretsOf(url)
      const scrub = (text: string) => secrets.reduce((t, s) => t.split(s).join("***"), text)
      return Mailer.of({
        send: (workspaceId, mail) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from: config.from, to: mail.to, subject: mail.subject, text: mail.text }),
            // Only the text crosses over, scrubbed: the error object carries the SMTP command and
            // the server's reply, which are not ours to log.
            catch: (e) =>
              new MailError({
                message: `Mail to ${displayText(mail.to)} was not sent through ${displayUrl(server)}: ${
                  displayText(scrub(e instanceof Error ? e.message : String(e)), 300)
                }`
              })
          }).pipe(Effect.zipRight(outbox.append(workspaceId, mail)))
      })
    })
  )
