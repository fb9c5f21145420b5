/**
 * A fake Stripe API for tests, following Stripe's documented rules (each cited beside its code), not
 * only its shapes: secret-key auth, form-encoded bodies, idempotent requests, the error object and
 * decline codes, the test payment methods, Customers, Checkout Sessions in setup mode (completed by
 * the fake-only `completeCheckout`), SetupIntents, off-session PaymentIntents, Refunds, and signed
 * webhook events sent to a configured endpoint. One account per secret key; state is introspectable.
 * test/support/fakeStripeMain.ts runs it as a process of its own.
 */
import { createHmac, randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export const DEFAULT_SECRET_KEY = "sk_test_fake_switchboard"
export const DEFAULT_WEBHOOK_SECRET = "whsec_fake_switchboard"

/** https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts: USD charges are at least $0.50. */
export const MINIMUM_USD_CENTS = 50

type Json = Record<string, unknown>

// ------------------------------------------------------------------------------------ test cards

interface TestCard {
  readonly brand: string
  readonly last4: string
  /** What a charge does: succeeds, is declined with a decline code, or needs the card holder (3DS). */
  readonly outcome: "succeeds" | "authentication_required" | { readonly decline: string }
}

/**
 * The test PaymentMethods of https://docs.stripe.com/testing ("Test cards", "Declined payments",
 * "Authentication and setup"): `pm_card_authenticationRequired` (4000 0027 6000 3184) "requires
 * authentication on all transactions, regardless of how the card is set up", so an off-session
 * charge fails with `authentication_required`.
 */
export const TEST_CARDS: Readonly<Record<string, TestCard>> = {
  pm_card_visa: { brand: "visa", last4: "4242", outcome: "succeeds" },
  pm_card_mastercard: { brand: "mastercard", last4: "4444", outcome: "succeeds" },
  pm_card_chargeDeclined: { brand: "visa", last4: "0002", outcome: { decline: "generic_decline" } },
  pm_card_chargeDeclinedInsufficientFunds: { brand: "visa", last4: "9995", outcome: { decline: "insufficient_funds" } },
  pm_card_authenticationRequired: { brand: "visa", last4: "3184", outcome: "authentication_required" },
  pm_card_threeDSecureRequired: { brand: "visa", last4: "3063", outcome: "authentication_required" }
}

// ------------------------------------------------------------------------------------ errors

/** A Stripe error answer: https://docs.stripe.com/api/errors (`type`, `code`, `decline_code`, `message`, `param`). */
class StripeFailure {
  constructor(readonly status: number, readonly error: Json) {}
}

const invalid = (message: string, extra: Json = {}, status = 400) =>
  new StripeFailure(status, { type: "invalid_request_error", message, ...extra })
const missingParam = (param: string) =>
  invalid(`Missing required param: ${param}.`, { code: "parameter_missing", param })
const noSuch = (kind: string, id: string) =>
  invalid(`No such ${kind}: '${id}'`, { code: "resource_missing", param: "id" }, 404)

// ------------------------------------------------------------------------------------ form bodies

/**
 * Stripe's request bodies are `application/x-www-form-urlencoded`, nested objects in bracket
 * notation (`metadata[workspaceId]=...`, `invoice_settings[default_payment_method]=...`) and arrays
 * indexed (`expand[0]=...`): https://docs.stripe.com/api (the "Request" of every endpoint,
 * https://docs.stripe.com/api/metadata for metadata's form).
 */
export const parseForm = (body: string): Json => {
  const root: Json = {}
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const [head, ...rest] = rawKey.split("[")
    const path = [head!, ...rest.map((p) => p.replace(/]$/, ""))]
    let node: Json = root
    path.forEach((segment, i) => {
      if (i === path.length - 1) node[segment] = value
      else node = (node[segment] ??= {}) as Json
    })
  }
  // `{0: a, 1: b}` -> `[a, b]`
  const arrays = (v: unknown): unknown => {
    if (typeof v !== "object" || v === null) return v
    const entries = Object.entries(v as Json).map(([k, x]) => [k, arrays(x)] as const)
    return entries.length > 0 && entries.every(([k], i) => k === String(i))
      ? entries.map(([, x]) => x)
      : Object.fromEntries(entries)
  }
  return arrays(root) as Json
}

