/**
 * Composes the application from configuration: database (Postgres or embedded PGlite), migrations,
 * stores, the outside world (carrier, media, webhooks, DNS), core services and the HTTP app.
 * node.ts and deno.ts only add a server around it.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { writeSync } from "node:fs"
import * as FsBlobs from "../../adapters/blobs/filesystem.ts"
import * as SimulatedCarrier from "../../adapters/carrier/simulated.ts"
import * as SimulatedInventory from "../../adapters/carrier/simulatedInventory.ts"
import * as SimulatedRegistry from "../../adapters/carrier/simulatedRegistry.ts"
import * as SimulatedVoice from "../../adapters/carrier/simulatedVoice.ts"
import * as Telnyx from "../../adapters/carrier/telnyx.ts"
import * as TelnyxCallbacks from "../../adapters/carrier/telnyxCallbacks.ts"
import * as TelnyxInventory from "../../adapters/carrier/telnyxInventory.ts"
import * as TelnyxRegistry from "../../adapters/carrier/telnyxRegistry.ts"
import * as TelnyxVoiceAdapter from "../../adapters/carrier/telnyxVoiceAdapter.ts"
import { HttpAppLive } from "../../adapters/http/app.ts"
import * as Smtp from "../../adapters/mail/smtp.ts"
import * as MediaFetcher from "../../adapters/media/fetcher.ts"
import * as SignedUrls from "../../adapters/media/signedUrls.ts"
import * as Dns from "../../adapters/net/dns.ts"
import * as OutboundHttp from "../../adapters/net/http.ts"
import * as LedgerPayments from "../../adapters/payments/ledger.ts"
import * as SimulatedPayments from "../../adapters/payments/simulated.ts"
import * as StripePayments from "../../adapters/payments/stripe.ts"
import * as DataDirLock from "../../adapters/pglite/dataDirLock.ts"
import * as Pglite from "../../adapters/pglite/PgliteClient.ts"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import * as RateLimit from "../../adapters/ratelimit/memory.ts"
import * as SchedulingWorker from "../../adapters/scheduling/worker.ts"
import * as KeyRevocations from "../../adapters/sql/keyRevocations.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as OutboxNotices from "../../adapters/sql/outboxNotices.ts"
import * as SqlRateLimit from "../../adapters/sql/ratelimit.ts"
import * as Secrets from "../../adapters/sql/secrets.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"
import * as Hmac from "../../adapters/webhooks/hmac.ts"
import * as Sender from "../../adapters/webhooks/sender.ts"
import * as WebhookWorker from "../../adapters/webhooks/worker.ts"
import * as BillingWorker from "../../core/billing/worker.ts"
import { layerOutboundGuard } from "../../core/egress/guard.ts"
import { CoreLive } from "../../core/layer.ts"
import { layerOutbox as MailerOutbox } from "../../core/mail/mailer.ts"
import { FIRST_OWNER } from "../../core/members/model.ts"
import { ConsoleOrigin, Sessions } from "../../core/members/sessions.ts"
import * as TextingGate from "../../core/registration/gate.ts"
import * as RegistryPoller from "../../core/registration/poller.ts"
import { Workspaces } from "../../core/workspaces/service.ts"
import type { ServerConfig } from "./config.ts"
import { step } from "./lifecycle.ts"

/**
 * Postgres when DATABASE_URL is set, otherwise PGlite under DATA_DIR, held by this process alone
 * (the lock is taken before PGlite opens and released after it closes); migrated before use.
 */
export const SqlLive = (config: ServerConfig) =>
  Option.match(config.databaseUrl, {
    onSome: (url) =>
      step(
        "Database: Postgres connected",
        Postgres.layer({
          url,
          maxConnections: 20,
          preparedStatements: config.databasePreparedStatements,
          pipeline: config.databasePipeline,
          statementTimeoutMs: config.databaseStatementTimeoutMs
        })
      ),
    onNone: () =>
      step(
        `Database: embedded PGlite opened at ${config.dataDir}/pglite`,
        Pglite.layer({ dataDir: `${config.dataDir}/pglite` }).pipe(Layer.provide(DataDirLock.layer(config.dataDir)))
      )
  })

