/**
 * `PAYMENTS=stripe` (CONTRACT.md "Billing cycle and payments"), with the official `stripe` client,
 * as Stripe documents off-session billing (https://docs.stripe.com/payments/save-and-reuse): one
 * Customer per workspace; the card saved through a Checkout Session in setup mode and made the
 * customer's `invoice_settings.default_payment_method` when its webhook arrives; each charge an
 * off-session PaymentIntent confirmed on that card, under the caller's idempotency key, so asking
 * again answers the first outcome and never collects twice. Stripe's webhooks (`POST
 * /v1/payments/stripe`) are verified with the endpoint's signing secret before anything is applied.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import Stripe from "stripe"
import { PaymentCustomerStore } from "../../core/billing/customers.ts"
import { HostedPayments } from "../../core/billing/hosted.ts"
import {
  checkAmount,
  type Payment,
  PaymentEvents,
  type PaymentFailed,
  paymentFailed,
  Payments
} from "../../core/billing/payments.ts"
import { InvalidArgument } from "../../core/kernel/errors.ts"
import { nowIso } from "../../core/kernel/time.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"

export interface StripeConfig {
  readonly secretKey: Redacted.Redacted<string>
  readonly webhookSecret: Redacted.Redacted<string>
  /** Another API host (a fake Stripe in tests): `http://127.0.0.1:12111`. Default Stripe's. */
  readonly apiBase?: string
}

/** How often the client sends a request again after a connection error, a 409 or a 5xx (with the same idempotency key). */
const NETWORK_RETRIES = 2

/**
 * The client, pointed at `apiBase` when given. Its HTTP client is the package's own choice per
 * runtime (node:http on Node, fetch on Deno): its fetch client's Content-Length is refused by the
 * undici the process installs as fetch's dispatcher on Node.
 */
const client = (config: StripeConfig) => {
  const base = config.apiBase === undefined ? undefined : new URL(config.apiBase)
  return new Stripe(Redacted.value(config.secretKey), {
    maxNetworkRetries: NETWORK_RETRIES,
    appInfo: { name: "switchboard" },
    ...(base === undefined ? {} : {
      host: base.hostname,
      port: base.port === "" ? (base.protocol === "https:" ? 443 : 80) : Number(base.port),
      protocol: base.protocol === "https:" ? "https" : "http"
    })
  })
}

const errorsOf = Stripe.errors

/**
 * A failed Stripe call as the port's outcome (https://docs.stripe.com/api/errors,
 * https://docs.stripe.com/declines/codes): a card error is the card's answer; no answer, a 5xx, a
 * rate limit or a request still running under the same key (the client already retried) is
 * `unavailable`. Anything else is a request we should not have made, a defect: a key reused with
 * other parameters, or an amount under Stripe's minimum charge (50 cents,
 * https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts), which the caller must not
 * ask for.
 */
const failure = (what: string) => (e: unknown): Effect.Effect<never, PaymentFailed> => {
  if (e instanceof errorsOf.StripeCardError) {
    return Effect.fail(paymentFailed(e.code === "authentication_required" ? "authentication_required" : "declined"))
  }
  if (
    e instanceof errorsOf.StripeConnectionError || e instanceof errorsOf.StripeAPIError ||
    e instanceof errorsOf.StripeRateLimitError ||
    (e instanceof errorsOf.StripeIdempotencyError && e.statusCode === 409)
  ) {
    return Effect.zipRight(
      Effect.logWarning(`Stripe: ${what} got no answer`, (e as Error).message),
      Effect.fail(paymentFailed("unavailable"))
    )
  }
  // A revoked or wrong key: nothing can be charged until the operator fixes STRIPE_SECRET_KEY.
  if (e instanceof errorsOf.StripeAuthenticationError || e instanceof errorsOf.StripePermissionError) {
    return Effect.zipRight(
      Effect.logError(`Stripe refused the API key (STRIPE_SECRET_KEY) for ${what}`, e.message),
      Effect.fail(paymentFailed("unavailable"))
    )
  }
  return Effect.dieMessage(`Stripe: ${what} was refused: ${e instanceof Error ? e.message : String(e)}`)
}