// ------------------------------------------------------------------------------------ the fake

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly idempotencyKey: string | null
  readonly params: Json
  readonly status: number
  readonly replayed: boolean
}

export interface FakePaymentIntent extends Json {
  readonly id: string
  readonly status: string
  readonly amount: number
  /** The Idempotency-Key of the request that created it. */
  readonly idempotencyKey: string | null
}

export interface WebhookDelivery {
  readonly event: Json
  readonly status: number | null
}

export interface FakeStripe {
  readonly url: string
  readonly port: number
  readonly secretKey: string
  readonly webhookSecret: string
  /** Where events are POSTed (Stripe's webhook endpoint); unset: events are recorded, not sent. */
  readonly setWebhookUrl: (url: string | null) => void
  /**
   * Fake-only: the customer fills the Checkout page of session `id` with `card` (a test PaymentMethod
   * of TEST_CARDS): a PaymentMethod attached to its customer, a succeeded SetupIntent, the session
   * `complete` and a signed `checkout.session.completed` sent. Answers the event's delivery.
   */
  readonly completeCheckout: (id: string, card?: string) => Promise<WebhookDelivery>
  /** Holds answers to `path` (e.g. `/v1/payment_intents`) for `ms` after the work is done. */
  readonly setLatency: (path: string, ms: number) => void
  /** The next `count` requests to `path` answer 500 without doing anything, then work again. */
  readonly failNext: (path: string, count: number) => void
  readonly customers: () => ReadonlyArray<Json>
  readonly paymentIntents: () => ReadonlyArray<FakePaymentIntent>
  readonly refunds: () => ReadonlyArray<Json>
  readonly checkoutSessions: () => ReadonlyArray<Json>
  readonly requests: () => ReadonlyArray<RecordedRequest>
  /** Every event, sent or not, oldest first. */
  readonly events: () => ReadonlyArray<Json>
  /** Resolves once every event created so far was delivered (or its delivery failed). */
  readonly deliveries: () => Promise<ReadonlyArray<WebhookDelivery>>
  readonly close: () => Promise<void>
}

/**
 * A `Stripe-Signature` header for `payload` as Stripe signs webhooks
 * (https://docs.stripe.com/webhooks#verify-manually): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<payload>" with the endpoint's secret>`.
 */