/** The stores, cursor codec and media URLs over a SqlClient: migrated, with secrets sealed. */
export const StoresOn = (config: ServerConfig) =>
  Layer.mergeAll(
    SqlStores.layer,
    SqlStores.CursorCodecLive,
    Layer.unwrapEffect(
      Effect.map(SqlStores.ServerSecrets, (s) => SignedUrls.layer({ baseUrl: publicBaseUrl(config), secret: s.media }))
    )
  ).pipe(
    Layer.provide(SecretsLive(config)),
    Layer.provide(Migrate.layer),
    // Only an API-only replica on Postgres has workers elsewhere to wake; a worker here wakes in-process.
    Layer.provide(Layer.succeed(SqlStores.OutboxNotifies, Option.isSome(config.databaseUrl) && !config.webhookWorker))
  )

export const StoresLive = (config: ServerConfig) => StoresOn(config).pipe(Layer.provideMerge(SqlLive(config)))

/** The sealer of secrets and the server secrets, keyed from SECRETS_KEY or DATA_DIR/secrets.key (and SECRETS_KEY_PREVIOUS while changing it). */
export const SecretsLive = (config: ServerConfig) => {
  const value = (o: Option.Option<Redacted.Redacted<string>>) => Option.getOrUndefined(Option.map(o, Redacted.value))
  return step(
    "Secrets loaded",
    Layer.unwrapEffect(
      Effect.zipWith(
        Secrets.loadKey(value(config.secretsKey), `${config.dataDir}/secrets.key`),
        Secrets.loadPreviousKey(value(config.secretsKeyPrevious)),
        Secrets.layer
      )
    )
  )
}

export const publicBaseUrl = (config: ServerConfig) =>
  Option.getOrElse(config.publicBaseUrl, () => `http://localhost:${config.port}`)

/**
 * The carrier: messaging, the number inventory (the simulator's reads the NumberStore), voice and
 * the carrier's webhooks (Telnyx's; the simulator sends none).
 * CARRIER=telnyx's credentials and Call Control connection are there: ServerConfig checked them.
 */
export const CarrierLive = (config: ServerConfig) => {
  if (config.carrier === "simulated") {
    return Layer.mergeAll(
      SimulatedCarrier.layer,
      SimulatedInventory.layer,
      SimulatedRegistry.layer,
      SimulatedVoice.layer
    )
  }
  const { apiKey, messagingProfileId, publicKey, baseUrl, connectionId } = config.telnyx
  const telnyx = {
    apiKey: Option.getOrThrow(apiKey),
    messagingProfileId: Option.getOrThrow(messagingProfileId),
    // Voice: numbers are attached to this Call Control connection, whose webhooks carry the calls.
    connectionId: Option.getOrThrow(connectionId),
    ...(Option.isSome(baseUrl) ? { baseUrl: baseUrl.value } : {})
  }
  // Live filings go to Telnyx 10DLC; mock-mode filings and the test helpers to the simulator.
  const registry = TelnyxRegistry.layer(telnyx, { webhookUrl: `${publicBaseUrl(config)}/v1/carrier/telnyx` })
  // Its webhooks (POST /v1/carrier/telnyx), verified with the account's public key.
  const callbacks = TelnyxCallbacks.layer({ publicKey: Option.getOrThrow(publicKey) })
  return Layer.mergeAll(
    Telnyx.layer(telnyx),
    TelnyxInventory.layer(telnyx),
    registry,
    SimulatedRegistry.layerMock,
    TelnyxVoiceAdapter.layer(telnyx),
    callbacks
  )
}

/**
 * Who collects payments (PAYMENTS): the simulator by default with the simulated carrier, the ledger
 * (nothing charged) by default otherwise, or Stripe, whose secret key and webhook signing secret
 * ServerConfig checked are there.
 */
