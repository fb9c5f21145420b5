/**
 * The SMTP Mailer (adapters/mail/smtp.ts) against a real SMTP server (`smtp-server`) on 127.0.0.1:
 * the mail arrives with From, To, Subject and text, over plain SMTP with AUTH and over implicit TLS
 * (smtps), and is then kept in the outbox; a refused login, a refused recipient and an unreachable
 * server are a MailError the caller can catch, with nothing kept; no credential of SMTP_URL reaches
 * an error, its printed cause or a log line.
 */
import { Cause, ConfigProvider, Effect, Exit, Layer, Logger, Redacted } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Smtp from "../../adapters/mail/smtp.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { ServerConfig } from "../../apps/server/config.ts"
import { MailerLive } from "../../apps/server/main.ts"
import { type MailError, sendMail } from "../../core/mail/mailer.ts"
import { MailOutbox } from "../../core/mail/store.ts"

const USER = "mailer-user"
const PASS = "s3cret-p@ss:word"
const FROM = "Switchboard <no-reply@switchboard.test>"
const WS = "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22"

interface Received {
  readonly mailFrom: string
  readonly rcptTo: Array<string>
  readonly raw: string
}

/** An SMTP server on an ephemeral port that wants USER/PASS and refuses mail to `refused@...`. */
const startServer = async (options: SMTPServerOptions) => {
  const received: Array<Received> = []
  const server = new SMTPServer({
    ...options,
    authMethods: ["PLAIN", "LOGIN"],
    logger: false,
    onAuth: (auth, _session, cb) =>
      auth.username === USER && auth.password === PASS
        ? cb(null, { user: USER })
        : cb(new Error("Invalid username or password")),
    onRcptTo: (address, _session, cb) =>
      address.address.startsWith("refused@")
        ? cb(Object.assign(new Error("Mailbox unavailable"), { responseCode: 550 }))
        : cb(),
    onData: (stream, session, cb) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => {
        received.push({
          mailFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8")
        })
        cb()
      })
    }
  })
  // A client that hangs up mid-handshake (the untrusted-certificate test) is an "error" event of the test server.
  server.on("error", () => {})
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.server.address() as AddressInfo).port
  return { server, received, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

type Server = Awaited<ReturnType<typeof startServer>>

const secret = (url: string) => Redacted.make(url)
const plainUrl = (port: number, pass = PASS) => `smtp://${USER}:${encodeURIComponent(pass)}@127.0.0.1:${port}`
/** smtp-server's built-in certificate is self-signed: trusted here through SMTP_URL's own option. */
const tlsUrl = (port: number) =>
  `smtps://${USER}:${encodeURIComponent(PASS)}@127.0.0.1:${port}/?tls.rejectUnauthorized=false`

/** Sends through the SMTP Mailer over a fresh memory outbox; the exit, the outbox after it, and every log line. */
const send = async (
  url: string,
  mail = { to: "owner@acme.example", subject: "Your registration receipt", text: "Filed.\nEIN ****6789" }
) => {
  const logs: Array<string> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message, cause }) => void logs.push(`${String(message)} ${Cause.pretty(cause)}`))
  )
  const program = Effect.gen(function*() {
    const exit = yield* Effect.exit(
      sendMail(WS, mail).pipe(Effect.tapErrorCause((c) => Effect.logError("mail failed", c)))
    )
    return { exit, kept: yield* (yield* MailOutbox).list(WS) }
  })
  const layer = Smtp.layer({ url: secret(url), from: FROM }).pipe(Layer.provideMerge(MemoryStores.layer))
  const result = await Effect.runPromise(Effect.scoped(program.pipe(Effect.provide(Layer.merge(layer, logger)))))
  return { ...result, logs }
}

const failure = (exit: Exit.Exit<unknown, MailError>): MailError => {
  if (Exit.isSuccess(exit)) throw new Error("expected the send to fail")
  const error = Cause.failureOption(exit.cause)
  if (error._tag === "None") throw new Error(`expected a MailError, got ${Cause.pretty(exit.cause)}`)
  return error.value
}

