/**
 * SPEC "Messaging registration" (issue 17) through the HTTP API, on real Postgres when the suite has
 * one (PGlite otherwise): the business and sole-proprietor paths to a live text, every documented
 * 409 with nothing filed or charged, the PIN's expiry on the workspace clock, the resend limit, mock
 * mode, the poller, and the texting gate of `POST /messages`.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import * as SimulatedRegistry from "../../adapters/carrier/simulatedRegistry.ts"
import * as TelnyxCarrier from "../../adapters/carrier/telnyx.ts"
import * as TelnyxRegistry from "../../adapters/carrier/telnyxRegistry.ts"
import * as Smtp from "../../adapters/mail/smtp.ts"
import { SimulatedPayments } from "../../adapters/payments/simulated.ts"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { registrationGateMessages } from "../../core/billing/gates.ts"
import { NumberStore } from "../../core/numbers/model.ts"
import { gateMessage, layer as textingGate } from "../../core/registration/gate.ts"
import { pollOnce } from "../../core/registration/poller.ts"
import { makeTestApp } from "../support/app.ts"
import { brandUpdatePayload, campaignUpdatePayload, type FakeTelnyx, startFakeTelnyx } from "../support/fakeTelnyx.ts"
import { freshDatabase } from "../support/postgres.ts"
import { business, readyBilling, soleProprietor } from "../support/registration.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { bearer, expectError } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

/** Billing that passes every filing gate without a trial to end. */
const ready = readyBilling

let app: App
let close: () => Promise<void>
beforeAll(async () => {
  ;({ app, close } = await makeSqlTestApp("messaging_http"))
}, 60_000)
afterAll(() => close())

let nextNumber = 100
/** A workspace with the given billing, live and test keys with every scope, and its numbers (seeded, uncharged). */
const workspace = async (billing: Record<string, unknown> = ready, numbers: ReadonlyArray<string> = ["local"]) => {
  const { workspaceId } = await app.createWorkspace("Texting", billing)
  const live = (await app.createKey(workspaceId, { kind: "live" })).token
  const test = (await app.createKey(workspaceId, { kind: "test" })).token
  const e164s: Array<string> = []
  for (const type of numbers) {
    const e164 = type === "local"
      ? `+1217555${String(nextNumber++).padStart(4, "0")}`
      : `+1888555${String(nextNumber++).padStart(4, "0")}`
    const res = await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164, type } })
    expect(res.status, await res.clone().text()).toBe(201)
    e164s.push(e164)
  }
  return { workspaceId, live, test, numbers: e164s }
}

const post = (token: string, path: string, json?: unknown) =>
  app.fetch(`/v1/api${path}`, { method: "POST", headers: bearer(token), ...(json === undefined ? {} : { json }) })

const ok = async (res: Response, status = 200) => {
  expect(res.status, await res.clone().text()).toBe(status)
  return (await res.json()) as any
}

const messaging = async (token: string) =>
  (await ok(await app.fetch("/v1/api/messaging", { headers: bearer(token) }))).messaging
const refresh = async (token: string) => (await ok(await post(token, "/messaging/refresh"))).messaging
const ledger = async (workspaceId: string) =>
  ((await (await app.admin(`/workspaces/${workspaceId}/ledger`)).json()) as { charges: Array<any> }).charges
const audit = async (workspaceId: string) =>
  ((await (await app.admin(`/workspaces/${workspaceId}/audit-log`)).json()) as { entries: Array<any> }).entries
const mail = async (workspaceId: string) =>
  ((await (await app.admin(`/workspaces/${workspaceId}/mail`)).json()) as { mail: Array<any> }).mail
const billing = async (workspaceId: string) =>
  ((await (await app.admin(`/workspaces/${workspaceId}`)).json()) as { workspace: { billing: any } }).workspace.billing
const payments = (workspaceId: string) =>
  app.runtime.runPromise(Effect.flatMap(SimulatedPayments, (p) => p.charges(workspaceId)))

/** A text from the workspace's first number with a live key. */
const text = (token: string, from: string) =>
  post(token, "/messages", { to: "+12175550111", from, body: "Your plumber is on the way" })

