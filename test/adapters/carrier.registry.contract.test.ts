/**
 * The 10DLC registry port's contract (core/registration/registry.ts), one list of tests run over
 * every adapter: the simulator (adapters/carrier/simulatedRegistry.ts, its account the NumberStore)
 * and Telnyx 10DLC over the fake Telnyx (adapters/carrier/telnyxRegistry.ts). Brands and campaigns
 * filed pending and settled on a later read, identityStatus as the registry words it, the sole
 * proprietor's PIN, refusals, and numbers assigned to an active campaign (pending, then assigned or
 * failed; only numbers on the account, only to an active campaign, only once). A third carrier's
 * registry is done when it passes this file. Wire details stay in the adapters' own tests.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Schema } from "effect"
import * as SimulatedRegistry from "../../adapters/carrier/simulatedRegistry.ts"
import * as TelnyxRegistry from "../../adapters/carrier/telnyxRegistry.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { NumberStore } from "../../core/numbers/model.ts"
import { BusinessInput, CampaignInput, composeCampaign } from "../../core/registration/input.ts"
import { type OtpRejected, Registry, type RegistryError, RegistrySimulator } from "../../core/registration/registry.ts"
import type { WorkspaceStore } from "../../core/workspaces/store.ts"
import { fakeAccount } from "../support/carrierContract.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"
import * as filing from "../support/registration.ts"
import { hold } from "./stores.contract.ts"

/** How the registry's next reviews settle; one reason, which both registries report as given. */
interface Outcome {
  readonly brand?: "accept" | "reject"
  readonly campaign?: "approve" | "reject"
  readonly assignment?: "assign" | "fail"
  readonly reason?: string
}

/** What a test needs from the registry's side beyond the port. */
interface Controls {
  /** The next reviews of `workspaceId`'s filings (a sole proprietor's accepted brand awaits its PIN). */
  readonly review: (workspaceId: string, outcome: Outcome) => Effect.Effect<void>
  /** The PIN last texted to the brand. */
  readonly pin: (workspaceId: string, brandId: string) => Effect.Effect<string>
  /** Puts a number on the carrier account, as a purchase would. */
  readonly onAccount: (e164: string) => Effect.Effect<void>
}
const Controls = Context.GenericTag<Controls>("test/RegistryControls")

interface Harness {
  readonly name: string
  /** A registry with no filings, and its controls; built for each test. */
  readonly layer: () => Layer.Layer<Registry | Controls>
}

/** Business filings: the simulator's outcome is per workspace, Telnyx's (the fake's review) per test. */
const simulated: Harness = {
  name: "simulated",
  layer: () =>
    Layer.effect(
      Controls,
      Effect.gen(function*() {
        const simulator = yield* RegistrySimulator
        const stores = yield* Effect.context<NumberStore | WorkspaceStore>()
        return Controls.of({
          review: (workspaceId, o) =>
            simulator.setNextOutcome(workspaceId, {
              // A sole proprietor is texted a PIN only when told `otp`; a business brand told `otp` is accepted.
              brand: o.brand === "reject" ? "reject" : "otp",
              campaign: o.campaign,
              assignment: o.assignment,
              reasons: o.reason === undefined ? undefined : [o.reason]
            }),
          pin: (workspaceId) => Effect.map(simulator.lastOtp(workspaceId), (sent) => Option.getOrThrow(sent).pin),
          onAccount: (e164) => Effect.asVoid(Effect.orDie(Effect.provide(hold([e164]), stores)))
        })
      })
    ).pipe(Layer.provideMerge(SimulatedRegistry.layer), Layer.provideMerge(MemoryStores.layer))
}

const fake = useFakeTelnyx()

