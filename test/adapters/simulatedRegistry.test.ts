/**
 * The simulated 10DLC registry beyond the port's contract (carrier.registry.contract.test.ts): each
 * outcome of the `registry` test helper used once, default reasons, `otp` for sole proprietors only,
 * PIN times on the workspace's clock, what it recalls after a restart, and workspaces kept apart.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as Simulated from "../../adapters/carrier/simulatedRegistry.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { type Application, decodeApplication } from "../../core/registration/input.ts"
import { type NextOutcome, OTP_TTL_MILLIS, Registry, RegistrySimulator } from "../../core/registration/registry.ts"
import { hold } from "./stores.contract.ts"

const application = (business: Record<string, unknown>): Application => {
  const decoded = decodeApplication({
    business: {
      displayName: "Acme Plumbing",
      email: "owner@acme.example",
      vertical: "PROFESSIONAL",
      street: "1 Main St",
      city: "Austin",
      state: "TX",
      postalCode: "78701",
      ...business
    }
  })
  if (decoded._tag === "Left") throw new Error(decoded.left.message)
  return decoded.right
}
const business = application({ companyName: "Acme Plumbing LLC", ein: "12-3456789" })
const soleProprietor = application({
  entityType: "SOLE_PROPRIETOR",
  firstName: "Ada",
  lastName: "Lovelace",
  mobilePhone: "+15125550123"
})

/** Sets the workspace's next outcome, files the brand and reads it once, as a refresh would. */
const reviewBrand = (ws: string, outcome: NextOutcome, app: Application) =>
  Effect.gen(function*() {
    const registry = yield* Registry
    yield* (yield* RegistrySimulator).setNextOutcome(ws, outcome)
    const filed = yield* registry.fileBrand(ws, app.business)
    return yield* registry.brandStatus(ws, filed.brandId)
  })

/** A sole-proprietor brand waiting for the PIN texted at 2026-01-05T10:00Z, and that PIN. */
const waitingForPin = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-01-05T10:00:00.000Z"))
  const ws = crypto.randomUUID()
  const brand = yield* reviewBrand(ws, { brand: "otp" }, soleProprietor)
  const sent = Option.getOrThrow(yield* (yield* RegistrySimulator).lastOtp(ws))
  return { ws, brand, sent }
})

/** The simulator's account, the NumberStore, outlives a registry instance (a restart). */
const withAccount = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, MemoryStores.layer)
const run = <A, E>(effect: Effect.Effect<A, E, Registry | RegistrySimulator>) =>
  withAccount(Effect.provide(effect, Simulated.layer))