describe("the business path, live key", () => {
  it("files (ending the trial, charging the plan and each local number's setup), moves through review to campaign_active, and then texts", async () => {
    const ws = await workspace({ ...ready, trial: true, identity: "submitted" }, ["local", "local", "toll_free"])
    expect(await messaging(ws.live)).toEqual({
      step: "none",
      canText: false,
      messagingProfileId: null,
      brand: null,
      campaign: null
    })
    await expectError(await text(ws.live, ws.numbers[0]!), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(gateMessage.not_filed)
    )

    const filed = await ok(
      await post(ws.live, "/messaging/registration", { business, acknowledge_trial_end: true }),
      201
    )
    expect(filed.mock).toBeUndefined()
    expect(filed.messaging).toMatchObject({
      step: "brand_pending",
      canText: false,
      brand: { status: "pending", identityStatus: "UNVERIFIED", failureReasons: [] },
      campaign: { status: "staged", useCase: "MIXED" }
    })
    expect(filed.messaging.brand).not.toHaveProperty("otpSentAt")
    expect(typeof filed.messaging.messagingProfileId).toBe("string")

    // The purchase: the trial is over, the plan and two setups (not the toll-free line) are charged once.
    expect((await billing(ws.workspaceId)).trial).toBe(false)
    const charges = await ledger(ws.workspaceId)
    expect(charges.map((c) => [c.kind, c.numberE164]).sort()).toEqual(
      [["plan", null], ["texting_setup", ws.numbers[0]], ["texting_setup", ws.numbers[1]]].sort()
    )
    expect(charges.filter((c) => c.kind === "texting_setup").every((c) => c.amountCents === 2000)).toBe(true)
    const paid = await payments(ws.workspaceId)
    expect(paid).toHaveLength(1)
    expect(paid[0]!.amountCents).toBe(charges.reduce((s, c) => s + c.amountCents, 0))
    const entries = await audit(ws.workspaceId)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ action: "messaging.registration.filed", detail: { mock: false } })
    // Filed with a key: the actor names it.
    expect(entries[0]!.actor).toBe(`key:${entries[0]!.detail.keyId}`)
    const receipt = (await mail(ws.workspaceId))[0]
    expect(receipt.to).toBe("owner@acme.example")
    expect(receipt.text).toContain("*****6789")
    expect(receipt.text).not.toContain("123456789")
    expect(receipt.text).not.toContain("2175550142")

    await expectError(await text(ws.live, ws.numbers[0]!), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(gateMessage.in_review)
    )
    const accepted = await refresh(ws.live)
    expect(accepted).toMatchObject({
      step: "campaign_pending",
      brand: { status: "accepted", identityStatus: "VERIFIED" },
      campaign: { status: "pending" }
    })
    expect(accepted.campaign.submittedAt).not.toBeNull()
    const active = await refresh(ws.live)
    expect(active).toMatchObject({ step: "campaign_active", canText: true, campaign: { status: "approved" } })
    expect(await messaging(ws.live)).toEqual(active)
    // Each local number's 4 USD/month add-on starts at approval (CONTRACT "Billing cycle and payments").
    expect(
      (await ledger(ws.workspaceId)).filter((c) => c.kind === "messaging_addon").map((c) => c.numberE164).sort()
    ).toEqual([ws.numbers[0], ws.numbers[1]].sort())

    // The local numbers are assigned to the campaign at approval; the registry confirms on the next read.
    await expectError(await text(ws.live, ws.numbers[0]!), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(`${ws.numbers[0]} is not yet assigned to the texting campaign`)
    )
    await refresh(ws.live)
    const sent = await ok(await text(ws.live, ws.numbers[0]!), 201)
    expect(sent.message.deliveryStatus).toBe("queued")
    expect(sent.simulated).toBeUndefined()
  })

  it("a rejected campaign can be filed again, charging only numbers not charged before", async () => {
    const ws = await workspace(ready, ["local"])
    await ok(await post(ws.test, "/test-helpers/registry", { campaign: "reject", reasons: ["Opt-in flow is unclear"] }))
    await ok(await post(ws.live, "/messaging/registration", { business }), 201)
    await refresh(ws.live)
    const failed = await refresh(ws.live)
    expect(failed).toMatchObject({
      step: "campaign_failed",
      canText: false,
      campaign: { status: "rejected", failureReasons: ["Opt-in flow is unclear"] }
    })
    await expectError(await text(ws.live, ws.numbers[0]!), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(gateMessage.rejected)
    )
    const added = "+12175559876"
    await ok(await app.admin(`/workspaces/${ws.workspaceId}/numbers`, { method: "POST", json: { e164: added } }), 201)

    // The same business: its accepted brand is kept (not filed again) and the new campaign goes in at once.
    const refiled = await ok(
      await post(ws.live, "/messaging/registration", { business, campaign: { useCase: "CUSTOMER_CARE" } }),
      201
    )
    expect(refiled.messaging).toMatchObject({
      step: "campaign_pending",
      brand: { status: "accepted", identityStatus: "VERIFIED" },
      campaign: { status: "pending", useCase: "CUSTOMER_CARE" }
    })
    const setups = (await ledger(ws.workspaceId)).filter((c) => c.kind === "texting_setup").map((c) => c.numberE164)
    expect(setups.sort()).toEqual([ws.numbers[0], added].sort())
    const entries = await audit(ws.workspaceId)
    expect(entries).toHaveLength(2)
    expect(entries[0].detail.brandKept).toBe(true)
    expect((await refresh(ws.live)).step).toBe("campaign_active")
  })

  it("after a rejected campaign, a changed business files a new brand", async () => {
    const ws = await workspace(ready, ["local"])
    await ok(await post(ws.test, "/test-helpers/registry", { campaign: "reject" }))
    await ok(await post(ws.live, "/messaging/registration", { business }), 201)
    await refresh(ws.live)
    expect((await refresh(ws.live)).step).toBe("campaign_failed")
    const refiled = await ok(
      await post(ws.live, "/messaging/registration", {
        business: { ...business, displayName: "Acme Plumbing & Heating" }
      }),
      201
    )
    expect(refiled.messaging).toMatchObject({ step: "brand_pending", brand: { status: "pending" } })
    expect((await audit(ws.workspaceId))[0].detail.brandKept).toBe(false)
  })
})

describe("the sole-proprietor path, live key", () => {
  it("waits for the PIN texted to the mobile, refuses a wrong one, accepts the right one, and texts once approved", async () => {
    const ws = await workspace(ready, ["local"])
    await ok(await post(ws.test, "/test-helpers/registry", { brand: "otp" }))
    await ok(await post(ws.live, "/messaging/registration", { business: soleProprietor }), 201)
    const waiting = await refresh(ws.live)
    expect(waiting).toMatchObject({
      step: "brand_otp_pending",
      brand: { status: "otp_pending", identityStatus: "SELF_DECLARED", otpMobileLast4: "0199" }
    })
    expect(Date.parse(waiting.brand.otpSentAt)).not.toBeNaN()
    await expectError(await text(ws.live, ws.numbers[0]!), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(gateMessage.awaiting_pin)
    )

    const { pin } = await ok(await app.fetch("/v1/api/test-helpers/otp", { headers: bearer(ws.test) }))
    expect(pin).toMatch(/^\d{6}$/)
    const wrong = pin === "000000" ? "111111" : "000000"
    await expectError(await post(ws.live, "/messaging/otp/verify", { pin: wrong }), 400, "invalid_argument")
    expect((await messaging(ws.live)).step).toBe("brand_otp_pending")

    const verified = (await ok(await post(ws.live, "/messaging/otp/verify", { pin }))).messaging
    expect(verified).toMatchObject({
      step: "campaign_pending",
      brand: { status: "accepted", identityStatus: "VERIFIED" },
      campaign: { status: "pending" }
    })
    await expectError(await post(ws.live, "/messaging/otp/verify", { pin }), 409, "failed_precondition")
    expect((await refresh(ws.live)).step).toBe("campaign_active")
    await refresh(ws.live) // the number's campaign assignment completes
    const sent = await ok(await text(ws.live, ws.numbers[0]!), 201)
    expect(sent.message.deliveryStatus).toBe("queued")
  })
})