const telnyx: Harness = {
  name: "telnyx",
  layer: () =>
    Layer.merge(
      TelnyxRegistry.layer(fakeAccount(fake())),
      Layer.succeed(
        Controls,
        Controls.of({
          review: (_workspaceId, o) =>
            Effect.sync(() =>
              fake().setReview({
                brand: o.brand === "reject"
                  ? { outcome: "rejected", failureReasons: o.reason ?? "Rejected" }
                  : { outcome: "accepted" },
                campaign: o.campaign === "reject"
                  ? { outcome: "rejected", failureReasons: o.reason ?? "Rejected" }
                  : { outcome: "approved" },
                assignment: o.assignment === "fail"
                  ? { outcome: "failed", failureReasons: o.reason ?? "Rejected" }
                  : { outcome: "assigned" }
              })
            ),
          pin: (_workspaceId, brandId) => Effect.sync(() => fake().otps.get(brandId)!.pin),
          onAccount: (e164) => Effect.sync(() => fake().addNumber(e164))
        })
      )
    )
}

const business = Schema.decodeUnknownSync(BusinessInput)(filing.business)
const soleProprietor = Schema.decodeUnknownSync(BusinessInput)(filing.soleProprietor)
const campaign = composeCampaign(
  business,
  Schema.decodeUnknownSync(CampaignInput)({
    useCase: "CUSTOMER_CARE",
    samples: ["Acme: we got your request and will call you today. Reply STOP to opt out."],
    helpMessage: "Acme Plumbing: reply with your question or call us. Reply STOP to opt out."
  })
)

/** The typed failure of an effect: never a defect, never a success. */
const failure = <E extends RegistryError | OtpRejected>(effect: Effect.Effect<unknown, E>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) return assert.fail(`expected a failure, got ${JSON.stringify(exit.value)}`)
    if (exit.cause._tag !== "Fail") return assert.fail(`expected a typed failure, got ${String(exit.cause)}`)
    return exit.cause.error
  })

const isRejected = (e: RegistryError | OtpRejected) => {
  assert.deepInclude(e, { _tag: "RegistryError", reason: "rejected" })
  assert.isNotEmpty(e.message)
}

/** A workspace whose business brand is accepted and whose campaign is approved: the campaign's id. */
const activeCampaign = (registry: Registry, ws: string) =>
  Effect.gen(function*() {
    const { brandId } = yield* registry.fileBrand(ws, business)
    yield* registry.brandStatus(ws, brandId)
    const { campaignId } = yield* registry.fileCampaign(ws, brandId, campaign)
    assert.strictEqual((yield* registry.campaignStatus(ws, campaignId)).status, "approved")
    return campaignId
  })

let counter = 0
/** A local number no other test uses. */
const freshNumber = () => `+1312555${String(1000 + (++counter % 9000)).padStart(4, "0")}`

