/**
 * PAYMENTS=stripe against the fake Stripe (test/support/fakeStripe.ts), with the official `stripe`
 * client as the adapter's: issue 43's Must-show for Stripe. Card setup (the admin route answers a
 * Checkout URL, the fake completes it and sends its signed webhook over a socket, the workspace has
 * a card), a charge, a decline, authentication required, a webhook with a bad signature refused,
 * a retried charge billed once, a refund, and Stripe's 50-cent minimum.
 */
import { Effect, Exit } from "effect"
import { Redacted } from "effect"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as StripePayments from "../../adapters/payments/stripe.ts"
import { type ChargeRequest, Payments } from "../../core/billing/payments.ts"
import { makeTestApp } from "../support/app.ts"
import { type FakeStripe, signPayload, startFakeStripe } from "../support/fakeStripe.ts"
import { expectError } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

let fake: FakeStripe
let app: App
let bridge: Server

beforeAll(async () => {
  fake = await startFakeStripe()
  app = await makeTestApp({
    payments: StripePayments.layer({
      secretKey: Redacted.make(fake.secretKey),
      webhookSecret: Redacted.make(fake.webhookSecret),
      apiBase: fake.url
    }),
    publicBaseUrl: "https://switchboard.example"
  })
  // Stripe's webhook endpoint: a socket in front of the in-process app, passing the raw body through.
  bridge = createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (d) => (body += d))
    req.on("end", async () => {
      const headers = new Headers()
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v)
      const answer = await app.fetch(req.url ?? "/", { method: "POST", headers, body })
      res.writeHead(answer.status, { "content-type": "application/json" })
      res.end(await answer.text())
    })
  })
  await new Promise<void>((done) => bridge.listen(0, "127.0.0.1", done))
  fake.setWebhookUrl(`http://127.0.0.1:${(bridge.address() as { port: number }).port}/v1/payments/stripe`)
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
  await new Promise((done) => bridge?.close(done))
})

const workspaceOf = async (id: string) => (await (await app.admin(`/workspaces/${id}`)).json()).workspace
const auditActions = async (id: string) =>
  ((await (await app.admin(`/workspaces/${id}/audit-log`)).json()).entries as Array<{ action: string }>).map((e) =>
    e.action
  )

/** A workspace whose card `card` was saved through the admin route's Checkout page. */
const withCard = async (card: string) => {
  const { workspaceId } = await app.createWorkspace(`Stripe ${card}`, { ownerEmail: "owner@example.com" })
  const res = await app.admin(`/workspaces/${workspaceId}/payment-method/setup`, { method: "POST", json: {} })
  expect(res.status).toBe(201)
  const { url } = await res.json()
  const session = fake.checkoutSessions().find((s) => s["url"] === url)!
  const delivery = await fake.completeCheckout(session["id"] as string, card)
  expect(delivery.status).toBe(200)
  return { workspaceId, session }
}

const charge = (workspaceId: string, amountCents: number, idempotencyKey: string) =>
  app.runtime.runPromiseExit(Effect.gen(function*() {
    const workspace = await_(workspaceId)
    const request: ChargeRequest = {
      workspace: yield* workspace,
      amountCents,
      description: `Test charge ${amountCents}`,
      idempotencyKey,
      metadata: { workspaceId, purpose: "test" }
    }
    return yield* (yield* Payments).charge(request)
  }))
const await_ = (id: string) => Effect.promise(() => workspaceOf(id))