describe("the PIN's expiry and the resend limit, on the workspace clock", () => {
  it("refuses a PIN older than 24 hours, resends one a minute (429 with Retry-After), and accepts a fresh PIN", async () => {
    const ws = await workspace(ready, [])
    await ok(await post(ws.test, "/test-helpers/registry", { brand: "otp" }))
    const filed = await ok(await post(ws.test, "/messaging/registration", { business: soleProprietor }), 201)
    expect(filed.mock).toBe(true)
    expect((await refresh(ws.test)).step).toBe("brand_otp_pending")
    const first = (await ok(await app.fetch("/v1/api/test-helpers/otp", { headers: bearer(ws.test) }))).pin

    const clock = await ok(await post(ws.test, "/test-helpers/clock", { advanceSeconds: 24 * 3600 + 1 }))
    expect(clock.clock.offsetSeconds).toBe(24 * 3600 + 1)
    const expired = await expectError(
      await post(ws.test, "/messaging/otp/verify", { pin: first }),
      400,
      "invalid_argument"
    )
    expect(expired.message).toContain("expired")

    // The filing's own PIN does not count: the first resend is allowed, a second within a minute is not.
    await ok(await post(ws.test, "/messaging/otp/resend"))
    const limited = await post(ws.test, "/messaging/otp/resend")
    await expectError(limited.clone(), 429, "resource_exhausted")
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    await ok(await post(ws.test, "/test-helpers/clock", { advanceSeconds: 61 }))
    await ok(await post(ws.test, "/messaging/otp/resend"))

    const fresh = (await ok(await app.fetch("/v1/api/test-helpers/otp", { headers: bearer(ws.test) }))).pin
    expect((await ok(await post(ws.test, "/messaging/otp/verify", { pin: fresh }))).messaging.step).toBe(
      "campaign_pending"
    )
  })

  it("five wrong PINs void the PIN (a refresh does not reset the count); a resent PIN verifies", async () => {
    const ws = await workspace(ready, [])
    await ok(await post(ws.test, "/test-helpers/registry", { brand: "otp" }))
    await ok(await post(ws.test, "/messaging/registration", { business: soleProprietor }), 201)
    await refresh(ws.test)
    const pin = (await ok(await app.fetch("/v1/api/test-helpers/otp", { headers: bearer(ws.test) }))).pin
    const wrong = pin === "000000" ? "111111" : "000000"
    for (let i = 0; i < 4; i++) {
      await expectError(await post(ws.test, "/messaging/otp/verify", { pin: wrong }), 400, "invalid_argument")
    }
    await refresh(ws.test)
    await expectError(await post(ws.test, "/messaging/otp/verify", { pin: wrong }), 400, "invalid_argument")
    const voided = await expectError(await post(ws.test, "/messaging/otp/verify", { pin }), 400, "invalid_argument")
    expect(voided.message).toContain("5 wrong PINs")
    await ok(await post(ws.test, "/messaging/otp/resend"))
    const fresh = (await ok(await app.fetch("/v1/api/test-helpers/otp", { headers: bearer(ws.test) }))).pin
    expect((await ok(await post(ws.test, "/messaging/otp/verify", { pin: fresh }))).messaging.step).toBe(
      "campaign_pending"
    )
  })

  it("the clock and the other helpers answer test keys only", async () => {
    const ws = await workspace(ready, [])
    await expectError(await post(ws.live, "/test-helpers/clock", { advanceSeconds: 60 }), 403, "permission_denied")
    await expectError(await post(ws.live, "/test-helpers/registry", { brand: "reject" }), 403, "permission_denied")
    await expectError(
      await app.fetch("/v1/api/test-helpers/otp", { headers: bearer(ws.live) }),
      403,
      "permission_denied"
    )
    await expectError(await app.fetch("/v1/api/test-helpers/otp", { headers: bearer(ws.test) }), 404, "not_found")
    await expectError(await post(ws.test, "/test-helpers/clock", { advanceSeconds: 0 }), 400, "invalid_argument")
  })

  it("moves the idempotency window of test keys: a key replays within 24 hours and runs afresh after", async () => {
    const ws = await workspace(ready, ["local"])
    const send = () =>
      app.fetch("/v1/api/messages", {
        method: "POST",
        headers: { ...bearer(ws.test), "idempotency-key": "k1" },
        json: { to: "+12175550111", from: ws.numbers[0], body: "hi" }
      })
    const first = await ok(await send(), 201)
    const replay = await send()
    expect(replay.headers.get("idempotency-replayed")).toBe("true")
    expect((await replay.json()).message.id).toBe(first.message.id)
    await ok(await post(ws.test, "/test-helpers/clock", { advanceSeconds: 24 * 3600 + 60 }))
    const again = await send()
    expect(again.headers.get("idempotency-replayed")).toBeNull()
    expect((await ok(again, 201)).message.id).not.toBe(first.message.id)
  })
})