/** A Stripe call, its failure mapped by `failure`. */
const call = <A>(what: string, run: () => Promise<A>): Effect.Effect<A, PaymentFailed> =>
  Effect.tryPromise({ try: run, catch: (e) => e }).pipe(Effect.catchAll(failure(what)))

/** A Stripe call whose failure only means "send the webhook again" (a 500 to Stripe, which retries). */
const mustCall = <A>(what: string, run: () => Promise<A>): Effect.Effect<A> =>
  Effect.tryPromise({ try: run, catch: (e) => e }).pipe(
    Effect.orDieWith((e) => new Error(`Stripe: ${what} failed: ${e instanceof Error ? e.message : String(e)}`))
  )

const idOf = (v: string | { readonly id: string } | null | undefined): string | null =>
  v === null || v === undefined ? null : typeof v === "string" ? v : v.id

/** Why a PaymentIntent reported failed did (its `last_payment_error`). */
const failedReason = (pi: Stripe.PaymentIntent): PaymentFailed["reason"] =>
  pi.last_payment_error?.code === "authentication_required" ? "authentication_required" : "declined"

export const layer = (
  config: StripeConfig
): Layer.Layer<Payments | HostedPayments, never, PaymentCustomerStore | WorkspaceStore> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const stripe = client(config)
      const customers = yield* PaymentCustomerStore
      const workspaces = yield* WorkspaceStore
      const crypto = Stripe.createSubtleCryptoProvider()

      /**
       * The workspace's Customer, made on first need with `metadata.workspaceId`. Its key makes two
       * processes that make it at once get one customer (Stripe keeps a key at least 24 hours); the
       * store keeps the first either way.
       */
      const customerId = (workspaceId: string) =>
        Effect.gen(function*() {
          const kept = yield* customers.get(workspaceId)
          if (Option.isSome(kept)) return kept.value.customerId
          const workspace = yield* workspaces.get(workspaceId)
          const email = Option.getOrNull(Option.flatMapNullable(workspace, (w) => w.billing.ownerEmail))
          const created = yield* call("creating the customer", () =>
            stripe.customers.create({
              ...(Option.isSome(workspace) ? { name: workspace.value.name } : {}),
              ...(email === null ? {} : { email }),
              metadata: { workspaceId }
            }, { idempotencyKey: `customer:${workspaceId}` }))
          const claimed = yield* customers.claim({ workspaceId, customerId: created.id, createdAt: yield* nowIso })
          return claimed.customerId
        })

      const charge: Payments["charge"] = ({ workspace, amountCents, description, idempotencyKey, metadata }) =>
        Effect.gen(function*() {
          yield* checkAmount(amountCents)
          const id = yield* customerId(workspace.id)
          const customer = yield* call("reading the customer", () => stripe.customers.retrieve(id))
          const method = customer.deleted === true
            ? null
            : idOf(customer.invoice_settings.default_payment_method)
          if (method === null) {
            // The gates ask for billing.paymentMethod first: a card removed at Stripe, or one set by hand.
            yield* Effect.logWarning("Stripe: the workspace's customer has no default payment method").pipe(
              Effect.annotateLogs({ workspaceId: workspace.id, customer: customer.id })
            )
            return yield* paymentFailed("declined")
          }
          const intent = yield* call("charging", () =>
            stripe.paymentIntents.create({
              amount: amountCents,
              currency: "usd",
              customer: customer.id,
              payment_method: method,
              confirm: true,
              off_session: true,
              description,
              metadata: { ...metadata }
            }, { idempotencyKey }))
          // Off-session card payments succeed or fail at once; one that waits on its card holder was not collected.
          if (intent.status !== "succeeded") {
            return yield* paymentFailed(
              intent.status === "requires_action" ? "authentication_required" : failedReason(intent)
            )
          }
          const payment: Payment = {
            id: intent.id,
            workspaceId: workspace.id,
            amountCents: intent.amount,
            description,
            createdAt: new Date(intent.created * 1000).toISOString()
          }
          return payment
        })

      // One key per payment: refunding again replays the first refund.
      const refund: Payments["refund"] = (payment) =>
        Effect.tryPromise({
          try: () => stripe.refunds.create({ payment_intent: payment.id }, { idempotencyKey: `refund:${payment.id}` }),
          catch: (e) => e
        }).pipe(
          Effect.asVoid,
          Effect.catchAll((e) =>
            // Refunded already (by hand in the dashboard): the outcome asked for.
            e instanceof errorsOf.StripeInvalidRequestError && e.code === "charge_already_refunded"
              ? Effect.void
              : failure("refunding")(e)
          )
        )

      const setupUrl: HostedPayments["setupUrl"] = (workspaceId, urls) =>
        Effect.gen(function*() {
          const customer = yield* customerId(workspaceId)
          // https://docs.stripe.com/payments/save-and-reuse?platform=checkout: setup mode saves the card for off-session use.
          const session = yield* call("opening the card setup page", () =>
            stripe.checkout.sessions.create({
              mode: "setup",
              currency: "usd",
              customer,
              success_url: urls.successUrl,
              cancel_url: urls.cancelUrl,
              metadata: { workspaceId }
            }))
          if (session.url === null) return yield* Effect.dieMessage("Stripe answered a Checkout Session without a url")
          return session.url
        })

      /** The card a setup-mode session saved becomes its customer's default, then the workspace has a card. */
      const setupCompleted = (session: Stripe.Checkout.Session) =>
        Effect.gen(function*() {
          if (session.mode !== "setup") return
          const customer = idOf(session.customer)
          const setup = idOf(session.setup_intent)
          const owner = customer === null ? Option.none() : yield* customers.findByCustomer(customer)
          if (customer === null || setup === null || Option.isNone(owner)) {
            return yield* Effect.logWarning("Stripe: a completed card setup of no workspace of ours").pipe(
              Effect.annotateLogs({ session: session.id })
            )
          }
          const intent = yield* mustCall("reading the SetupIntent", () => stripe.setupIntents.retrieve(setup))
          const method = idOf(intent.payment_method)
          if (method === null) {
            return yield* Effect.logWarning("Stripe: a completed card setup without a card").pipe(
              Effect.annotateLogs({ setupIntent: setup })
            )
          }
          yield* mustCall(
            "setting the default payment method",
            () => stripe.customers.update(customer, { invoice_settings: { default_payment_method: method } })
          )
          yield* Effect.flatMap(PaymentEvents, (events) => events.paymentMethodAdded(owner.value.workspaceId))
        })

      const receive: HostedPayments["receive"] = ({ headers, rawBody }) =>
        Effect.gen(function*() {
          const signature = headers["stripe-signature"]
          if (signature === undefined) {
            return yield* new InvalidArgument({ message: "Stripe-Signature header is missing" })
          }
          // https://docs.stripe.com/webhooks#verify-official-libraries: the raw body, the header, the endpoint's secret.
          const event = yield* Effect.tryPromise({
            try: () =>
              stripe.webhooks.constructEventAsync(
                rawBody,
                signature,
                Redacted.value(config.webhookSecret),
                undefined,
                crypto
              ),
            catch: (e) =>
              new InvalidArgument({
                message: `Stripe-Signature does not verify: ${e instanceof Error ? e.message : String(e)}`
              })
          })
          const events = yield* PaymentEvents
          switch (event.type) {
            case "checkout.session.completed":
              return yield* setupCompleted(event.data.object)
            case "payment_intent.succeeded":
              return yield* events.paymentSucceeded(event.data.object.metadata, event.data.object.id)
            case "payment_intent.payment_failed":
              return yield* events.paymentFailed(event.data.object.metadata, failedReason(event.data.object))
            default:
              return
          }
        })

      return Context.make(Payments, Payments.of({ charge, refund })).pipe(
        Context.add(HostedPayments, HostedPayments.of({ name: "stripe", setupUrl, receive }))
      )
    })
  )
