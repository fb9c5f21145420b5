/** The HTTP app in-process over the in-memory adapters, as a fetch-style handler. */
import { HttpServer } from "@effect/platform"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Option, Redacted } from "effect"
import * as MemoryBlobs from "../../adapters/blobs/memory.ts"
import * as SimulatedCarrier from "../../adapters/carrier/simulated.ts"
import * as SimulatedInventory from "../../adapters/carrier/simulatedInventory.ts"
import * as SimulatedRegistry from "../../adapters/carrier/simulatedRegistry.ts"
import * as SimulatedVoice from "../../adapters/carrier/simulatedVoice.ts"
import * as TelnyxCallbacks from "../../adapters/carrier/telnyxCallbacks.ts"
import * as FastPath from "../../adapters/fastPath.ts"
import { HttpAppLive, toWebHandler } from "../../adapters/http/app.ts"
import { withBodyLimit } from "../../adapters/http/web.ts"
import * as MediaFetcher from "../../adapters/media/fetcher.ts"
import * as SignedUrls from "../../adapters/media/signedUrls.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as Dns from "../../adapters/net/dns.ts"
import * as OutboundHttp from "../../adapters/net/http.ts"
import * as SimulatedPayments from "../../adapters/payments/simulated.ts"
import * as RateLimit from "../../adapters/ratelimit/memory.ts"
import * as SchedulingWorker from "../../adapters/scheduling/worker.ts"
import * as Sender from "../../adapters/webhooks/sender.ts"
import * as WebhookWorker from "../../adapters/webhooks/worker.ts"
import type { PaymentCustomerStore } from "../../core/billing/customers.ts"
import type { HostedPayments } from "../../core/billing/hosted.ts"
import type { Payments } from "../../core/billing/payments.ts"
import * as BillingWorker from "../../core/billing/worker.ts"
import type { Voice } from "../../core/calls/voice.ts"
import { layerOutboundGuard, type OutboundGuard } from "../../core/egress/guard.ts"
import { layerCursorCodec } from "../../core/kernel/pagination.ts"
import { CoreLive } from "../../core/layer.ts"
import { layerOutbox as MailerOutbox, type Mailer } from "../../core/mail/mailer.ts"
import type { MailOutbox } from "../../core/mail/store.ts"
import { ConsoleOrigin } from "../../core/members/sessions.ts"
import type { Carrier } from "../../core/messaging/carrier.ts"
import type { NumberInventory } from "../../core/numbers/inventory.ts"
import type { NumberStore } from "../../core/numbers/model.ts"
import * as TextingGate from "../../core/registration/gate.ts"
import type { MockRegistry, Registry, RegistrySimulator } from "../../core/registration/registry.ts"
import type { RegistrationStore } from "../../core/registration/store.ts"
import type { WebhookSender } from "../../core/webhooks/store.ts"
import { Workspaces } from "../../core/workspaces/service.ts"
import type { WorkspaceStore } from "../../core/workspaces/store.ts"

export const ADMIN_TOKEN = "admin-secret-for-tests"

export interface AdminKey {
  readonly id: string
  readonly kind: "live" | "test"
  readonly scopes: ReadonlyArray<string>
  readonly name: string | null
  readonly token: string
  readonly createdAt: string
}