describe("every documented 409 of the registration endpoints, with nothing filed or charged", () => {
  const nothingHappened = async (ws: { workspaceId: string; live: string }) => {
    expect((await messaging(ws.live)).step).toBe("none")
    expect(await ledger(ws.workspaceId)).toEqual([])
    expect(await payments(ws.workspaceId)).toEqual([])
    expect(await audit(ws.workspaceId)).toEqual([])
    expect(await mail(ws.workspaceId)).toEqual([])
  }
  const cases: ReadonlyArray<[string, Record<string, unknown>, boolean, string]> = [
    [
      "a trial without acknowledge_trial_end",
      { ...ready, trial: true, identity: "submitted" },
      false,
      registrationGateMessages.acknowledgeTrialEnd
    ],
    ["no payment method", { ...ready, paymentMethod: false }, true, registrationGateMessages.paymentMethod],
    ["a canceled subscription", { ...ready, subscription: "canceled" }, true, registrationGateMessages.subscription],
    [
      "a trial without an identity check",
      { ...ready, trial: true, identity: "none" },
      true,
      registrationGateMessages.identity
    ],
    ["a declined card", { ...ready, cardDeclines: true }, true, "Your card was declined"]
  ]
  for (const [name, state, acknowledge, message] of cases) {
    it(name, async () => {
      const ws = await workspace(state, ["local"])
      const error = await expectError(
        await post(ws.live, "/messaging/registration", { business, acknowledge_trial_end: acknowledge }),
        409,
        "failed_precondition"
      )
      expect(error.message).toBe(message)
      if (message !== registrationGateMessages.acknowledgeTrialEnd && message !== "Your card was declined") {
        expect(error.message.startsWith("Add a payment method")).toBe(true)
      }
      await nothingHappened(ws)
      expect((await billing(ws.workspaceId)).trial).toBe(state["trial"])
    })
  }

  it("a filing while one is in review, and the PIN endpoints when no PIN is awaited", async () => {
    const ws = await workspace(ready, ["local"])
    await expectError(await post(ws.live, "/messaging/otp/verify", { pin: "123456" }), 409, "failed_precondition")
    await expectError(await post(ws.live, "/messaging/otp/resend"), 409, "failed_precondition")
    await nothingHappened(ws)
    await ok(await post(ws.live, "/messaging/registration", { business }), 201)
    const charged = await ledger(ws.workspaceId)
    const again = await expectError(
      await post(ws.live, "/messaging/registration", { business }),
      409,
      "failed_precondition"
    )
    expect(again.message).toContain("already in progress")
    expect(await ledger(ws.workspaceId)).toEqual(charged)
    expect(await payments(ws.workspaceId)).toHaveLength(1)
  })

  it("two filings at once: one is filed and charged, the other is refused", async () => {
    const ws = await workspace(ready, ["local"])
    const answers = await Promise.all([
      post(ws.live, "/messaging/registration", { business }),
      post(ws.live, "/messaging/registration", { business })
    ])
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409])
    expect(await payments(ws.workspaceId)).toHaveLength(1)
    expect((await ledger(ws.workspaceId)).filter((c) => c.kind === "texting_setup")).toHaveLength(1)
  })
})

describe("mock mode", () => {
  it("test keys and mock: true skip the gates and charge nothing; test keys then text, live keys do not", async () => {
    // A fresh trial workspace with no card: every live gate would refuse.
    const ws = await workspace({ plan: "standard", trial: true, paymentMethod: false, identity: "none" }, ["local"])
    const filed = await ok(await post(ws.live, "/messaging/registration", { business, mock: true }), 201)
    expect(filed.mock).toBe(true)
    expect(await ledger(ws.workspaceId)).toEqual([])
    expect(await payments(ws.workspaceId)).toEqual([])
    expect((await billing(ws.workspaceId)).trial).toBe(true)
    const entries = await audit(ws.workspaceId)
    expect(entries.find((e) => e.action === "messaging.registration.filed").detail.mock).toBe(true)
    // No owner email on this workspace: no receipt, and the audit log says why.
    expect(entries.find((e) => e.action === "messaging.receipt.unsent")).toMatchObject({
      actor: "system",
      detail: { reason: expect.stringContaining("ownerEmail") }
    })
    expect(await mail(ws.workspaceId)).toEqual([])
    await refresh(ws.test)
    expect((await refresh(ws.test)).step).toBe("campaign_active")
    expect(await ledger(ws.workspaceId)).toEqual([])
    expect((await ok(await text(ws.test, ws.numbers[0]!), 201)).message.deliveryStatus).toBe("simulated")
    await expectError(await text(ws.live, ws.numbers[0]!), 409, "failed_precondition")
  })

  it("rejects bad input with 400 naming the field, and leaves the step unchanged", async () => {
    const ws = await workspace(ready, [])
    const error = await expectError(
      await post(ws.test, "/messaging/registration", { business: { ...business, ein: "12-345" } }),
      400,
      "invalid_argument"
    )
    expect(error.message).toContain("ein")
    await expectError(
      await post(ws.test, "/messaging/registration", {
        business,
        campaign: { samples: ["a", "b", "c", "d", "e", "f"] }
      }),
      400,
      "invalid_argument"
    )
    await expectError(await post(ws.test, "/messaging/registration", { business, extra: 1 }), 400, "invalid_argument")
    // Every missing field in one answer.
    const missing = await expectError(
      await post(ws.test, "/messaging/registration", { business: {} }),
      400,
      "invalid_argument"
    )
    expect(missing.message).toContain("business.displayName")
    expect(missing.message).toContain("business.email")
    expect((await messaging(ws.test)).step).toBe("none")
  })
})