const failureOf = (exit: Exit.Exit<unknown, { reason: string; message: string }>) => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a failure, got ${String(exit)}`)
  return exit.cause.error
}

describe("PAYMENTS=stripe against the fake Stripe", () => {
  it("card setup: the admin route answers a Checkout URL in setup mode; its completion sets billing.paymentMethod", async () => {
    const { workspaceId } = await app.createWorkspace("Setup", { ownerEmail: "setup@example.com" })
    expect((await workspaceOf(workspaceId)).billing.paymentMethod).toBe(false)
    const res = await app.admin(`/workspaces/${workspaceId}/payment-method/setup`, { method: "POST", json: {} })
    expect(res.status).toBe(201)
    const { url } = await res.json()
    const session = fake.checkoutSessions().find((s) => s["url"] === url)!
    expect(session).toMatchObject({
      mode: "setup",
      currency: "usd",
      success_url: "https://switchboard.example/app",
      cancel_url: "https://switchboard.example/app",
      metadata: { workspaceId }
    })
    const customer = fake.customers().find((c) => c["id"] === session["customer"])!
    expect(customer["metadata"]).toEqual({ workspaceId })
    expect(customer["email"]).toBe("setup@example.com")
    expect((await workspaceOf(workspaceId)).billing.paymentMethod).toBe(false)

    await fake.completeCheckout(session["id"] as string, "pm_card_visa")
    expect((await workspaceOf(workspaceId)).billing.paymentMethod).toBe(true)
    expect(await auditActions(workspaceId)).toContain("billing.payment_method.added")
    const updated = fake.customers().find((c) => c["id"] === session["customer"])!
    expect((updated["invoice_settings"] as { default_payment_method: string }).default_payment_method).toMatch(/^pm_/)

    // A second setup reuses the workspace's customer.
    await app.admin(`/workspaces/${workspaceId}/payment-method/setup`, {
      method: "POST",
      json: { successUrl: "https://example.com/done", cancelUrl: "https://example.com/back" }
    })
    expect(fake.customers().filter((c) => (c["metadata"] as { workspaceId: string }).workspaceId === workspaceId))
      .toHaveLength(1)
  })

  it("the setup route: 404 for an unknown workspace, 400 for a bad URL", async () => {
    await expectError(
      await app.admin(`/workspaces/${crypto.randomUUID()}/payment-method/setup`, { method: "POST", json: {} }),
      404,
      "not_found"
    )
    await expectError(
      await app.admin(`/workspaces/${app.workspaceId}/payment-method/setup`, {
        method: "POST",
        json: { successUrl: "javascript:alert(1)" }
      }),
      400,
      "invalid_argument"
    )
  })

  it("a charge is an off-session PaymentIntent on the default card, with our metadata and key", async () => {
    const { workspaceId } = await withCard("pm_card_visa")
    const key = `charge-${crypto.randomUUID()}`
    const exit = await charge(workspaceId, 1500, key)
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    const pi = fake.paymentIntents().find((p) => p.id === exit.value.id)!
    expect(pi).toMatchObject({
      status: "succeeded",
      amount: 1500,
      currency: "usd",
      description: "Test charge 1500",
      metadata: { workspaceId, purpose: "test" },
      idempotencyKey: key
    })
    expect(exit.value).toMatchObject({ workspaceId, amountCents: 1500, description: "Test charge 1500" })
    const posted = fake.requests().filter((r) => r.path === "/v1/payment_intents" && r.method === "POST").at(-1)!
    expect(posted.params).toMatchObject({ confirm: "true", off_session: "true" })
    await fake.deliveries()
    expect(fake.events().some((e) => e["type"] === "payment_intent.succeeded")).toBe(true)
  })

  it("a retried charge with the same idempotency key is billed once, a decline included", async () => {
    const { workspaceId } = await withCard("pm_card_visa")
    const key = `inv-${crypto.randomUUID()}`
    const before = fake.paymentIntents().length
    // Held so the second request likely arrives while the first runs (409, retried by the client); either way one charge.
    fake.setLatency("/v1/payment_intents", 300)
    const [a, b] = await Promise.all([charge(workspaceId, 2000, key), charge(workspaceId, 2000, key)])
    fake.setLatency("/v1/payment_intents", 0)
    const c = await charge(workspaceId, 2000, key)
    const ids = [a, b, c].map((e) => (Exit.isSuccess(e) ? e.value.id : String(e)))
    expect(new Set(ids).size).toBe(1)
    expect(fake.paymentIntents().length - before).toBe(1)
    expect(fake.requests().some((r) => r.idempotencyKey === key && r.replayed)).toBe(true)

    // A key asked again with another amount is a request Stripe refuses (idempotency_error): a defect, not a charge.
    const other = await charge(workspaceId, 2500, key)
    expect(Exit.isFailure(other) && other.cause._tag === "Die").toBe(true)
    expect(fake.paymentIntents().length - before).toBe(1)
  })

  it("a declined card fails `declined` with CONTRACT's message; Stripe replays the decline for its key", async () => {
    const { workspaceId } = await withCard("pm_card_chargeDeclined")
    const key = `decline-${crypto.randomUUID()}`
    const error = failureOf(await charge(workspaceId, 1500, key))
    expect(error).toMatchObject({ reason: "declined", message: "Your card was declined" })
    const again = failureOf(await charge(workspaceId, 1500, key))
    expect(again.reason).toBe("declined")
    const intents = fake.paymentIntents().filter((p) => p.idempotencyKey === key)
    expect(intents.map((p) => p.status)).toEqual(["requires_payment_method"])
    expect(fake.requests().filter((r) => r.idempotencyKey === key).map((r) => [r.status, r.replayed])).toEqual([
      [402, false],
      [402, true]
    ])
  })

  it("a card that needs its holder fails `authentication_required` off-session", async () => {
    const { workspaceId } = await withCard("pm_card_authenticationRequired")
    const error = failureOf(await charge(workspaceId, 1500, `auth-${crypto.randomUUID()}`))
    expect(error.reason).toBe("authentication_required")
    expect(error.message).toMatch(/authenticate/)
  })

  it("no card at Stripe: `declined`, and nothing charged", async () => {
    const { workspaceId } = await app.createWorkspace("No card")
    const before = fake.paymentIntents().length
    expect(failureOf(await charge(workspaceId, 1500, crypto.randomUUID())).reason).toBe("declined")
    expect(fake.paymentIntents().length).toBe(before)
  })

  it("Stripe away: `unavailable` after the client's retries, and the same key then bills once", async () => {
    const { workspaceId } = await withCard("pm_card_visa")
    const key = `away-${crypto.randomUUID()}`
    fake.failNext("/v1/payment_intents", 3)
    expect(failureOf(await charge(workspaceId, 1500, key)).reason).toBe("unavailable")
    const exit = await charge(workspaceId, 1500, key)
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(fake.paymentIntents().filter((p) => p.idempotencyKey === key)).toHaveLength(1)
  })

  it("a refund returns the payment once, however often asked", async () => {
    const { workspaceId } = await withCard("pm_card_visa")
    const exit = await charge(workspaceId, 900, `refund-${crypto.randomUUID()}`)
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    const refund = () => app.runtime.runPromise(Effect.flatMap(Payments, (p) => p.refund(exit.value)))
    await refund()
    await refund()
    expect(fake.refunds().filter((r) => r["payment_intent"] === exit.value.id).map((r) => r["amount"])).toEqual([900])
  })

  it("Stripe's minimum charge is 50 cents: a smaller amount is a defect, not a charge (the caller must not ask)", async () => {
    const { workspaceId } = await withCard("pm_card_visa")
    const before = fake.paymentIntents().length
    const exit = await charge(workspaceId, 13, crypto.randomUUID())
    expect(Exit.isFailure(exit) && exit.cause._tag === "Die").toBe(true)
    expect(String(Exit.isFailure(exit) ? exit.cause : "")).toMatch(/at least \$0\.50/)
    expect(fake.paymentIntents().length).toBe(before)
  })

  it("a webhook with a bad or missing signature is 400 and changes nothing", async () => {
    const { workspaceId } = await app.createWorkspace("Forged")
    await app.admin(`/workspaces/${workspaceId}/payment-method/setup`, { method: "POST", json: {} })
    const session = fake.checkoutSessions().at(-1)!
    const body = JSON.stringify({
      id: "evt_forged",
      object: "event",
      type: "checkout.session.completed",
      data: { object: { ...session, status: "complete", setup_intent: "seti_forged" } }
    })
    for (
      const signature of [
        signPayload(body, "whsec_someone_else"),
        signPayload(body, fake.webhookSecret, Math.floor(Date.now() / 1000) - 3600),
        "t=1,v1=00",
        undefined
      ]
    ) {
      const res = await app.fetch("/v1/payments/stripe", {
        method: "POST",
        headers: { "content-type": "application/json", ...(signature ? { "stripe-signature": signature } : {}) },
        body
      })
      await expectError(res, 400, "invalid_argument")
    }
    expect((await workspaceOf(workspaceId)).billing.paymentMethod).toBe(false)
    expect(await auditActions(workspaceId)).not.toContain("billing.payment_method.added")
  })

  it("an event of another type is acknowledged and ignored", async () => {
    const body = JSON.stringify({ id: "evt_x", object: "event", type: "customer.created", data: { object: {} } })
    const res = await app.fetch("/v1/payments/stripe", {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signPayload(body, fake.webhookSecret) },
      body
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ received: true })
  })
})

describe("without PAYMENTS=stripe", () => {
  let simulated: App
  beforeAll(async () => {
    simulated = await makeTestApp()
  })
  afterAll(() => simulated?.close())

  it("the setup route is 409 and the webhook route 404", async () => {
    const error = await expectError(
      await simulated.admin(`/workspaces/${simulated.workspaceId}/payment-method/setup`, { method: "POST", json: {} }),
      409,
      "failed_precondition"
    )
    expect(error.message).toBe("Card setup needs PAYMENTS=stripe")
    await expectError(await simulated.fetch("/v1/payments/stripe", { method: "POST", json: {} }), 404, "not_found")
  })
})