export interface TestAppOptions {
  readonly rateLimitPerMinute?: number
  readonly adminToken?: string | null
  readonly stores?: Layer.Layer<any, any, never>
  /** The URL guard, the outbound HTTP client and the webhook sender; default: real DNS, private addresses allowed (local receivers). */
  readonly outbound?: Layer.Layer<OutboundGuard | OutboundHttp.OutboundHttp | WebhookSender, never, never>
  /** Run the webhook outbox worker in the background. */
  readonly webhookWorker?: boolean
  /** The worker's idle poll (default 20 ms). */
  readonly webhookPollMs?: number
  /** The messaging carrier; default: the simulator. */
  readonly carrier?: Layer.Layer<Carrier, never, never>
  /** The carrier's number inventory; default: the simulator's, over the app's NumberStore. */
  readonly inventory?: Layer.Layer<NumberInventory, never, NumberStore>
  /** The texting gate for live keys; default: the stored registration, no pre-approved campaign, mock registrations count (the simulated carrier). */
  readonly registration?: Layer.Layer<TextingGate.RegistrationGate, never, RegistrationStore>
  /** The 10DLC registries; default: the simulator for live and mock filings. */
  readonly registry?: Layer.Layer<Registry | MockRegistry | RegistrySimulator, never, NumberStore>
  /** The voice carrier; default: the simulator. */
  readonly voice?: Layer.Layer<Voice, never, never>
  /** The Mailer; default: the outbox only (a real SMTP server: adapters/mail/smtp.ts). */
  readonly mailer?: Layer.Layer<Mailer, never, MailOutbox>
  /** Who collects payments; default: the simulator (adapters/payments/simulated.ts). */
  readonly payments?:
    | Layer.Layer<Payments | HostedPayments, never, PaymentCustomerStore | WorkspaceStore>
    | Layer.Layer<Payments, never, never>
  /** Serve the test helpers (default true). */
  readonly testHelpers?: boolean
  /** Telnyx's Ed25519 public key: serves its webhooks at /v1/carrier/telnyx (default: none, the route is 404). */
  readonly telnyxPublicKey?: string
  /** TRUST_PROXY: proxies trusted in X-Forwarded-For (default 0). */
  readonly trustProxy?: number
  /** The loggers of HTTP requests (e.g. one that records the access log); default: warnings and errors only, so tests stay quiet. */
  readonly logger?: Layer.Layer<never>
  /** Run the billing worker (renewals, retries, pending charges), polling every 20 ms; default off. */
  readonly billingWorker?: boolean
  /** Run the scheduling worker (scheduled messages and broadcasts), polling every 20 ms; default off. */
  readonly schedulingWorker?: boolean
  /** SCHEDULING_IN_FLIGHT_MS: how long the worker marks a live send in flight; default the engine's. */
  readonly schedulingInFlightMs?: number
  /** FAST_PATH (adapters/fastPath.ts): false serves through HttpApiBuilder and runs plain SQL statements; default true. */
  readonly fastPath?: boolean
  /** PUBLIC_BASE_URL: the console's origin and where sign-in links point; default http://test.local. */
  readonly publicBaseUrl?: string
}

/** Media in memory, fetched through the guard, signed for http://test.local. */
export const testMedia = Layer.mergeAll(
  MemoryBlobs.layer,
  MediaFetcher.layer,
  SignedUrls.layer({ baseUrl: "http://test.local", secret: crypto.getRandomValues(new Uint8Array(32)) })
)

export const defaultOutbound = (allowPrivate = true) =>
  Layer.merge(layerOutboundGuard(allowPrivate).pipe(Layer.provide(Dns.layer)), Sender.layer).pipe(
    Layer.provideMerge(OutboundHttp.layer(allowPrivate))
  )