describe("test keys never open a live path (CONTRACT)", () => {
  it("a mock registration lets test keys text, not live keys; a live filing replaces it; a mock one over a live one is 409", async () => {
    const { workspaceId } = await app.createWorkspace("Mock then live", ready)
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    const test = (await app.createKey(workspaceId, { kind: "test" })).token
    await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+12175550156" } })
    const send = (key: string) =>
      app.fetch("/v1/api/messages", {
        method: "POST",
        headers: bearer(key),
        json: { to: "+12175550111", from: "+12175550156", body: "hi" }
      })
    const refresh = () => app.fetch("/v1/api/messaging/refresh", { method: "POST", headers: bearer(live) })
    expect((await ok(await post(test, "/messaging/registration", { business }), 201)).mock).toBe(true)
    await refresh()
    const status = (await ok(await refresh())).messaging
    expect(status).toMatchObject({ step: "campaign_active", mock: true })
    expect((await ok(await send(test), 201)).message.deliveryStatus).toBe("simulated")
    await expectError(await send(live), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(
        "Texting is not registered for live messages: the registration on file was filed in mock mode"
      )
    )
    // A live filing replaces the mock registration, is charged as a first filing, and opens texting once approved.
    const filed = await ok(await post(live, "/messaging/registration", { business }), 201)
    expect(filed.mock).toBeUndefined()
    expect(filed.messaging.step).toBe("brand_pending")
    expect(filed.messaging.mock).toBeUndefined()
    expect((await ledger(workspaceId)).map((c) => c.kind)).toEqual(["texting_setup"])
    // With a live registration on file (in review or active), a mock filing is refused and changes nothing.
    for (const key of [test, live]) {
      await expectError(
        await post(key, "/messaging/registration", key === live ? { business, mock: true } : { business }),
        409,
        "failed_precondition"
      ).then((e) => expect(e.message).toBe("A live registration is on file"))
    }
    await refresh()
    expect((await ok(await refresh())).messaging).toMatchObject({ step: "campaign_active", canText: true })
    expect((await ok(await refresh())).messaging.mock).toBeUndefined()
    expect((await ok(await send(live), 201)).message.deliveryStatus).toBe("queued")
    await expectError(await post(test, "/messaging/registration", { business }), 409, "failed_precondition")
  })

  it("a number added with a test key texts and calls with test keys only; live keys get 409 and prefer an ordered number", async () => {
    const { workspaceId } = await app.createWorkspace("Test numbers", ready)
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    const test = (await app.createKey(workspaceId, { kind: "test" })).token
    const bought = await ok(await post(test, "/numbers", { phoneNumber: "+12175550171" }), 201)
    expect(bought.simulated).toBe(true)
    await ok(await post(live, "/messaging/registration", { business }), 201)
    // The live filing charges no texting setup for a number that was never ordered.
    expect((await ledger(workspaceId)).filter((c) => c.kind === "texting_setup")).toEqual([])
    for (let i = 0; i < 3; i++) await app.fetch("/v1/api/messaging/refresh", { method: "POST", headers: bearer(live) })
    expect((await messaging(live)).step).toBe("campaign_active")
    const notOrdered =
      "+12175550171 was added with a test key and is not ordered at the carrier; buy it with a live key"
    const text = (key: string, from?: string) =>
      app.fetch("/v1/api/messages", {
        method: "POST",
        headers: bearer(key),
        json: { to: "+12175550111", body: "hi", ...(from === undefined ? {} : { from }) }
      })
    expect((await ok(await text(test, "+12175550171"), 201)).message.deliveryStatus).toBe("simulated")
    await ok(await app.fetch("/v1/api/agent", { method: "PATCH", headers: bearer(live), json: { name: "Ava" } }))
    await ok(await post(live, "/agent/publish"))
    for (const from of ["+12175550171", undefined]) {
      await expectError(await text(live, from), 409, "failed_precondition").then((e) =>
        expect(e.message).toBe(notOrdered)
      )
    }
    await expectError(
      await post(live, "/calls", { to: "+12175550111", from: "+12175550171" }),
      409,
      "failed_precondition"
    ).then((e) => expect(e.message).toBe(notOrdered))
    // A seeded (live) number: the default sender for live keys; the test number stays refused by name.
    await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+12175550172" } })
    // Assigned to the campaign on the next two reads (asked for, then confirmed); never the test number.
    for (let i = 0; i < 2; i++) await app.fetch("/v1/api/messaging/refresh", { method: "POST", headers: bearer(live) })
    const sent = await ok(await text(live), 201)
    expect(sent.message.deliveryStatus).toBe("queued")
    const thread = await ok(await app.fetch(`/v1/api/conversations/${sent.conversationId}`, { headers: bearer(live) }))
    expect(thread.conversation.numberE164).toBe("+12175550172")
    await expectError(await text(live, "+12175550171"), 409, "failed_precondition")
  })
})