export const PaymentsLive = (config: ServerConfig) => {
  if (config.payments === "simulated") return SimulatedPayments.layer
  if (config.payments === "ledger") return LedgerPayments.layer
  const { apiBase, secretKey, webhookSecret } = config.stripe
  return StripePayments.layer({
    secretKey: Option.getOrThrow(secretKey),
    webhookSecret: Option.getOrThrow(webhookSecret),
    ...(Option.isSome(apiBase) ? { apiBase: apiBase.value } : {})
  })
}

/**
 * Mail over SMTP when SMTP_URL is set (ServerConfig refused a bad one, shown without its credentials),
 * otherwise kept in the outbox only; either way the admin `mail` route lists it.
 */
export const MailerLive = (config: ServerConfig) =>
  Option.match(config.smtpUrl, {
    onSome: (url) => Smtp.layer({ url, from: config.mailFrom }).pipe(Layer.orDie),
    onNone: () => MailerOutbox
  })

/** The outside world the core reaches out to: DNS for the URL guard, webhooks, media, the carrier, mail. */
export const OutboundLive = (config: ServerConfig) => {
  const guard = Layer.merge(
    layerOutboundGuard(config.outboundAllowPrivate).pipe(Layer.provide(Dns.layer)),
    OutboundHttp.layer(config.outboundAllowPrivate)
  )
  return Layer.mergeAll(
    Sender.layer,
    Hmac.layer,
    MediaFetcher.layer,
    FsBlobs.layer(`${config.dataDir}/blobs`),
    CarrierLive(config),
    PaymentsLive(config),
    MailerLive(config)
  ).pipe(
    Layer.provideMerge(guard)
  )
}

/** Postgres may serve several processes: they share one limit there. PGlite has one process, and its buckets in memory. */
export const RateLimitLive = (config: ServerConfig) =>
  Option.isSome(config.databaseUrl)
    ? SqlRateLimit.layer(config.rateLimitPerMinute)
    : RateLimit.layer(config.rateLimitPerMinute)

export const ServicesLive = (config: ServerConfig) =>
  CoreLive.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        RateLimitLive(config),
        OutboundLive(config),
        TextingGate.layer({ preApprovedCampaign: config.preApprovedCampaign }),
        Layer.succeed(ConsoleOrigin, { baseUrl: publicBaseUrl(config) })
      )
    ),
    Layer.provideMerge(StoresLive(config))
  )

/**
 * Writes all of `text` to `fd` before returning: a short write is continued, and a pipe that is
 * full for now (EAGAIN, stdout as a non-blocking pipe) is tried again until it takes the rest.
 */
const writeAllSync = (fd: number, text: string) => {
  let rest = Buffer.from(text)
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(fd, rest))
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e
    }
  }
}

/**
 * First boot on an empty store prints one test key, once (only its hash is kept), and the next
 * steps: the admin token the admin API and CLI need, seeding a number, where the docs are.
 * run.ts builds it once the server listens: a start that fails before (a port taken since the
 * check) creates no workspace and prints no key, so the next start is still a first boot.
 */
export const BootstrapLive = (config: ServerConfig) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      // Written to stdout synchronously inside the bootstrap's transaction, before its commit
      // (Workspaces.bootstrap): the log's batched writes could still be in memory at a kill -9.
      const sessions = yield* Sessions
      yield* Effect.flatMap(Workspaces, (w) =>
        w.bootstrap(({ key, workspace }) =>
          Effect.flatMap(sessions.issueLink(FIRST_OWNER), (link) =>
            Effect.sync(() =>
              writeAllSync(
                1,
                [
                  "",
                  `Created "${workspace.name}" (${workspace.id}) on first boot.`,
                  "Its test API key, shown once (only a hash is stored):",
                  "",
                  `  ${key.token}`,
                  "",
                  `Sign in to the console as its owner, ${FIRST_OWNER}, with this link (once, within 15 minutes):`,
                  "",
                  `  ${link}`,
                  "",
                  ...nextSteps(config, workspace.id)
                ].join("\n") + "\n"
              )
            ))
        ))
    })
  )

