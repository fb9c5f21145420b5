/**
 * Every setting of CONTRACT.md "Running it", read once from the environment. Reading it checks every
 * value and every combination (CARRIER=telnyx's credentials, PAYMENTS=stripe's), so a start that
 * cannot succeed stops before anything is written (run.ts).
 */
import { Config, ConfigError, Either, Option, Redacted } from "effect"
import { DEFAULT_TIMEOUT_MS as CARRIER_TIMEOUT_MS } from "../../adapters/carrier/telnyxClient.ts"
import { DEFAULT_TIMEOUTS } from "../../adapters/http/platform.ts"
import { smtpUrlProblem } from "../../adapters/mail/smtp.ts"
import { DEFAULT_POLL_MS as SCHEDULING_POLL_MS } from "../../adapters/scheduling/worker.ts"
import { keyProblem } from "../../adapters/sql/secrets.ts"
import { DEFAULT_CONCURRENCY, DEFAULT_POLL_MS } from "../../adapters/webhooks/worker.ts"
import { ATTEMPT_LEASE_MS } from "../../core/billing/cycle.ts"
import { DEFAULT_POLL_MS as BILLING_POLL_MS } from "../../core/billing/worker.ts"
import { IN_FLIGHT_MS } from "../../core/scheduling/engine.ts"
import { LOG_FORMATS, LOG_LEVELS } from "./logging.ts"

const positiveMs = (name: string) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a positive integer (milliseconds)", validation: (n) => n > 0 })
  )

/** `self` checked by `problem` (what is wrong with a value, or undefined), failing with the variable's name. */
const checked = <A>(self: Config.Config<A>, problem: (a: A) => string | undefined) =>
  Config.mapOrFail(self, (a) => {
    const found = problem(a)
    return found === undefined ? Either.right(a) : Either.left(ConfigError.InvalidData([], found))
  })

/** A secret checked as text (its name on the error), then redacted. */
const secret = (name: string, problem: (text: string) => string | undefined) =>
  checked(Config.string(name), problem).pipe(Config.map(Redacted.make))

const urlWith = (protocols: ReadonlyArray<string>, example: string) => (text: string) =>
  URL.canParse(text) && protocols.includes(new URL(text).protocol) ? undefined : `must be a URL such as ${example}`

const httpUrl = urlWith(["http:", "https:"], "https://api.example.com")

/** PUBLIC_BASE_URL: an origin the routes hang off (`/v1/...`, `/app`), so no path, query or fragment. */
const originProblem = (text: string) => {
  const problem = httpUrl(text)
  if (problem !== undefined) return problem
  const u = new URL(text)
  return u.pathname === "/" && u.search === "" && u.hash === ""
    ? undefined
    : `must be an origin without a path, such as https://switchboard.example.com`
}

/** Which settings a choice needs (`CARRIER=telnyx needs ...`), checked once all are read. */
const needs = (choice: string, settings: ReadonlyArray<readonly [string, Option.Option<unknown>]>) => {
  const missing = settings.filter(([, v]) => Option.isNone(v)).map(([k]) => k)
  return missing.length === 0 ? undefined : `${choice} needs ${missing.join(", ")}`
}