describe("campaign assignment (CONTRACT, \"On a real carrier\")", () => {
  const assignmentOf = (e164: string) =>
    app.runtime.runPromise(
      Effect.map(
        Effect.flatMap(NumberStore, (numbers) => numbers.findByE164(e164)),
        (found) => Option.getOrThrow(found).campaignAssignment
      )
    )
  const notAssigned = (e164: string) => `${e164} is not yet assigned to the texting campaign`

  it("at approval every ordered local number is assigned (pending, then assigned on the next read); sends wait for it; toll-free and test numbers are never assigned", async () => {
    const ws = await workspace(ready, ["local", "local", "toll_free"])
    await ok(await post(ws.test, "/numbers", { phoneNumber: "+12175550181" }), 201)
    await ok(await post(ws.live, "/messaging/registration", { business }), 201)
    await refresh(ws.live)
    for (const e164 of [...ws.numbers, "+12175550181"]) expect(await assignmentOf(e164)).toBeNull()
    expect((await refresh(ws.live)).step).toBe("campaign_active")
    expect(await assignmentOf(ws.numbers[0]!)).toBe("pending")
    expect(await assignmentOf(ws.numbers[1]!)).toBe("pending")
    expect(await assignmentOf(ws.numbers[2]!)).toBeNull()
    expect(await assignmentOf("+12175550181")).toBeNull()
    for (const e164 of ws.numbers.slice(0, 2)) {
      await expectError(await text(ws.live, e164), 409, "failed_precondition").then((e) =>
        expect(e.message).toBe(notAssigned(e164))
      )
    }
    // Test keys never wait for it: they never reach a carrier.
    expect((await ok(await text(ws.test, ws.numbers[0]!), 201)).simulated).toBe(true)

    await refresh(ws.live)
    for (const e164 of ws.numbers.slice(0, 2)) {
      expect(await assignmentOf(e164)).toBe("assigned")
      expect((await ok(await text(ws.live, e164), 201)).message.deliveryStatus).toBe("queued")
    }
    expect(await assignmentOf(ws.numbers[2]!)).toBeNull()
    expect(await assignmentOf("+12175550181")).toBeNull()
  })

  it("a local number bought live after approval is assigned by the poller before it texts", async () => {
    const ws = await workspace(ready, ["local"])
    await ok(await post(ws.live, "/messaging/registration", { business }), 201)
    for (let i = 0; i < 3; i++) await refresh(ws.live)
    expect(await assignmentOf(ws.numbers[0]!)).toBe("assigned")

    const { available } = await ok(
      await app.fetch("/v1/api/numbers/available?type=local&limit=1", { headers: bearer(ws.live) })
    )
    const bought = await ok(await post(ws.live, "/numbers", { phoneNumber: available[0].phone_number }), 201)
    const e164 = bought.number.e164 as string
    expect(bought.simulated).toBeUndefined()
    expect(await assignmentOf(e164)).toBeNull()
    await expectError(await text(ws.live, e164), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(notAssigned(e164))
    )
    // Nobody calls refresh: the poller asks for the assignment, then reads it done.
    await app.runtime.runPromise(pollOnce)
    expect(await assignmentOf(e164)).toBe("pending")
    await expectError(await text(ws.live, e164), 409, "failed_precondition")
    await app.runtime.runPromise(pollOnce)
    expect(await assignmentOf(e164)).toBe("assigned")
    expect((await ok(await text(ws.live, e164), 201)).message.deliveryStatus).toBe("queued")
    // The workspace's first number was never asked for again.
    expect(await assignmentOf(ws.numbers[0]!)).toBe("assigned")
  })

  it("the simulator refuses an assignment when the test helper says `fail`: the number stays unable to text live, with an audit entry", async () => {
    const ws = await workspace(ready, ["local"])
    await ok(await post(ws.test, "/test-helpers/registry", { assignment: "fail", reasons: ["Not eligible"] }))
    await ok(await post(ws.live, "/messaging/registration", { business }), 201)
    for (let i = 0; i < 3; i++) await refresh(ws.live)
    expect(await assignmentOf(ws.numbers[0]!)).toBe("failed")
    await expectError(await text(ws.live, ws.numbers[0]!), 409, "failed_precondition").then((e) =>
      expect(e.message).toBe(notAssigned(ws.numbers[0]!))
    )
    const { entries } = await ok(await app.admin(`/workspaces/${ws.workspaceId}/audit-log`))
    expect(entries.filter((e: any) => e.action === "messaging.number.assignment_failed")).toMatchObject([{
      detail: { e164: ws.numbers[0], reasons: ["Not eligible"] }
    }])
  })
})

describe("the pre-approved campaign rule (PREAPPROVED_CAMPAIGN)", () => {
  it("on, a registration in carrier review texts from a live key; a PIN still awaited or a rejection does not", async () => {
    const preApproved = await makeTestApp({
      registration: textingGate({ preApprovedCampaign: true })
    })
    try {
      const { workspaceId } = await preApproved.createWorkspace("Pre-approved", ready)
      const live = (await preApproved.createKey(workspaceId, { kind: "live" })).token
      const test = (await preApproved.createKey(workspaceId, { kind: "test" })).token
      await preApproved.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+12175550155" } })
      const send = () =>
        preApproved.fetch("/v1/api/messages", {
          method: "POST",
          headers: bearer(live),
          json: { to: "+12175550111", from: "+12175550155", body: "hi" }
        })
      await expectError(await send(), 409, "failed_precondition")
      await preApproved.fetch("/v1/api/test-helpers/registry", {
        method: "POST",
        headers: bearer(test),
        json: { brand: "otp" }
      })
      expect(
        (await preApproved.fetch("/v1/api/messaging/registration", {
          method: "POST",
          headers: bearer(live),
          json: { business: soleProprietor }
        })).status
      ).toBe(201)
      // brand_pending: in carrier review, on the pre-approved campaign.
      expect((await ok(await send(), 201)).message.deliveryStatus).toBe("queued")
      await preApproved.fetch("/v1/api/messaging/refresh", { method: "POST", headers: bearer(live) })
      await expectError(await send(), 409, "failed_precondition").then((e) =>
        expect(e.message).toBe(gateMessage.awaiting_pin)
      )
    } finally {
      await preApproved.close()
    }
  })
})

describe("progress without a client", () => {
  it("the poller moves registrations in review forward with nobody calling refresh", async () => {
    const ws = await workspace(ready, ["local"])
    await ok(await post(ws.live, "/messaging/registration", { business }), 201)
    for (let i = 0; i < 5 && (await messaging(ws.live)).step !== "campaign_active"; i++) {
      await app.runtime.runPromise(pollOnce)
    }
    expect(await messaging(ws.live)).toMatchObject({ step: "campaign_active", canText: true })
    expect((await ledger(ws.workspaceId)).filter((c) => c.kind === "messaging_addon")).toHaveLength(1)
    // Polling again changes nothing and charges nothing more.
    await app.runtime.runPromise(pollOnce)
    expect((await ledger(ws.workspaceId)).filter((c) => c.kind === "messaging_addon")).toHaveLength(1)
  })
})