/** The URL the admin CLI talks to when SWITCHBOARD_URL is unset (apps/cli/main.ts). */
const CLI_DEFAULT_URL = "http://localhost:8080"

const nextSteps = (config: ServerConfig, workspaceId: string) => {
  const baseUrl = publicBaseUrl(config)
  // The CLI's commands name this server when the CLI's default would miss it (another PORT, a public URL).
  const admin = baseUrl === CLI_DEFAULT_URL ? "npm run admin --" : `SWITCHBOARD_URL=${baseUrl} npm run admin --`
  return [
    "Next steps:",
    `  - Try it: curl -H "Authorization: Bearer <the key>" ${baseUrl}/v1/api/contacts`,
    Option.isSome(config.adminToken)
      ? `  - The admin API and CLI take your ADMIN_TOKEN: ${admin} --help`
      : `  - Set ADMIN_TOKEN (a long random secret) and restart to use the admin API and CLI: ${admin} --help`,
    `  - Seed a number to send from: ADMIN_TOKEN=... ${admin} number add ${workspaceId} +14155550100`,
    `  - Keys lost? ${admin} key list <workspaceId>, then key create / key revoke`,
    `  - A new sign-in link: ask at ${baseUrl}/app; without SMTP_URL it waits in the mail outbox (${admin} mail ${workspaceId})`,
    `  - Docs: docs/operating.md; the API reference is ${baseUrl}/docs (OpenAPI: ${baseUrl}/v1/api/openapi.json)`,
    ""
  ]
}

/**
 * The HTTP app with everything it needs, ready for a server (Node) or a web handler (Deno), and the
 * services BootstrapLive needs once the server listens.
 */
export const AppLive = (config: ServerConfig) =>
  Layer.mergeAll(
    HttpAppLive({
      adminToken: config.adminToken,
      // Test helpers drive the simulator; with a real carrier they are off unless asked for.
      testHelpers: Option.getOrElse(config.testHelpers, () => config.carrier === "simulated"),
      mcpAllowedOrigins: config.mcpAllowedOrigins,
      trustProxy: config.trustProxy
    }),
    Layer.effectContext(Effect.context<Workspaces | Sessions>()),
    // Other processes on the same Postgres revoke keys too; PGlite has this process alone.
    Option.isSome(config.databaseUrl) ? KeyRevocations.layer : Layer.empty,
    // Other processes on the same Postgres commit events too; PGlite's commits all wake it in-process.
    Option.isSome(config.databaseUrl) && config.webhookWorker ? OutboxNotices.layer : Layer.empty,
    config.webhookWorker
      ? step(
        "Webhook worker started",
        WebhookWorker.layer({
          pollMs: config.webhookPollMs,
          concurrency: config.webhookConcurrency,
          // The embedded database is this process's alone (DataDirLock): a lease in it is a dead process's.
          soleWorker: Option.isNone(config.databaseUrl)
        })
      )
      : Layer.effectDiscard(Effect.logInfo("Webhook worker disabled (WEBHOOK_WORKER=false)")),
    config.schedulingWorker
      ? step(
        "Scheduling worker started",
        SchedulingWorker.layer({
          pollMs: config.schedulingPollMs,
          inFlightMs: config.schedulingInFlightMs,
          soleWorker: Option.isNone(config.databaseUrl)
        })
      )
      : Layer.effectDiscard(Effect.logInfo("Scheduling worker disabled (SCHEDULING_WORKER=false)")),
    step("Registry poller started", RegistryPoller.layer({ pollMs: config.registryPollMs })),
    step(
      "Billing worker started",
      BillingWorker.layer({
        pollMs: config.billingPollMs,
        leaseMs: config.billingLeaseMs,
        soleWorker: Option.isNone(config.databaseUrl)
      })
    )
  ).pipe(Layer.provide(ServicesLive(config)))