/** Neither the user nor the password, raw or percent-encoded, appears in any of these. */
const expectNoCredentials = (...texts: Array<string>) => {
  for (const text of texts) for (const s of [USER, PASS, encodeURIComponent(PASS)]) expect(text).not.toContain(s)
}

describe("SMTP Mailer, plain SMTP with AUTH", () => {
  let smtp: Server
  beforeAll(async () => {
    smtp = await startServer({ secure: false, disabledCommands: ["STARTTLS"], allowInsecureAuth: true })
  })
  afterAll(() => smtp.close())

  it("delivers From, To, Subject and text, then keeps the mail in the outbox", async () => {
    const { exit, kept, logs } = await send(plainUrl(smtp.port))
    expect(Exit.isSuccess(exit)).toBe(true)
    const row = Exit.isSuccess(exit) ? exit.value : null
    expect(kept).toEqual([row])
    expect(row).toMatchObject({
      workspaceId: WS,
      to: "owner@acme.example",
      subject: "Your registration receipt",
      text: "Filed.\nEIN ****6789"
    })
    expect(smtp.received).toHaveLength(1)
    const [got] = smtp.received
    expect(got!.mailFrom).toBe("no-reply@switchboard.test")
    expect(got!.rcptTo).toEqual(["owner@acme.example"])
    expect(got!.raw).toMatch(/^From: Switchboard <no-reply@switchboard\.test>\r$/m)
    expect(got!.raw).toMatch(/^To: owner@acme\.example\r$/m)
    expect(got!.raw).toMatch(/^Subject: Your registration receipt\r$/m)
    expect(got!.raw).toContain("\r\n\r\nFiled.\r\nEIN ****6789")
    expect(logs).toEqual([])
  })

  it("a refused login is a MailError naming the server without credentials, and nothing is kept", async () => {
    const before = smtp.received.length
    const { exit, kept, logs } = await send(plainUrl(smtp.port, "wrong-password-xyz"))
    const error = failure(exit)
    expect(error._tag).toBe("MailError")
    expect(error.message).toContain(`was not sent through smtp://127.0.0.1:${smtp.port}`)
    expect(error.message).toMatch(/auth|login|invalid/i)
    expect(kept).toEqual([])
    expect(smtp.received.length).toBe(before)
    expect(logs).toHaveLength(1)
    expectNoCredentials(
      error.message,
      String(error),
      JSON.stringify(error),
      Cause.pretty(Exit.isFailure(exit) ? exit.cause : Cause.empty),
      ...logs
    )
    for (const text of [error.message, ...logs]) expect(text).not.toContain("wrong-password-xyz")
  })

  it("a refused recipient is a MailError, and nothing is kept", async () => {
    const { exit, kept } = await send(plainUrl(smtp.port), { to: "refused@acme.example", subject: "s", text: "t" })
    const error = failure(exit)
    expect(error.message).toContain("Mail to refused@acme.example was not sent")
    expect(error.message).toMatch(/550|unavailable/i)
    expect(kept).toEqual([])
    expectNoCredentials(error.message)
  })

  it("the caller can catch the MailError and go on", async () => {
    const outcome = await Effect.runPromise(
      sendMail(WS, { to: "refused@acme.example", subject: "s", text: "t" }).pipe(
        Effect.as("sent"),
        Effect.catchTag("MailError", () => Effect.succeed("logged and went on")),
        Effect.provide(
          Smtp.layer({ url: secret(plainUrl(smtp.port)), from: FROM }).pipe(Layer.provide(MemoryStores.layer))
        ),
        Effect.scoped
      )
    )
    expect(outcome).toBe("logged and went on")
  })
})