export const signPayload = (payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)) =>
  `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex")}`

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("base64url").replace(/[-_]/g, "x")}`
const nowSeconds = () => Math.floor(Date.now() / 1000)

/** Canonical JSON of request parameters, so the same parameters in another order compare equal. */
const canonical = (v: unknown): string =>
  typeof v !== "object" || v === null
    ? JSON.stringify(v)
    : Array.isArray(v)
    ? `[${v.map(canonical).join(",")}]`
    : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Json)[k])}`).join(",")}}`

export const startFakeStripe = async (
  options: { readonly secretKeys?: ReadonlyArray<string>; readonly webhookSecret?: string; readonly port?: number } = {}
): Promise<FakeStripe> => {
  const secretKeys = options.secretKeys ?? [DEFAULT_SECRET_KEY]
  const webhookSecret = options.webhookSecret ?? DEFAULT_WEBHOOK_SECRET
  let webhookUrl: string | null = null
  const customers = new Map<string, Json>()
  const paymentMethods = new Map<string, Json & { card: Json; customer: string | null }>()
  const setupIntents = new Map<string, Json>()
  const sessions = new Map<string, Json>()
  const intents = new Map<string, FakePaymentIntent>()
  const refunds = new Map<string, Json>()
  const events: Array<Json> = []
  const requests: Array<RecordedRequest> = []
  const pending: Array<Promise<WebhookDelivery>> = []
  const latency = new Map<string, number>()
  const failures = new Map<string, number>()
  /**
   * Saved answers by account and Idempotency-Key (https://docs.stripe.com/api/idempotent_requests):
   * "in-flight" while the first request with the key runs.
   */
  const idempotent = new Map<string, "in-flight" | { fingerprint: string; status: number; body: Json }>()

  const card = (pm: Json) => TEST_CARDS[(pm["testCard"] as string) ?? ""] ?? TEST_CARDS["pm_card_visa"]!
  const publicPm = (pm: Json): Json => {
    const { testCard: _, ...rest } = pm
    return rest
  }

  /** A test token (`pm_card_visa`) used directly makes a fresh PaymentMethod from it, as Stripe does. */
  const paymentMethod = (id: string, customer: string | null = null) => {
    const existing = paymentMethods.get(id)
    if (existing !== undefined) return existing
    const test = TEST_CARDS[id]
    if (test === undefined) throw noSuch("PaymentMethod", id)
    const pm = {
      id: newId("pm"),
      object: "payment_method",
      type: "card",
      created: nowSeconds(),
      customer,
      livemode: false,
      metadata: {},
      card: { brand: test.brand, last4: test.last4, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3 },
      testCard: id
    }
    paymentMethods.set(pm.id, pm)
    return pm
  }

  // ---------------------------------------------------------------------------- events

  /**
   * An Event (https://docs.stripe.com/api/events/object) sent to the endpoint, signed
   * (https://docs.stripe.com/webhooks#verify-manually). Deliveries are asynchronous, as Stripe's.
   */
  const emit = (type: string, object: Json, request: { id: string; idempotency_key: string | null } | null) => {
    const event: Json = {
      id: newId("evt"),
      object: "event",
      api_version: "2025-08-27.basil",
      created: nowSeconds(),
      data: { object: structuredClone(object) },
      livemode: false,
      pending_webhooks: webhookUrl === null ? 0 : 1,
      request: request ?? { id: null, idempotency_key: null },
      type
    }
    events.push(event)
    const delivery = deliver(event)
    pending.push(delivery)
    return delivery
  }

  const deliver = async (event: Json): Promise<WebhookDelivery> => {
    if (webhookUrl === null) return { event, status: null }
    const payload = JSON.stringify(event, null, 2)
    try {
      const res = await fetch(webhookUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json; charset=utf-8",
          "stripe-signature": signPayload(payload, webhookSecret),
          "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
        },
        body: payload
      })
      await res.arrayBuffer()
      return { event, status: res.status }
    } catch {
      return { event, status: null }
    }
  }

  // ---------------------------------------------------------------------------- resources

  const customerOf = (id: string) => {
    const c = customers.get(id)
    if (c === undefined) throw noSuch("customer", id)
    return c
  }

  const metadataOf = (params: Json): Json => {
    const m = params["metadata"] ?? {}
    if (typeof m !== "object" || m === null || Array.isArray(m)) {
      throw invalid("Invalid metadata", { param: "metadata" })
    }
    // https://docs.stripe.com/api/metadata: up to 50 keys, names up to 40 characters, values up to 500.
    const entries = Object.entries(m as Json)
    if (entries.length > 50 || entries.some(([k, v]) => k.length > 40 || String(v).length > 500)) {
      throw invalid("Invalid metadata: at most 50 keys of 40 characters and values of 500", { param: "metadata" })
    }
    return m as Json
  }

  const createCustomer = (params: Json) => {
    const c: Json = {
      id: newId("cus"),
      object: "customer",
      created: nowSeconds(),
      email: params["email"] ?? null,
      name: params["name"] ?? null,
      description: params["description"] ?? null,
      livemode: false,
      metadata: metadataOf(params),
      invoice_settings: { default_payment_method: null, custom_fields: null, footer: null, rendering_options: null }
    }
    customers.set(c["id"] as string, c)
    return { status: 200, body: c }
  }

  /**
   * https://docs.stripe.com/api/customers/update: `invoice_settings[default_payment_method]` must
   * be a PaymentMethod attached to this customer.
   */
  const updateCustomer = (id: string, params: Json) => {
    const c = customerOf(id)
    const settings = params["invoice_settings"] as Json | undefined
    const pmId = settings?.["default_payment_method"]
    if (typeof pmId === "string" && pmId !== "") {
      const pm = paymentMethods.get(pmId)
      if (pm === undefined) throw noSuch("PaymentMethod", pmId)
      if (pm.customer !== id) {
        throw invalid(`The customer does not have a payment method with the ID ${pmId}.`, {
          param: "invoice_settings[default_payment_method]"
        })
      }
    }
    const next: Json = {
      ...c,
      ...(params["email"] === undefined ? {} : { email: params["email"] }),
      ...(params["name"] === undefined ? {} : { name: params["name"] }),
      metadata: { ...(c["metadata"] as Json), ...metadataOf(params) },
      invoice_settings: {
        ...(c["invoice_settings"] as Json),
        ...(pmId === undefined ? {} : { default_payment_method: pmId === "" ? null : pmId })
      }
    }
    customers.set(id, next)
    return { status: 200, body: next }
  }

  /**
   * https://docs.stripe.com/api/checkout/sessions/create: `mode` is required; `success_url` is
   * required for the hosted page (ui_mode `hosted`); in `setup` mode `currency` is required unless
   * `payment_method_types` is set (https://docs.stripe.com/payments/save-and-reuse?platform=checkout
   * creates it with `mode: 'setup', currency, customer`). The answer carries the page's `url`.
   */
  const createSession = (params: Json) => {
    const mode = params["mode"]
    if (mode === undefined) throw missingParam("mode")
    if (!["payment", "setup", "subscription"].includes(String(mode))) {
      throw invalid(`Invalid mode: must be one of payment, setup, or subscription`, { param: "mode" })
    }
    if (mode !== "setup") throw invalid("This fake Stripe supports mode=setup only", { param: "mode" })
    if (params["success_url"] === undefined) throw missingParam("success_url")
    if (params["currency"] === undefined && params["payment_method_types"] === undefined) {
      throw invalid("You must provide `currency` in setup mode when `payment_method_types` is not passed.", {
        param: "currency"
      })
    }
    const customer = params["customer"] as string | undefined
    if (customer !== undefined) customerOf(customer)
    const id = `cs_test_${randomBytes(24).toString("hex")}`
    const session: Json = {
      id,
      object: "checkout.session",
      mode: "setup",
      status: "open",
      currency: params["currency"] ?? null,
      customer: customer ?? null,
      success_url: params["success_url"],
      cancel_url: params["cancel_url"] ?? null,
      client_reference_id: params["client_reference_id"] ?? null,
      metadata: metadataOf(params),
      setup_intent: null,
      payment_intent: null,
      created: nowSeconds(),
      expires_at: nowSeconds() + 24 * 3600,
      livemode: false,
      url: `${url}/c/setup/${id}`
    }
    sessions.set(id, session)
    return { status: 200, body: session }
  }

  const completeCheckout = (id: string, testCard = "pm_card_visa") => {
    const session = sessions.get(id)
    if (session === undefined) throw new Error(`No such checkout session: ${id}`)
    if (session["status"] !== "open") throw new Error(`Checkout session ${id} is ${String(session["status"])}`)
    // Checkout makes a customer when none was given; the card is attached to it.
    const customer = (session["customer"] as string | null) ?? (createCustomer({}).body["id"] as string)
    const pm = paymentMethod(testCard, customer)
    const si: Json = {
      id: newId("seti"),
      object: "setup_intent",
      status: "succeeded",
      usage: "off_session",
      customer,
      payment_method: pm.id,
      metadata: session["metadata"],
      created: nowSeconds(),
      livemode: false
    }
    setupIntents.set(si["id"] as string, si)
    const completed = { ...session, customer, status: "complete", setup_intent: si["id"] }
    sessions.set(id, completed)
    return emit("checkout.session.completed", completed, null)
  }

  const intentView = (pi: FakePaymentIntent): Json => {
    const { idempotencyKey: _, ...rest } = pi
    return rest
  }

  /**
   * https://docs.stripe.com/api/payment_intents/create: `amount` (a positive integer of the
   * smallest currency unit, at least the minimum charge of
   * https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts) and `currency` required;
   * `off_session` "can only be used when confirm=true"; confirming needs a `payment_method`, attached
   * to `customer` when one is given. A card failure answers 402 with the PaymentIntent in
   * `requires_payment_method` (https://docs.stripe.com/payments/save-and-reuse, "When a payment
   * attempt fails, the request also fails with a 402 HTTP status code and the status of the
   * PaymentIntent is requires_payment_method"), `authentication_required` when the card needs its
   * holder off-session; decline codes of https://docs.stripe.com/declines/codes.
   */
  const createIntent = (params: Json, request: { id: string; idempotency_key: string | null }) => {
    if (params["amount"] === undefined) throw missingParam("amount")
    if (params["currency"] === undefined) throw missingParam("currency")
    const amount = String(params["amount"])
    if (!/^\d+$/.test(amount)) throw invalid("Invalid integer: " + amount, { param: "amount" })
    const currency = String(params["currency"]).toLowerCase()
    if (currency !== "usd") throw invalid("This fake Stripe supports usd only", { param: "currency" })
    if (Number(amount) < MINIMUM_USD_CENTS) {
      throw invalid("Amount must be at least $0.50 usd", { code: "amount_too_small", param: "amount" })
    }
    const confirm = params["confirm"] === "true"
    const offSession = params["off_session"] === "true" || params["off_session"] === "one_off" ||
      params["off_session"] === "recurring"
    if (params["off_session"] !== undefined && !confirm) {
      throw invalid("off_session can only be used when confirm=true.", { param: "off_session" })
    }
    const customer = params["customer"] as string | undefined
    if (customer !== undefined) customerOf(customer)
    let pm: (Json & { card: Json; customer: string | null }) | null = null
    const pmParam = params["payment_method"] as string | undefined
    if (pmParam !== undefined) {
      pm = paymentMethod(pmParam)
      if (customer !== undefined && pm.customer !== null && pm.customer !== customer) {
        throw invalid(`The PaymentMethod ${pm.id} does not belong to the Customer you supplied ${customer}.`, {
          param: "payment_method"
        })
      }
    }
    if (confirm && pm === null) {
      throw invalid(
        "You cannot confirm this PaymentIntent because it's missing a payment method. To confirm the PaymentIntent with " +
          (customer ?? "a customer") +
          ", specify a payment method attached to this customer along with the customer ID.",
        { code: "payment_intent_unexpected_state", param: "payment_method" }
      )
    }
    const base = {
      id: newId("pi"),
      object: "payment_intent",
      amount: Number(amount),
      amount_received: 0,
      currency,
      customer: customer ?? null,
      description: params["description"] ?? null,
      metadata: metadataOf(params),
      payment_method: pm?.id ?? null,
      created: nowSeconds(),
      livemode: false,
      last_payment_error: null as Json | null,
      latest_charge: null as string | null,
      idempotencyKey: request.idempotency_key
    }
    if (!confirm) {
      const pi = { ...base, status: "requires_confirmation" }
      intents.set(pi.id, pi)
      void emit("payment_intent.created", intentView(pi), request)
      return { status: 200, body: intentView(pi) }
    }
    const outcome = card(pm!).outcome
    if (outcome === "succeeds" || (outcome === "authentication_required" && !offSession)) {
      const pi = outcome === "succeeds"
        ? { ...base, status: "succeeded", amount_received: base.amount, latest_charge: newId("ch") }
        // On-session, the card holder is asked to authenticate: https://docs.stripe.com/payments/3d-secure
        : { ...base, status: "requires_action", next_action: { type: "use_stripe_sdk" } }
      intents.set(pi.id, pi)
      void emit("payment_intent.created", intentView(pi), request)
      if (pi.status === "succeeded") void emit("payment_intent.succeeded", intentView(pi), request)
      return { status: 200, body: intentView(pi) }
    }
    const code = outcome === "authentication_required" ? "authentication_required" : "card_declined"
    const declineCode = outcome === "authentication_required" ? "authentication_required" : outcome.decline
    const message = outcome === "authentication_required"
      ? "Your card was declined. This transaction requires authentication."
      : declineCode === "insufficient_funds"
      ? "Your card has insufficient funds."
      : "Your card was declined."
    const error: Json = {
      type: "card_error",
      code,
      decline_code: declineCode,
      message,
      doc_url: `https://docs.stripe.com/error-codes/${code.replaceAll("_", "-")}`,
      payment_method: publicPm(pm!)
    }
    const pi = { ...base, status: "requires_payment_method", last_payment_error: error, latest_charge: newId("ch") }
    intents.set(pi.id, pi)
    void emit("payment_intent.created", intentView(pi), request)
    void emit("payment_intent.payment_failed", intentView(pi), request)
    return { status: 402, body: { error: { ...error, payment_intent: intentView(pi) } } }
  }

  /**
   * https://docs.stripe.com/api/refunds/create: a refund of a PaymentIntent's charge, in full unless
   * `amount` says less; only a succeeded PaymentIntent has a charge to refund, and a charge refunded in
   * full cannot be refunded again (`charge_already_refunded`, https://docs.stripe.com/error-codes).
   */
  const createRefund = (params: Json) => {
    const piId = params["payment_intent"] as string | undefined
    if (piId === undefined && params["charge"] === undefined) throw missingParam("payment_intent")
    if (piId === undefined) throw invalid("This fake Stripe refunds by payment_intent only", { param: "charge" })
    const pi = intents.get(piId)
    if (pi === undefined) throw noSuch("payment_intent", piId)
    if (pi.status !== "succeeded") {
      throw invalid(`This PaymentIntent (${piId}) does not have a successful charge to refund.`, {
        code: "charge_not_refundable",
        param: "payment_intent"
      })
    }
    const refunded = [...refunds.values()].filter((r) => r["payment_intent"] === piId)
      .reduce((s, r) => s + (r["amount"] as number), 0)
    const amount = params["amount"] === undefined ? pi.amount - refunded : Number(params["amount"])
    if (refunded >= pi.amount) {
      throw invalid(`Charge ${String(pi["latest_charge"])} has already been refunded.`, {
        code: "charge_already_refunded"
      })
    }
    if (!Number.isSafeInteger(amount) || amount <= 0 || amount > pi.amount - refunded) {
      throw invalid("Refund amount is greater than the unrefunded amount on the charge", { param: "amount" })
    }
    const refund: Json = {
      id: newId("re"),
      object: "refund",
      amount,
      currency: pi["currency"],
      payment_intent: piId,
      charge: pi["latest_charge"],
      status: "succeeded",
      metadata: metadataOf(params),
      created: nowSeconds()
    }
    refunds.set(refund["id"] as string, refund)
    return { status: 200, body: refund }
  }

  // ---------------------------------------------------------------------------- routing

  type Answer = { status: number; body: Json }

  const route = (
    method: string,
    path: string,
    params: Json,
    query: URLSearchParams,
    request: { id: string; idempotency_key: string | null }
  ): Answer => {
    let m: RegExpExecArray | null
    if (method === "POST" && path === "/v1/customers") return createCustomer(params)
    if ((m = /^\/v1\/customers\/([^/]+)$/.exec(path))) {
      if (method === "GET") return { status: 200, body: customerOf(m[1]!) }
      if (method === "POST") return updateCustomer(m[1]!, params)
    }
    if (method === "POST" && path === "/v1/checkout/sessions") return createSession(params)
    if (method === "GET" && (m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) {
      const s = sessions.get(m[1]!)
      if (s === undefined) throw noSuch("checkout.session", m[1]!)
      return { status: 200, body: s }
    }
    if (method === "GET" && (m = /^\/v1\/setup_intents\/([^/]+)$/.exec(path))) {
      const si = setupIntents.get(m[1]!)
      if (si === undefined) throw noSuch("setup_intent", m[1]!)
      return { status: 200, body: si }
    }
    if (method === "GET" && (m = /^\/v1\/payment_methods\/([^/]+)$/.exec(path))) {
      const pm = paymentMethods.get(m[1]!)
      if (pm === undefined) throw noSuch("PaymentMethod", m[1]!)
      return { status: 200, body: publicPm(pm) }
    }
    if (method === "POST" && path === "/v1/payment_intents") return createIntent(params, request)
    if (method === "GET" && path === "/v1/payment_intents") {
      // https://docs.stripe.com/api/payment_intents/list: newest first, `customer` filter, `limit` 1..100 (default 10).
      const limit = Number(query.get("limit") ?? 10)
      const customer = query.get("customer")
      const data = [...intents.values()].reverse()
        .filter((pi) => customer === null || pi["customer"] === customer)
      return {
        status: 200,
        body: {
          object: "list",
          url: "/v1/payment_intents",
          has_more: data.length > limit,
          data: data.slice(0, limit).map(intentView)
        }
      }
    }
    if (method === "GET" && (m = /^\/v1\/payment_intents\/([^/]+)$/.exec(path))) {
      const pi = intents.get(m[1]!)
      if (pi === undefined) throw noSuch("payment_intent", m[1]!)
      return { status: 200, body: intentView(pi) }
    }
    if (method === "POST" && path === "/v1/refunds") return createRefund(params)
    throw invalid(`Unrecognized request URL (${method}: ${path}).`, {}, 404)
  }

  const send = (res: ServerResponse, status: number, body: Json, headers: Record<string, string>) => {
    res.writeHead(status, { "content-type": "application/json", ...headers })
    res.end(JSON.stringify(body))
  }

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((done, fail) => {
      let text = ""
      req.setEncoding("utf8")
      req.on("data", (d) => (text += d))
      req.on("end", () => done(text))
      req.on("error", fail)
    })

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const target = new URL(req.url ?? "/", "http://fake")
    const method = req.method ?? "GET"
    const path = target.pathname
    const requestId = newId("req")
    const headers: Record<string, string> = { "request-id": requestId, "stripe-version": "2025-08-27.basil" }
    const rawBody = await readBody(req)
    const params = method === "POST" ? parseForm(rawBody) : {}
    const idempotencyKey = typeof req.headers["idempotency-key"] === "string" ? req.headers["idempotency-key"] : null
    const record = (status: number, replayed = false) =>
      requests.push({ method, path, idempotencyKey, params, status, replayed })

    // Fake-only: complete a Checkout Session as its customer would (for a test in another process).
    let m: RegExpExecArray | null
    if (method === "POST" && (m = /^\/_fake\/checkout\/sessions\/([^/]+)\/complete$/.exec(path))) {
      try {
        const delivery = await completeCheckout(m[1]!, (params["card"] as string | undefined) ?? "pm_card_visa")
        return send(res, 200, { event: delivery.event, status: delivery.status }, {})
      } catch (e) {
        return send(res, 400, { error: { message: String(e) } }, {})
      }
    }

    // https://docs.stripe.com/api/authentication: a secret key as the bearer token (or Basic's user);
    // without one, or an unknown one, 401.
    const auth = req.headers["authorization"] ?? ""
    const bearer = /^Bearer (\S+)$/.exec(auth)?.[1] ??
      (/^Basic (\S+)$/.exec(auth) ? Buffer.from(auth.slice(6), "base64").toString().split(":")[0] : undefined)
    if (bearer === undefined || bearer === "") {
      record(401)
      return send(res, 401, {
        error: {
          type: "invalid_request_error",
          message:
            "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."
        }
      }, headers)
    }
    if (!secretKeys.includes(bearer)) {
      record(401)
      return send(res, 401, {
        error: {
          type: "invalid_request_error",
          message: `Invalid API Key provided: ${bearer.slice(0, 8)}****${bearer.slice(-4)}`
        }
      }, headers)
    }
    const account = `acct_${secretKeys.indexOf(bearer)}`

    const failing = failures.get(path) ?? 0
    if (failing > 0) {
      failures.set(path, failing - 1)
      record(500)
      return send(res, 500, { error: { type: "api_error", message: "An unknown error occurred" } }, headers)
    }

    // https://docs.stripe.com/api/idempotent_requests: on POST; keys up to 255 characters; the same key
    // with other parameters (or another endpoint) is an `idempotency_error`; while the first request
    // runs, another with its key conflicts (409, nothing saved, safe to retry); results are saved only
    // once the endpoint began executing (a parameter that fails validation saves nothing), and then
    // replayed with their status, 500s and declines included.
    const slot = idempotencyKey === null || method !== "POST" ? null : `${account} ${idempotencyKey}`
    const fingerprint = `${method} ${path} ${canonical(params)}`
    if (slot !== null) {
      if (idempotencyKey!.length > 255) {
        record(400)
        return send(
          res,
          400,
          { error: { type: "invalid_request_error", message: "Idempotency keys are at most 255 characters long." } },
          headers
        )
      }
      const saved = idempotent.get(slot)
      if (saved === "in-flight") {
        record(409)
        return send(res, 409, {
          error: {
            type: "idempotency_error",
            message:
              "There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): " +
              idempotencyKey + ". Please try again later."
          }
        }, headers)
      }
      if (saved !== undefined) {
        if (saved.fingerprint !== fingerprint) {
          record(400)
          return send(res, 400, {
            error: {
              type: "idempotency_error",
              message:
                `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`
            }
          }, headers)
        }
        record(saved.status, true)
        return send(res, saved.status, saved.body, {
          ...headers,
          "idempotency-key": idempotencyKey!,
          "idempotent-replayed": "true"
        })
      }
      idempotent.set(slot, "in-flight")
    }
    let answer: Answer
    let executed = true
    try {
      answer = route(method, path, params, target.searchParams, { id: requestId, idempotency_key: idempotencyKey })
    } catch (e) {
      if (!(e instanceof StripeFailure)) throw e
      answer = { status: e.status, body: { error: e.error } }
      executed = false
    }
    const delay = latency.get(path) ?? 0
    if (delay > 0) await new Promise((r) => setTimeout(r, delay))
    if (slot !== null) {
      if (executed) idempotent.set(slot, { fingerprint, status: answer.status, body: answer.body })
      else idempotent.delete(slot)
    }
    record(answer.status)
    send(res, answer.status, answer.body, {
      ...headers,
      ...(idempotencyKey === null ? {} : { "idempotency-key": idempotencyKey })
    })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) send(res, 500, { error: { type: "api_error", message: String(e) } }, {})
    })
  })
  await new Promise<void>((done) => server.listen(options.port ?? 0, "127.0.0.1", done))
  const port = (server.address() as { port: number }).port
  const url = `http://127.0.0.1:${port}`

  return {
    url,
    port,
    secretKey: secretKeys[0]!,
    webhookSecret,
    setWebhookUrl: (u) => void (webhookUrl = u),
    completeCheckout: async (id, testCard) => completeCheckout(id, testCard),
    setLatency: (path, ms) => void latency.set(path, ms),
    failNext: (path, count) => void failures.set(path, count),
    customers: () => [...customers.values()],
    paymentIntents: () => [...intents.values()],
    refunds: () => [...refunds.values()],
    checkoutSessions: () => [...sessions.values()],
    requests: () => [...requests],
    events: () => [...events],
    deliveries: () => Promise.all(pending),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
  }
}