const settings = Config.all({
  /** 0 takes any free port. */
  port: Config.integer("PORT").pipe(
    Config.validate({ message: "must be a port number (0 to 65535)", validation: (n) => n >= 0 && n <= 65_535 }),
    Config.withDefault(8080)
  ),
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  databaseUrl: Config.option(
    secret("DATABASE_URL", urlWith(["postgres:", "postgresql:"], "postgres://user:pass@host/db"))
  ),
  /**
   * The speed work that reaches into library internals (adapters/fastPath.ts): our Node server and
   * router, lean, prepared and pipelined statements. False serves and queries the libraries' way
   * (after an upgrade that breaks a patch) and turns the two settings below off with it.
   */
  fastPath: Config.boolean("FAST_PATH").pipe(Config.withDefault(true)),
  /** Postgres: prepare the hot path's statements once per connection (adapters/postgres/PgClient.ts); off behind a pooler that cannot keep them, and with FAST_PATH=false. */
  databasePreparedStatements: Config.boolean("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault(true)),
  /** Postgres: pipeline the hot reads outside a transaction (adapters/postgres/pipeline.ts); needs prepared statements on; off with FAST_PATH=false. */
  databasePipeline: Config.boolean("DATABASE_PIPELINE").pipe(Config.withDefault(true)),
  /** Postgres: the longest a statement may run, sent as each connection's statement_timeout; 0 sends none (a pooler that refuses it). */
  databaseStatementTimeoutMs: Config.integer("DATABASE_STATEMENT_TIMEOUT_MS").pipe(
    Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }),
    Config.withDefault(30_000)
  ),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./.data")),
  adminToken: Config.option(Config.redacted("ADMIN_TOKEN")),
  /** Seals the database's secrets at rest (webhook, cursor and media URL signing; 64 hex digits); unset: DATA_DIR/secrets.key, made on first boot. */
  secretsKey: Config.option(secret("SECRETS_KEY", keyProblem)),
  /** The key being replaced: its secrets are sealed again under SECRETS_KEY at boot. */
  secretsKeyPrevious: Config.option(secret("SECRETS_KEY_PREVIOUS", keyProblem)),
  /** Written without its trailing slash: it is the base of the URLs handed out. */
  publicBaseUrl: Config.option(
    checked(Config.string("PUBLIC_BASE_URL"), originProblem).pipe(Config.map((url) => new URL(url).origin))
  ),
  carrier: Config.literal("simulated", "telnyx")("CARRIER").pipe(Config.withDefault("simulated" as const)),
  /** Who collects payments (main.ts PaymentsLive): unset, `simulated` with CARRIER=simulated and `ledger` otherwise (below). */
  payments: Config.option(Config.literal("simulated", "ledger", "stripe")("PAYMENTS")),
  stripe: Config.all({
    secretKey: Config.option(Config.redacted("STRIPE_SECRET_KEY")),
    webhookSecret: Config.option(Config.redacted("STRIPE_WEBHOOK_SECRET")),
    /** Another Stripe API host (a fake Stripe in tests). */
    apiBase: Config.option(checked(Config.string("STRIPE_API_BASE"), httpUrl))
  }),
  testHelpers: Config.option(Config.boolean("TEST_HELPERS")),
  telnyx: Config.all({
    apiKey: Config.option(Config.redacted("TELNYX_API_KEY")),
    publicKey: Config.option(Config.redacted("TELNYX_PUBLIC_KEY")),
    messagingProfileId: Config.option(Config.string("TELNYX_MESSAGING_PROFILE_ID")),
    /** The Call Control connection numbers we buy are attached to; unset: attached by hand later. */
    connectionId: Config.option(Config.string("TELNYX_CONNECTION_ID")),
    baseUrl: Config.option(checked(Config.string("TELNYX_BASE_URL"), httpUrl))
  }),
  /** Sends mail over SMTP (`smtp://user:pass@host:587`, `smtps://...`); unset: mail is only kept in the outbox. */
  smtpUrl: Config.option(secret("SMTP_URL", smtpUrlProblem)),
  mailFrom: Config.string("MAIL_FROM").pipe(Config.withDefault("Switchboard <no-reply@localhost>")),
  /** Registrations in carrier review text on the service's pre-approved campaign (SPEC "Messages"); only for a carrier account that has one. */
  preApprovedCampaign: Config.boolean("PREAPPROVED_CAMPAIGN").pipe(Config.withDefault(false)),
  /** How often the registry poller asks about registrations in review (several processes may poll: each workspace is moved under its lock). */
  registryPollMs: positiveMs("REGISTRY_POLL_MS").pipe(Config.withDefault(60_000)),
  /** Browser origins (`https://app.example.com`, comma-separated) allowed to use `POST /v1/mcp`; requests with any other `Origin` answer 403. */
  mcpAllowedOrigins: Config.array(Config.string(), "MCP_ALLOWED_ORIGINS").pipe(
    Config.withDefault([] as ReadonlyArray<string>)
  ),
  outboundAllowPrivate: Config.boolean("OUTBOUND_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  /** Run the webhook outbox worker in this process (turn off for API-only replicas). */
  webhookWorker: Config.boolean("WEBHOOK_WORKER").pipe(Config.withDefault(true)),
  /** How often an idle worker looks for work this process was not told about (other processes' events, retries). */
  webhookPollMs: positiveMs("WEBHOOK_POLL_MS").pipe(Config.withDefault(DEFAULT_POLL_MS)),
  /** Most webhook attempts one process keeps in flight (each a request to a receiver, waiting for its answer). */
  webhookConcurrency: Config.integer("WEBHOOK_CONCURRENCY").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(DEFAULT_CONCURRENCY)
  ),
  /** Send scheduled messages and broadcasts from this process (turn off for API-only replicas). */
  schedulingWorker: Config.boolean("SCHEDULING_WORKER").pipe(Config.withDefault(true)),
  /** How often an idle scheduling worker looks for sends falling due. */
  schedulingPollMs: positiveMs("SCHEDULING_POLL_MS").pipe(Config.withDefault(SCHEDULING_POLL_MS)),
  /** How long a live send may stay marked in flight before another process gives it up as `unknown_outcome`: longer than a carrier request may take. */
  schedulingInFlightMs: Config.integer("SCHEDULING_IN_FLIGHT_MS").pipe(
    Config.validate({
      message: `must be more than a carrier request's timeout (${CARRIER_TIMEOUT_MS} ms)`,
      validation: (n) => n > CARRIER_TIMEOUT_MS
    }),
    Config.withDefault(IN_FLIGHT_MS)
  ),
  /** How often the billing worker looks for renewals, retries and charges left by a process that died. */
  billingPollMs: positiveMs("BILLING_POLL_MS").pipe(Config.withDefault(BILLING_POLL_MS)),
  /** How long a charge attempt may stay unanswered before another process asks the provider again with its key. */
  billingLeaseMs: positiveMs("BILLING_LEASE_MS").pipe(Config.withDefault(ATTEMPT_LEASE_MS)),
  rateLimitPerMinute: Config.integer("RATE_LIMIT_PER_MINUTE").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(600)
  ),
  /** How many reverse proxies to trust in X-Forwarded-For for the per-address limit (adapters/http/clientAddress.ts); 0: the header is ignored. */
  trustProxy: Config.integer("TRUST_PROXY").pipe(
    Config.validate({
      message: "must be the number of trusted proxies in front of the server (0: none)",
      validation: (n) => n >= 0
    }),
    Config.withDefault(0)
  ),
  /** How long a client may take to send its request: all three on Node; on Deno only the body's deadline (requestMs). */
  timeouts: Config.all({
    requestMs: positiveMs("REQUEST_TIMEOUT_MS").pipe(Config.withDefault(DEFAULT_TIMEOUTS.requestMs)),
    headersMs: Config.option(positiveMs("HEADERS_TIMEOUT_MS")),
    keepAliveMs: positiveMs("KEEP_ALIVE_TIMEOUT_MS").pipe(Config.withDefault(DEFAULT_TIMEOUTS.keepAliveMs))
  }).pipe(
    // Unset, the headers' bound follows a shorter request bound down (Node refuses a longer one).
    Config.map(({ headersMs, ...rest }) => ({
      ...rest,
      headersMs: Option.getOrElse(headersMs, () => Math.min(DEFAULT_TIMEOUTS.headersMs, rest.requestMs))
    })),
    Config.validate({
      message: "HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS",
      validation: (t) => t.headersMs <= t.requestMs
    })
  ),
  /** OpenTelemetry export by OTLP/HTTP (adapters/telemetry/otlp.ts): off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  otel: Config.all({
    endpoint: Config.option(checked(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT"), httpUrl)),
    serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("switchboard")),
    metricExportIntervalMs: positiveMs("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(60_000))
  }),
  /** How log lines are written (logging.ts); unset: `pretty` on a terminal, else `json` (one object a line, for collectors). */
  logFormat: Config.option(Config.literal(...LOG_FORMATS)("LOG_FORMAT")),
  /** The least severe level written; `none` turns logging off. */
  logLevel: Config.literal(...LOG_LEVELS)("LOG_LEVEL").pipe(Config.withDefault("info" as const))
})