const contract = (harness: Harness) =>
  describe(`Registry contract: ${harness.name}`, () => {
    const run = <A, E>(use: (registry: Registry, controls: Controls, ws: string) => Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        return yield* use(yield* Registry, yield* Controls, crypto.randomUUID())
      }).pipe(Effect.provide(harness.layer()))

    it.live("names a messaging profile for the workspace's numbers", () =>
      run((registry, _c, ws) =>
        Effect.gen(function*() {
          assert.isNotEmpty(yield* registry.messagingProfile(ws))
        })
      ))

    it.live("a business brand is filed pending and UNVERIFIED, then read accepted and VERIFIED; settled stays settled", () =>
      run((registry, _c, ws) =>
        Effect.gen(function*() {
          const filed = yield* registry.fileBrand(ws, business)
          assert.isNotEmpty(filed.brandId)
          assert.deepInclude(filed, { status: "pending", identityStatus: "UNVERIFIED", otpSentAt: null })
          assert.deepStrictEqual(filed.failureReasons, [])
          const read = yield* registry.brandStatus(ws, filed.brandId)
          assert.deepStrictEqual(read, { ...filed, status: "accepted", identityStatus: "VERIFIED" })
          assert.deepStrictEqual(yield* registry.brandStatus(ws, filed.brandId), read)
          // Filings are never deduplicated: a second one is another brand.
          assert.notStrictEqual((yield* registry.fileBrand(ws, business)).brandId, filed.brandId)
        })
      ))

    it.live("a brand the registry rejects reads rejected with its reasons", () =>
      run((registry, controls, ws) =>
        Effect.gen(function*() {
          yield* controls.review(ws, { brand: "reject", reason: "Tax ID does not match the legal company name" })
          const { brandId } = yield* registry.fileBrand(ws, business)
          const read = yield* registry.brandStatus(ws, brandId)
          assert.deepInclude(read, { status: "rejected", identityStatus: "UNVERIFIED" })
          assert.deepStrictEqual(read.failureReasons, ["Tax ID does not match the legal company name"])
        })
      ))

    it.live("a sole proprietor is SELF_DECLARED and texted a PIN; a wrong PIN is `wrong`, the right one makes it VERIFIED", () =>
      run((registry, controls, ws) =>
        Effect.gen(function*() {
          yield* controls.review(ws, {})
          const { brandId } = yield* registry.fileBrand(ws, soleProprietor)
          const waiting = yield* registry.brandStatus(ws, brandId)
          assert.deepInclude(waiting, { status: "otp_pending", identityStatus: "SELF_DECLARED" })
          assert.isFalse(Number.isNaN(Date.parse(waiting.otpSentAt ?? "")), "otpSentAt is a date")
          // Reading again texts no second PIN.
          const pin = yield* controls.pin(ws, brandId)
          assert.strictEqual((yield* registry.brandStatus(ws, brandId)).status, "otp_pending")
          assert.strictEqual(yield* controls.pin(ws, brandId), pin)

          const wrong = yield* failure(registry.verifyOtp(ws, brandId, pin === "000000" ? "111111" : "000000"))
          assert.deepInclude(wrong, { _tag: "OtpRejected", reason: "wrong" })
          const accepted = yield* registry.verifyOtp(ws, brandId, pin)
          assert.deepInclude(accepted, { brandId, status: "accepted", identityStatus: "VERIFIED" })
          assert.strictEqual((yield* registry.brandStatus(ws, brandId)).status, "accepted")
          // Nothing waits for a PIN any more.
          isRejected(yield* failure(registry.verifyOtp(ws, brandId, pin)))
          isRejected(yield* failure(registry.sendOtp(ws, brandId)))
        })
      ))

    it.live("sendOtp texts a fresh PIN: the one before it is wrong from then on", () =>
      run((registry, controls, ws) =>
        Effect.gen(function*() {
          yield* controls.review(ws, {})
          const { brandId } = yield* registry.fileBrand(ws, soleProprietor)
          yield* registry.brandStatus(ws, brandId)
          const first = yield* controls.pin(ws, brandId)
          let resent = yield* registry.sendOtp(ws, brandId)
          // Six random digits may repeat: text again until the PIN changes.
          while ((yield* controls.pin(ws, brandId)) === first) resent = yield* registry.sendOtp(ws, brandId)
          assert.deepInclude(resent, { brandId, status: "otp_pending" })
          assert.deepInclude(yield* failure(registry.verifyOtp(ws, brandId, first)), { reason: "wrong" })
          assert.strictEqual(
            (yield* registry.verifyOtp(ws, brandId, yield* controls.pin(ws, brandId))).status,
            "accepted"
          )
        })
      ))

    it.live("a business brand waits for no PIN: sendOtp and verifyOtp are rejected", () =>
      run((registry, _c, ws) =>
        Effect.gen(function*() {
          const { brandId } = yield* registry.fileBrand(ws, business)
          yield* registry.brandStatus(ws, brandId)
          isRejected(yield* failure(registry.sendOtp(ws, brandId)))
          isRejected(yield* failure(registry.verifyOtp(ws, brandId, "123456")))
        })
      ))

    it.live("ids the registry never gave are rejected: brand and campaign reads, filings under them", () =>
      run((registry, _c, ws) =>
        Effect.gen(function*() {
          isRejected(yield* failure(registry.brandStatus(ws, "no-such-brand")))
          isRejected(yield* failure(registry.campaignStatus(ws, "no-such-campaign")))
          isRejected(yield* failure(registry.fileCampaign(ws, "no-such-brand", campaign)))
        })
      ))

    it.live("a campaign is filed under an accepted brand, pending, then read approved; settled stays settled", () =>
      run((registry, _c, ws) =>
        Effect.gen(function*() {
          const { brandId } = yield* registry.fileBrand(ws, business)
          // Not under a brand still in review.
          isRejected(yield* failure(registry.fileCampaign(ws, brandId, campaign)))
          yield* registry.brandStatus(ws, brandId)
          const filed = yield* registry.fileCampaign(ws, brandId, campaign)
          assert.isNotEmpty(filed.campaignId)
          assert.deepInclude(filed, { brandId, status: "pending" })
          assert.deepStrictEqual(filed.failureReasons, [])
          const read = yield* registry.campaignStatus(ws, filed.campaignId)
          assert.deepInclude(read, { campaignId: filed.campaignId, status: "approved" })
          assert.strictEqual((yield* registry.campaignStatus(ws, filed.campaignId)).status, "approved")
        })
      ))

    it.live("a campaign the registry rejects reads rejected with its reasons", () =>
      run((registry, controls, ws) =>
        Effect.gen(function*() {
          yield* controls.review(ws, { campaign: "reject", reason: "Sample messages do not match the use case" })
          const { brandId } = yield* registry.fileBrand(ws, business)
          yield* registry.brandStatus(ws, brandId)
          const { campaignId } = yield* registry.fileCampaign(ws, brandId, campaign)
          const read = yield* registry.campaignStatus(ws, campaignId)
          assert.strictEqual(read.status, "rejected")
          assert.deepStrictEqual(read.failureReasons, ["Sample messages do not match the use case"])
        })
      ))

    it.live("a number on the account is assigned to the active campaign: pending, then assigned on a later read, and stays", () =>
      run((registry, controls, ws) =>
        Effect.gen(function*() {
          const e164 = freshNumber()
          yield* controls.onAccount(e164)
          const campaignId = yield* activeCampaign(registry, ws)
          const asked = yield* registry.assignNumber(ws, campaignId, e164)
          assert.deepStrictEqual(asked, { phoneNumber: e164, status: "pending", failureReasons: [] })
          assert.deepStrictEqual(yield* registry.assignmentStatus(ws, e164), { ...asked, status: "assigned" })
          assert.strictEqual((yield* registry.assignmentStatus(ws, e164)).status, "assigned")
        })
      ))

    it.live("an assignment the registry refuses reads failed with its reasons", () =>
      run((registry, controls, ws) =>
        Effect.gen(function*() {
          const e164 = freshNumber()
          yield* controls.onAccount(e164)
          const campaignId = yield* activeCampaign(registry, ws)
          yield* controls.review(ws, { assignment: "fail", reason: "The number is not eligible for 10DLC" })
          yield* registry.assignNumber(ws, campaignId, e164)
          const read = yield* registry.assignmentStatus(ws, e164)
          assert.strictEqual(read.status, "failed")
          assert.deepStrictEqual(read.failureReasons, ["The number is not eligible for 10DLC"])
        })
      ))

    it.live("an assignment is refused to a campaign not active, for a number not on the account, and a second time", () =>
      run((registry, controls, ws) =>
        Effect.gen(function*() {
          const e164 = freshNumber()
          yield* controls.onAccount(e164)
          const { brandId } = yield* registry.fileBrand(ws, business)
          yield* registry.brandStatus(ws, brandId)
          const pending = yield* registry.fileCampaign(ws, brandId, campaign)
          isRejected(yield* failure(registry.assignNumber(ws, pending.campaignId, e164)))
          yield* registry.campaignStatus(ws, pending.campaignId)

          const stranger = freshNumber()
          isRejected(yield* failure(registry.assignNumber(ws, pending.campaignId, stranger)))
          isRejected(yield* failure(registry.assignmentStatus(ws, stranger)))

          yield* registry.assignNumber(ws, pending.campaignId, e164)
          isRejected(yield* failure(registry.assignNumber(ws, pending.campaignId, e164)))
        })
      ))
  })

contract(simulated)
contract(telnyx)