describe("SMTP Mailer, implicit TLS (smtps)", () => {
  let smtp: Server
  beforeAll(async () => {
    smtp = await startServer({ secure: true })
  })
  afterAll(() => smtp.close())

  it("delivers over TLS", async () => {
    const { exit, kept } = await send(tlsUrl(smtp.port))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(kept).toHaveLength(1)
    expect(smtp.received.map((r) => r.rcptTo)).toEqual([["owner@acme.example"]])
    expect(smtp.received[0]!.raw).toMatch(/^Subject: Your registration receipt\r$/m)
  })

  it("a certificate the client does not trust is a MailError, not a crash", async () => {
    const { exit, kept } = await send(`smtps://${USER}:${encodeURIComponent(PASS)}@127.0.0.1:${smtp.port}`)
    const error = failure(exit)
    expect(error.message).toContain(`was not sent through smtps://127.0.0.1:${smtp.port}`)
    expect(kept).toEqual([])
    expectNoCredentials(error.message)
  })
})

describe("SMTP Mailer, no server", () => {
  it("an unreachable server is a MailError without credentials, and nothing is kept", async () => {
    const gone = await startServer({ secure: false })
    const port = gone.port
    await gone.close()
    const { exit, kept, logs } = await send(plainUrl(port))
    const error = failure(exit)
    expect(error.message).toContain(`was not sent through smtp://127.0.0.1:${port}`)
    expect(error.message).toMatch(/ECONNREFUSED|connect/i)
    expect(kept).toEqual([])
    expectNoCredentials(error.message, ...logs)
  })

  it.each([
    ["not a URL", `smtp//${USER}:${PASS}@`],
    ["another scheme", `https://${USER}:${encodeURIComponent(PASS)}@mail.example.com`],
    ["no host", `smtp://${USER}:${encodeURIComponent(PASS)}@`]
  ])("SMTP_URL that is %s fails the layer with a MailError that shows no credentials", async (_, url) => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(Layer.build(Smtp.layer({ url: secret(url), from: FROM }).pipe(Layer.provide(MemoryStores.layer))))
    )
    const error = failure(exit)
    expect(error.message).toMatch(/^SMTP_URL /)
    expectNoCredentials(error.message)
  })
})

describe("server wiring (apps/server: SMTP_URL, MAIL_FROM)", () => {
  let smtp: Server
  beforeAll(async () => {
    smtp = await startServer({ secure: false, disabledCommands: ["STARTTLS"], allowInsecureAuth: true })
  })
  afterAll(() => smtp.close())

  const configOf = (env: Record<string, string>) =>
    Effect.runPromise(Effect.withConfigProvider(ServerConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
  const sendWith = async (env: Record<string, string>) => {
    const mailer = MailerLive(await configOf(env)).pipe(Layer.provideMerge(MemoryStores.layer))
    return Effect.runPromise(
      Effect.gen(function*() {
        yield* sendMail(WS, { to: "owner@acme.example", subject: "Wired", text: "t" })
        return yield* (yield* MailOutbox).list(WS)
      }).pipe(Effect.provide(mailer), Effect.scoped)
    )
  }

  it("SMTP_URL set: sent over SMTP from MAIL_FROM (default Switchboard <no-reply@localhost>) and kept; the URL is redacted in the config", async () => {
    const config = await configOf({ SMTP_URL: plainUrl(smtp.port) })
    expect(config.mailFrom).toBe("Switchboard <no-reply@localhost>")
    expectNoCredentials(String(config.smtpUrl), JSON.stringify(config.smtpUrl))
    const before = smtp.received.length
    expect(await sendWith({ SMTP_URL: plainUrl(smtp.port) })).toHaveLength(1)
    expect(smtp.received.length).toBe(before + 1)
    expect(smtp.received.at(-1)!.raw).toMatch(/^From: Switchboard <no-reply@localhost>\r$/m)
    await sendWith({ SMTP_URL: plainUrl(smtp.port), MAIL_FROM: "Ops <ops@switchboard.test>" })
    expect(smtp.received.at(-1)!.mailFrom).toBe("ops@switchboard.test")
  })

  it("SMTP_URL unset: the mail is only kept in the outbox", async () => {
    const before = smtp.received.length
    const kept = await sendWith({})
    expect(kept.map((m) => m.subject)).toEqual(["Wired"])
    expect(smtp.received.length).toBe(before)
  })
})