describe("simulated registry", () => {
  it.effect("by default a business brand is accepted and its campaign approved, each on the status read after filing", () =>
    run(
      Effect.gen(function*() {
        const registry = yield* Registry
        const ws = crypto.randomUUID()
        const filed = yield* registry.fileBrand(ws, business.business)
        assert.strictEqual(filed.status, "pending")
        const brand = yield* registry.brandStatus(ws, filed.brandId)
        assert.strictEqual(filed.identityStatus, "UNVERIFIED")
        assert.deepStrictEqual(brand, { ...filed, status: "accepted", identityStatus: "VERIFIED" })
        const campaign = yield* registry.fileCampaign(ws, filed.brandId, business.campaign)
        assert.strictEqual(campaign.status, "pending")
        assert.strictEqual((yield* registry.campaignStatus(ws, campaign.campaignId)).status, "approved")
        // settled reviews stay settled
        assert.strictEqual((yield* registry.campaignStatus(ws, campaign.campaignId)).status, "approved")
        assert.isTrue(Option.isNone(yield* (yield* RegistrySimulator).lastOtp(ws)))
        // a sole proprietor too: a PIN only when the helper asks for one
        assert.strictEqual((yield* reviewBrand(ws, {}, soleProprietor)).status, "accepted")
        assert.isTrue(Option.isNone(yield* (yield* RegistrySimulator).lastOtp(ws)))
      })
    ))

  it.effect("after a restart it recalls its own brands and campaigns (accepted, approved, or waiting for a new PIN), not other ids", () =>
    Effect.gen(function*() {
      const ws = crypto.randomUUID()
      const before = yield* run(
        Effect.gen(function*() {
          const registry = yield* Registry
          const brand = yield* registry.fileBrand(ws, business.business)
          yield* registry.brandStatus(ws, brand.brandId)
          const campaign = yield* registry.fileCampaign(ws, brand.brandId, business.campaign)
          const waiting = yield* reviewBrand(ws, { brand: "otp" }, soleProprietor)
          return { brand, campaign, waiting }
        })
      )
      // A new instance: the process restarted.
      yield* run(
        Effect.gen(function*() {
          const registry = yield* Registry
          assert.strictEqual((yield* registry.brandStatus(ws, before.brand.brandId)).status, "accepted")
          assert.strictEqual((yield* registry.campaignStatus(ws, before.campaign.campaignId)).status, "approved")
          const resent = yield* registry.sendOtp(ws, before.waiting.brandId)
          assert.strictEqual(resent.status, "otp_pending")
          const pin = Option.getOrThrow(yield* (yield* RegistrySimulator).lastOtp(ws)).pin
          assert.strictEqual((yield* registry.verifyOtp(ws, before.waiting.brandId, pin)).status, "accepted")
          const unknown = yield* Effect.flip(registry.brandStatus(ws, "brand-of-someone-else"))
          assert.strictEqual(unknown._tag, "RegistryError")
          assert.strictEqual((yield* Effect.flip(registry.campaignStatus(ws, "campaign-x")))._tag, "RegistryError")
        })
      )
    }))

  it.effect("a held number it never assigned (before a restart) is recalled as assigned; a `fail` assignment is used once", () =>
    withAccount(
      Effect.gen(function*() {
        const ws = crypto.randomUUID()
        yield* hold(["+15125550101", "+15125550102", "+15125550103"])
        const instance = <A, E>(effect: Effect.Effect<A, E, Registry | RegistrySimulator>) =>
          Effect.provide(effect, Simulated.layer)
        const campaignId = yield* instance(
          Effect.gen(function*() {
            const registry = yield* Registry
            const brand = yield* reviewBrand(ws, {}, business)
            const { campaignId } = yield* registry.fileCampaign(ws, brand.brandId, business.campaign)
            yield* registry.campaignStatus(ws, campaignId)
            yield* registry.assignNumber(ws, campaignId, "+15125550101")
            return campaignId
          })
        )
        // A new instance: the process restarted.
        yield* instance(
          Effect.gen(function*() {
            const registry = yield* Registry
            assert.strictEqual((yield* registry.assignmentStatus(ws, "+15125550101")).status, "assigned")
            yield* (yield* RegistrySimulator).setNextOutcome(ws, { assignment: "fail", reasons: ["Not eligible"] })
            yield* registry.assignNumber(ws, campaignId, "+15125550102")
            assert.deepStrictEqual(yield* registry.assignmentStatus(ws, "+15125550102"), {
              phoneNumber: "+15125550102",
              status: "failed",
              failureReasons: ["Not eligible"]
            })
            yield* registry.assignNumber(ws, campaignId, "+15125550103")
            assert.strictEqual((yield* registry.assignmentStatus(ws, "+15125550103")).status, "assigned")
          })
        )
      })
    ))

  it.effect("a brand rejection carries the reasons given; the next filing is accepted again", () =>
    run(
      Effect.gen(function*() {
        const registry = yield* Registry
        const ws = crypto.randomUUID()
        const brand = yield* reviewBrand(
          ws,
          { brand: "reject", reasons: ["EIN does not match the company name"] },
          business
        )
        assert.deepStrictEqual([brand.status, brand.failureReasons], ["rejected", [
          "EIN does not match the company name"
        ]])
        const error = yield* Effect.flip(registry.fileCampaign(ws, brand.brandId, business.campaign))
        assert.strictEqual(error.reason, "rejected")
        const again = yield* registry.fileBrand(ws, business.business)
        assert.strictEqual((yield* registry.brandStatus(ws, again.brandId)).status, "accepted")
      })
    ))

  it.effect("a rejection without reasons gets a default reason", () =>
    run(
      Effect.gen(function*() {
        const brand = yield* reviewBrand(crypto.randomUUID(), { brand: "reject" }, business)
        assert.deepStrictEqual([brand.status, brand.failureReasons.length], ["rejected", 1])
      })
    ))

  it.effect("a campaign rejection carries its reasons; brand and campaign parts of one outcome apply to their own filings", () =>
    run(
      Effect.gen(function*() {
        const registry = yield* Registry
        const ws = crypto.randomUUID()
        yield* (yield* RegistrySimulator).setNextOutcome(ws, {
          brand: "accept",
          campaign: "reject",
          reasons: ["Opt-in flow is unclear"]
        })
        const filed = yield* registry.fileBrand(ws, business.business)
        assert.strictEqual((yield* registry.brandStatus(ws, filed.brandId)).status, "accepted")
        const campaign = yield* registry.fileCampaign(ws, filed.brandId, business.campaign)
        const read = yield* registry.campaignStatus(ws, campaign.campaignId)
        assert.deepStrictEqual([read.status, read.failureReasons], ["rejected", ["Opt-in flow is unclear"]])
        // used once: a new campaign is approved
        const second = yield* registry.fileCampaign(ws, filed.brandId, business.campaign)
        assert.strictEqual((yield* registry.campaignStatus(ws, second.campaignId)).status, "approved")
      })
    ))

  it.effect("a resent PIN replaces the old one; a PIN older than 24 hours is refused as expired", () =>
    run(
      Effect.gen(function*() {
        const registry = yield* Registry
        const sim = yield* RegistrySimulator
        const { brand: filed, sent: first, ws } = yield* waitingForPin
        yield* TestClock.adjust("1 minute")
        // PINs are random: resend until the new one differs, so the old one is known to be stale
        let sent = first
        while (sent.pin === first.pin) {
          yield* registry.sendOtp(ws, filed.brandId)
          sent = Option.getOrThrow(yield* sim.lastOtp(ws))
        }
        const resent = yield* registry.brandStatus(ws, filed.brandId)
        assert.strictEqual((yield* Effect.flip(registry.verifyOtp(ws, filed.brandId, first.pin)))._tag, "OtpRejected")
        assert.strictEqual(resent.otpSentAt, "2026-01-05T10:01:00.000Z")
        assert.strictEqual(sent.sentAt, "2026-01-05T10:01:00.000Z")
        yield* TestClock.adjust(OTP_TTL_MILLIS + 1)
        const expired = yield* Effect.flip(registry.verifyOtp(ws, filed.brandId, sent.pin))
        assert.strictEqual(expired._tag === "OtpRejected" && expired.reason, "expired")
      })
    ))

  it.effect("`otp` applies to sole proprietors only: a business brand told `otp` is accepted without a PIN", () =>
    run(
      Effect.gen(function*() {
        const ws = crypto.randomUUID()
        assert.strictEqual((yield* reviewBrand(ws, { brand: "otp" }, business)).status, "accepted")
        assert.isTrue(Option.isNone(yield* (yield* RegistrySimulator).lastOtp(ws)))
      })
    ))

  it.effect("one workspace's next outcome and brands do not affect another's", () =>
    run(
      Effect.gen(function*() {
        const registry = yield* Registry
        const [a, b] = [crypto.randomUUID(), crypto.randomUUID()]
        yield* (yield* RegistrySimulator).setNextOutcome(a, { brand: "reject", campaign: "reject" })
        const filedB = yield* registry.fileBrand(b, business.business)
        assert.strictEqual((yield* registry.brandStatus(b, filedB.brandId)).status, "accepted")
        const campaignB = yield* registry.fileCampaign(b, filedB.brandId, business.campaign)
        assert.strictEqual((yield* registry.campaignStatus(b, campaignB.campaignId)).status, "approved")
        const filedA = yield* registry.fileBrand(a, business.business)
        assert.strictEqual((yield* registry.brandStatus(a, filedA.brandId)).status, "rejected")
        // a brand is found only under its own workspace
        assert.strictEqual((yield* Effect.flip(registry.brandStatus(b, filedA.brandId))).reason, "rejected")
      })
    ))
})