describe("the receipt, through a real SMTP server", () => {
  it("reaches the owner with a masked application: no full EIN, no full phone number", async () => {
    const received: Array<{ to: Array<string>; raw: string }> = []
    const smtp = new SMTPServer({
      authOptional: true,
      // Plain SMTP: without STARTTLS, nodemailer does not try the server's self-signed certificate.
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData: (stream, session, cb) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (c: Buffer) => chunks.push(c))
        stream.on("end", () => {
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString("utf8")
          })
          cb()
        })
      }
    })
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve))
    const port = (smtp.server.address() as AddressInfo).port
    const mailed = await makeTestApp({
      mailer: Smtp.layer({
        url: Redacted.make(`smtp://127.0.0.1:${port}`),
        from: "Switchboard <no-reply@switchboard.test>"
      }).pipe(Layer.orDie)
    })
    try {
      const { workspaceId } = await mailed.createWorkspace("Receipts", ready)
      const live = (await mailed.createKey(workspaceId, { kind: "live" })).token
      await mailed.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+12175550123" } })
      const res = await mailed.fetch("/v1/api/messaging/registration", {
        method: "POST",
        headers: bearer(live),
        json: { business: { ...business, mobilePhone: "+12175550188" } }
      })
      expect(res.status, await res.clone().text()).toBe(201)
      expect(received).toHaveLength(1)
      expect(received[0]!.to).toEqual(["owner@acme.example"])
      // Quoted-printable may fold lines: compare the decoded text with soft breaks removed.
      const body = received[0]!.raw.replace(/=\r?\n/g, "")
      expect(body).toContain("Subject: Texting registration filed for Acme Plumbing")
      expect(body).toContain("*****6789")
      expect(body).not.toMatch(/12-?3456789/)
      expect(body).not.toContain("2175550142")
      expect(body).not.toContain("2175550188")
      expect(body).toContain("Texting setup for +12175550123")
    } finally {
      await mailed.close()
      await new Promise<void>((resolve) => smtp.close(() => resolve()))
    }
  })
})