/**
 * The settings with PAYMENTS' default applied, and what each choice needs checked: a missing
 * credential stops the boot naming it, so main.ts may take it as present.
 */
export const ServerConfig = settings.pipe(
  Config.map((c) => ({
    ...c,
    payments: Option.getOrElse(c.payments, () => c.carrier === "simulated" ? "simulated" as const : "ledger" as const)
  })),
  (resolved) =>
    checked(resolved, (c) => {
      const problems = [
        c.carrier === "telnyx"
          ? needs("CARRIER=telnyx", [
            ["TELNYX_API_KEY", c.telnyx.apiKey],
            ["TELNYX_PUBLIC_KEY", c.telnyx.publicKey],
            ["TELNYX_MESSAGING_PROFILE_ID", c.telnyx.messagingProfileId],
            // Voice: numbers are attached to this Call Control connection, whose webhooks carry the calls.
            ["TELNYX_CONNECTION_ID", c.telnyx.connectionId]
          ])
          : undefined,
        c.payments === "stripe"
          ? needs("PAYMENTS=stripe", [["STRIPE_SECRET_KEY", c.stripe.secretKey], [
            "STRIPE_WEBHOOK_SECRET",
            c.stripe.webhookSecret
          ]])
          : undefined
      ].filter((p) => p !== undefined)
      return problems.length === 0 ? undefined : problems.join("; ")
    })
)
export type ServerConfig = Config.Config.Success<typeof ServerConfig>