export const makeTestApp = async (options: TestAppOptions = {}) => {
  const base = Layer.mergeAll(
    CoreLive,
    RateLimit.layer(options.rateLimitPerMinute ?? 100_000),
    // Tracing off, as the server runs without an OTLP endpoint (adapters/telemetry/otlp.ts), so SQL
    // statements and transactions take the lean path the server takes (adapters/sql/leanStatements.ts).
    Layer.setTracerEnabled(false)
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        testMedia,
        options.carrier ?? SimulatedCarrier.layer,
        options.inventory ?? SimulatedInventory.layer,
        options.registration ?? TextingGate.layer({ preApprovedCampaign: false }),
        options.registry ?? SimulatedRegistry.layer,
        options.voice ?? SimulatedVoice.layer,
        // A payments adapter given replaces the simulator's Payments (the later layer's service wins).
        Layer.mergeAll(SimulatedPayments.layer, ...(options.payments === undefined ? [] : [options.payments])),
        Layer.succeed(ConsoleOrigin, { baseUrl: options.publicBaseUrl ?? "http://test.local" }),
        options.mailer ?? MailerOutbox,
        options.telnyxPublicKey === undefined
          ? Layer.empty
          : TelnyxCallbacks.layer({ publicKey: Redacted.make(options.telnyxPublicKey) })
      ).pipe(
        Layer.provideMerge(options.outbound ?? defaultOutbound())
      )
    ),
    Layer.provideMerge(layerCursorCodec(crypto.getRandomValues(new Uint8Array(32)))),
    Layer.provideMerge(options.stores ?? MemoryStores.layer)
  )
  const adminToken = options.adminToken === null
    ? Option.none()
    : Option.some(Redacted.make(options.adminToken ?? ADMIN_TOKEN))
  // Read by the SQL clients and transactor as the stores are built, and by the router below.
  const fastPath = FastPath.layer(options.fastPath ?? true)
  const withWorkers = Layer.mergeAll(
    options.webhookWorker ? WebhookWorker.layer({ pollMs: options.webhookPollMs ?? 20 }) : Layer.empty,
    options.schedulingWorker
      ? SchedulingWorker.layer({
        pollMs: 20,
        ...(options.schedulingInFlightMs === undefined ? {} : { inFlightMs: options.schedulingInFlightMs })
      })
      : Layer.empty,
    options.billingWorker ? BillingWorker.layer({ pollMs: 20 }) : Layer.empty
  ).pipe(Layer.provideMerge(base))
  const runtime = ManagedRuntime.make(withWorkers.pipe(Layer.provide(fastPath)))
  const context = await runtime.runtime()
  const { handler: raw, dispose } = toWebHandler(
    Layer.mergeAll(
      HttpAppLive({
        adminToken,
        testHelpers: options.testHelpers ?? true,
        trustProxy: options.trustProxy ?? 0
      }),
      HttpServer.layerContext,
      options.logger ?? Logger.minimumLogLevel(LogLevel.Warning),
      Layer.setTracerEnabled(false)
    ).pipe(
      Layer.provide(Layer.succeedContext(context.context)),
      Layer.provideMerge(fastPath)
    )
  )
  const handler = withBodyLimit(raw)
  const fetch = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers)
    let body = init.body
    if (init.json !== undefined) {
      body = JSON.stringify(init.json)
      if (!headers.has("content-type")) headers.set("content-type", "application/json")
    }
    return handler(new Request(`http://test.local${path}`, { ...init, headers, body: body ?? null }))
  }
  const bootstrap = await runtime.runPromise(Effect.flatMap(Workspaces, (w) => w.bootstrap()))
  /** A request to the admin API, with the admin token unless `init` sends its own Authorization. */
  const admin = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers)
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${options.adminToken ?? ADMIN_TOKEN}`)
    return fetch(`/v1/admin${path}`, { ...init, headers })
  }
  const expectOk = async (res: Response, status: number) => {
    if (res.status !== status) throw new Error(`admin API answered ${res.status}: ${await res.text()}`)
    return (await res.json()) as any
  }
  /** A key for a workspace, created through the admin API. */
  const createKey = async (
    workspaceId: string,
    key: { kind?: "live" | "test"; scopes?: ReadonlyArray<string>; name?: string } = {}
  ): Promise<AdminKey> => {
    const body = await expectOk(
      await admin(`/workspaces/${workspaceId}/keys`, { method: "POST", json: { kind: "test", ...key } }),
      201
    )
    return body.key
  }
  /** A fresh workspace with one all-scope test key, through the admin API. */
  const createWorkspace = async (name = "Second workspace", billing?: Record<string, unknown>) => {
    const body = await expectOk(
      await admin("/workspaces", { method: "POST", json: billing === undefined ? { name } : { name, billing } }),
      201
    )
    const key = await createKey(body.workspace.id)
    return { workspaceId: body.workspace.id as string, workspace: body.workspace, key: key.token, keyId: key.id }
  }
  return {
    fetch,
    admin,
    createKey,
    createWorkspace,
    runtime,
    // Read when used: a second app on an already bootstrapped database has no first workspace of its own.
    get testKey() {
      return Option.getOrThrow(bootstrap).key.token
    },
    get workspaceId() {
      return Option.getOrThrow(bootstrap).workspace.id
    },
    close: async () => {
      await dispose()
      await runtime.dispose()
    }
  }
}