describe("with the Telnyx 10DLC registry (the fake Telnyx server)", () => {
  let fake: FakeTelnyx
  let telnyx: App
  const registry = () =>
    Layer.merge(
      TelnyxRegistry.layer({
        apiKey: Redacted.make(fake.apiKey),
        messagingProfileId: "profile-live",
        baseUrl: fake.baseUrl
      }),
      SimulatedRegistry.layerMock
    )
  beforeAll(async () => {
    fake = await startFakeTelnyx()
    telnyx = await makeTestApp({ registry: registry(), telnyxPublicKey: fake.publicKey })
  })
  afterAll(async () => {
    await telnyx.close()
    await fake.stop()
  })
  const liveWorkspace = async (on: App = telnyx) => {
    const { workspaceId } = await on.createWorkspace("Telnyx texting", ready)
    await on.admin(`/workspaces/${workspaceId}/numbers`, {
      method: "POST",
      json: { e164: `+1217555${String(nextNumber++).padStart(4, "0")}` }
    })
    return { workspaceId, live: (await on.createKey(workspaceId, { kind: "live" })).token }
  }
  const file = (on: App, token: string) =>
    on.fetch("/v1/api/messaging/registration", { method: "POST", headers: bearer(token), json: { business } })

  it("a filing the registry refuses is 409 in the registry's words, and its charge is refunded", async () => {
    const ws = await liveWorkspace()
    fake.script({
      type: "validation",
      detail: [{ loc: ["body", "state"], msg: "State must be a 2-letter code", type: "value_error" }]
    })
    const error = await expectError(await file(telnyx, ws.live), 409, "failed_precondition")
    expect(error.message).toContain("State must be a 2-letter code")
    expect((await telnyx.fetch("/v1/api/messaging", { headers: bearer(ws.live) }).then((r) => r.json())).messaging.step)
      .toBe("none")
    expect(await telnyx.admin(`/workspaces/${ws.workspaceId}/ledger`).then((r) => r.json())).toEqual({ charges: [] })
    const paid = await telnyx.runtime.runPromise(Effect.flatMap(SimulatedPayments, (p) => p.charges(ws.workspaceId)))
    expect(paid.map((c) => c.refunded)).toEqual([true])
  })

  it("a signed 10DLC webhook moves the registration forward with no refresh", async () => {
    const ws = await liveWorkspace()
    const filed = await ok(await file(telnyx, ws.live), 201)
    expect(filed.messaging.messagingProfileId).toBe("profile-live")
    const brandId = [...fake.brands.keys()].at(-1)!
    const deliver = (eventType: string, payload: unknown) => {
      const hook = fake.signedWebhook(eventType, payload)
      return telnyx.fetch("/v1/carrier/telnyx", { method: "POST", headers: hook.headers, body: hook.rawBody })
    }
    expect((await deliver("10dlc.brand.update", brandUpdatePayload(brandId))).status).toBe(200)
    const afterBrand =
      (await telnyx.fetch("/v1/api/messaging", { headers: bearer(ws.live) }).then((r) => r.json())).messaging
    expect(afterBrand).toMatchObject({ step: "campaign_pending", brand: { status: "accepted" } })
    const campaignId = [...fake.campaigns.keys()].at(-1)!
    expect((await deliver("10dlc.campaign.update", campaignUpdatePayload(campaignId, brandId))).status).toBe(200)
    expect((await telnyx.fetch("/v1/api/messaging", { headers: bearer(ws.live) }).then((r) => r.json())).messaging)
      .toMatchObject({ step: "campaign_active", canText: true })
  })

  it("at approval the numbers are assigned at Telnyx (phone_number_campaigns), followed by a 10DLC webhook; a number Telnyx refuses stays unassigned and cannot text", async () => {
    const config = { apiKey: Redacted.make(fake.apiKey), messagingProfileId: "profile-live", baseUrl: fake.baseUrl }
    const onTelnyx = await makeTestApp({
      registry: registry(),
      carrier: TelnyxCarrier.layer(config),
      telnyxPublicKey: fake.publicKey
    })
    try {
      const { workspaceId } = await onTelnyx.createWorkspace("Telnyx assignment", ready)
      const live = (await onTelnyx.createKey(workspaceId, { kind: "live" })).token
      const [onAccount, stranger] = ["+12175550191", "+12175550192"]
      // One number is on the Telnyx account (ordered earlier); the other was seeded here only.
      fake.addNumber(onAccount)
      for (const e164 of [onAccount, stranger]) {
        await onTelnyx.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164 } })
      }
      const call = (path: string, json?: unknown) =>
        onTelnyx.fetch(`/v1/api${path}`, {
          method: "POST",
          headers: bearer(live),
          ...(json === undefined ? {} : { json })
        })
      const send = (from: string) => call("/messages", { to: "+12175550111", from, body: "On our way" })
      await ok(await call("/messaging/registration", { business }), 201)
      await ok(await call("/messaging/refresh"))
      expect((await ok(await call("/messaging/refresh"))).messaging.step).toBe("campaign_active")
      const campaignId = [...fake.campaigns.keys()].at(-1)!
      // (The fake serves this describe's other tests too: only this workspace's numbers.)
      const asked = fake.requests.filter((r) =>
        r.method === "POST" && r.path === "/v2/10dlc/phone_number_campaigns" &&
        [onAccount, stranger].includes(String((r.json as Record<string, unknown>)["phoneNumber"]))
      )
      expect(asked.map((r) => r.json)).toEqual([
        { phoneNumber: onAccount, campaignId },
        { phoneNumber: stranger, campaignId }
      ])
      expect(fake.assignments.get(onAccount)?.["assignmentStatus"]).toBe("PENDING_ASSIGNMENT")
      for (const from of [onAccount, stranger]) {
        await expectError(await send(from), 409, "failed_precondition").then((e) =>
          expect(e.message).toBe(`${from} is not yet assigned to the texting campaign`)
        )
      }
      // Telnyx says the number changed: its assignment is read again, and it texts.
      const hook = fake.signedWebhook("10dlc.phone_number.update", { phoneNumber: onAccount, campaignId })
      const delivered = await onTelnyx.fetch("/v1/carrier/telnyx", {
        method: "POST",
        headers: hook.headers,
        body: hook.rawBody
      })
      expect(delivered.status).toBe(200)
      expect(fake.assignments.get(onAccount)?.["assignmentStatus"]).toBe("ASSIGNED")
      const sent = await ok(await send(onAccount), 201)
      expect(sent.message.deliveryStatus).toBe("queued")
      // Telnyx took it as registered 10DLC traffic (no 40010).
      expect([...fake.messages.values()].at(-1)?.["errors"]).toEqual([])
      // Telnyx refused the number it does not have: the assignment failed, and the number never texts live.
      const failed = await onTelnyx.runtime.runPromise(
        Effect.flatMap(NumberStore, (numbers) => numbers.findByE164(stranger))
      )
      expect(Option.getOrThrow(failed).campaignAssignment).toBe("failed")
      const entries = ((await (await onTelnyx.admin(`/workspaces/${workspaceId}/audit-log`)).json()) as {
        entries: Array<any>
      }).entries
      expect(entries.filter((e) => e.action === "messaging.number.assignment_failed")).toMatchObject([{
        actor: "system",
        detail: { e164: stranger, campaignId, reasons: [expect.stringContaining("not a phone number on this account")] }
      }])
      await ok(await call("/messaging/refresh"))
      await expectError(await send(stranger), 409, "failed_precondition")
      expect(fake.requests.filter((r) => r.path === "/v2/messages" && r.method === "POST")).toHaveLength(1)
    } finally {
      await onTelnyx.close()
    }
  })

  it("two processes polling one database move each registration once and charge its add-on once", async () => {
    const url = inject("postgresUrl")
    if (url === null) return
    const db = await freshDatabase(url, "messaging_two_processes")
    const processes = [
      await makeTestApp({ registry: registry(), stores: sqlStores(Postgres.layer({ url: Redacted.make(db.url) })) }),
      await makeTestApp({ registry: registry(), stores: sqlStores(Postgres.layer({ url: Redacted.make(db.url) })) })
    ]
    try {
      const workspaces = []
      for (let i = 0; i < 4; i++) {
        const ws = await liveWorkspace(processes[0])
        await ok(await file(processes[0]!, ws.live), 201)
        workspaces.push(ws)
      }
      // Both processes poll at once, rounds until nothing is left in review.
      for (let round = 0; round < 4; round++) await Promise.all(processes.map((p) => p.runtime.runPromise(pollOnce)))
      for (const ws of workspaces) {
        expect(
          (await processes[1]!.fetch("/v1/api/messaging", { headers: bearer(ws.live) }).then((r) => r.json())).messaging
            .step
        ).toBe("campaign_active")
        const charges = (await processes[1]!.admin(`/workspaces/${ws.workspaceId}/ledger`).then((r) => r.json()))
          .charges as Array<{ kind: string }>
        expect(charges.filter((c) => c.kind === "messaging_addon")).toHaveLength(1)
        expect(charges.filter((c) => c.kind === "texting_setup")).toHaveLength(1)
      }
      // One campaign filed per brand at the registry, whichever process filed it.
      expect(fake.campaigns.size).toBeGreaterThanOrEqual(4)
      const perBrand = new Map<string, number>()
      for (const c of fake.campaigns.values()) {
        perBrand.set(String(c["brandId"]), (perBrand.get(String(c["brandId"])) ?? 0) + 1)
      }
      expect([...perBrand.values()].every((n) => n === 1)).toBe(true)
    } finally {
      for (const p of processes) await p.close()
      await db.drop()
    }
  })
})
