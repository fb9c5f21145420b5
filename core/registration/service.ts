/**
 * The US texting (10DLC) registration use cases (SPEC "Messaging registration"): file, read, move
 * forward (refresh, the poller, registry webhooks) and the sole-proprietor PIN. The pipeline is the
 * pure state machine of core/registration; this module feeds it what the registry reports and keeps
 * the result, under a per-workspace lock, so two requests or two processes never file or charge twice.
 *
 * A live filing (live key, no `mock`) is a purchase, in this order: the filing gates; the charge of
 * the plan (when it ends a trial) and the texting setup of each local number never charged before,
 * before anything is filed (a declined card files nothing); the filing; the ledger, the audit entry
 * and the new state in one transaction; then the receipt mail. A filing the registry refuses refunds
 * its charge. Mock mode (test keys, `mock: true`) runs the same pipeline on the simulated registry
 * with no gate, no charge and nothing filed.
 */
import { Clock, Context, Effect, Either, identity, Layer, Option, Schema } from "effect"
import { AuditLog } from "../audit/store.ts"
import { actorOf, type Principal } from "../auth/principal.ts"
import { billingLock } from "../billing/cycle.ts"
import { registrationFilingGate } from "../billing/gates.ts"
import type { Charge } from "../billing/ledger.ts"
import { PendingCharges } from "../billing/pending.ts"
import { messagingAddonCharge, planCharge, textingSetupCharge } from "../billing/pricing.ts"
import { LedgerStore } from "../billing/store.ts"
import type { RegistryChange } from "../carrier/callbacks.ts"
import { canonicalJson } from "../idempotency/runner.ts"
import { FailedPrecondition, Internal, InvalidArgument, ResourceExhausted } from "../kernel/errors.ts"
import { Transactor } from "../kernel/transactor.ts"
import { sendMail } from "../mail/mailer.ts"
import { NumberStore } from "../numbers/model.ts"
import { WorkspaceClock, workspaceNow } from "../workspaces/clock.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import { assignNumbers } from "./assignment.ts"
import { type Application, ApplicationInput, completeApplication } from "./input.ts"
import { canText, initial, RegistrationEvent, type RegistrationState, transition } from "./machine.ts"
import { receiptMail } from "./receipt.ts"
import { type BrandState, type CampaignState, MessagingStatus, type Registration } from "./record.ts"
import {
  type BrandReport,
  type CampaignReport,
  MockRegistry,
  OTP_TTL_MILLIS,
  type OtpRejected,
  Registry,
  type RegistryError
} from "./registry.ts"
import { RegistrationStore } from "./store.ts"

/** `POST /messaging/registration`'s body. */
export const RegistrationRequest = Schema.Struct({
  ...ApplicationInput.fields,
  acknowledge_trial_end: Schema.optional(Schema.Boolean),
  mock: Schema.optional(Schema.Boolean)
  // Every offending field in one answer, as decodeApplication reports them.
}).annotations({ identifier: "RegistrationRequest", parseOptions: { onExcessProperty: "error", errors: "all" } })
export type RegistrationRequest = typeof RegistrationRequest.Type

export const MessagingAnswer = Schema.Struct({ messaging: MessagingStatus })
export const FilingAnswer = Schema.Struct({ messaging: MessagingStatus, mock: Schema.optional(Schema.Literal(true)) })
export const OtpInput = Schema.Struct({ pin: Schema.String.pipe(Schema.maxLength(32)) }).annotations({
  identifier: "OtpInput",
  parseOptions: { onExcessProperty: "error" }
})

/** One resend a minute (SPEC "Limits"). */
export const RESEND_INTERVAL_MILLIS = 60_000

/**
 * Wrong PINs allowed per PIN texted: then it is void until a resend. With one resend a minute, a
 * 6-digit PIN cannot be guessed within its 24 hours (at most 5 guesses a minute).
 */
export const MAX_PIN_ATTEMPTS = 5

/** The public status of a workspace's registration (`step` `none` before any filing). */
export const messagingStatus = (registration: Option.Option<Registration>): MessagingStatus =>
  Option.match(registration, {
    onNone: () => ({ step: "none", canText: false, messagingProfileId: null, brand: null, campaign: null }),
    onSome: (r) => ({
      step: r.step,
      canText: canText(r),
      messagingProfileId: r.messagingProfileId,
      brand: {
        status: r.brand.status,
        identityStatus: r.brand.identityStatus,
        failureReasons: r.brand.failureReasons,
        ...(r.soleProprietor ? { otpSentAt: r.brand.otpSentAt, otpMobileLast4: r.brand.otpMobileLast4 } : {})
      },
      campaign: {
        status: r.campaign.status,
        useCase: r.campaign.useCase,
        failureReasons: r.campaign.failureReasons,
        submittedAt: r.campaign.submittedAt
      },
      ...(r.mock ? { mock: true as const } : {})
    })
  })

const notWaitingForPin = new FailedPrecondition({ message: "The registration is not waiting for a PIN" })

const registryFailure = (e: RegistryError) =>
  e.reason === "rejected"
    ? new FailedPrecondition({ message: `The registry rejected the filing: ${e.message}` })
    : new Internal({ message: `The registry is unavailable (${e.message}); try again later` })

const otpFailure = (e: OtpRejected | RegistryError) =>
  e._tag === "OtpRejected" ? new InvalidArgument({ message: `pin: ${e.message}` }) : registryFailure(e)

/** The machine's step change for an event, or a defect: the callers only send events their step allows. */
const step = (r: Registration, event: RegistrationEvent): Registration => {
  const next = Either.getOrThrowWith(transition(r, event), identity)
  return { ...r, step: next.step, soleProprietor: next.soleProprietor }
}

const brandFrom = (report: BrandReport, business: Application["business"], previous?: BrandState): BrandState => ({
  id: report.brandId,
  status: report.status,
  identityStatus: report.identityStatus,
  failureReasons: report.failureReasons,
  otpSentAt: report.otpSentAt ?? previous?.otpSentAt ?? null,
  otpMobileLast4: business.entityType === "SOLE_PROPRIETOR" && business.mobilePhone !== undefined
    ? business.mobilePhone.slice(-4)
    : null,
  // A status read keeps the count of wrong PINs: only a new PIN resets it.
  ...(previous?.failedPinAttempts === undefined ? {} : { failedPinAttempts: previous.failedPinAttempts })
})

const campaignFrom = (report: CampaignReport, previous: CampaignState): CampaignState => ({
  ...previous,
  id: report.campaignId,
  status: report.status,
  failureReasons: report.failureReasons
})

const liveOnFile = new FailedPrecondition({ message: "A live registration is on file" })
const registrationBusy = new FailedPrecondition({
  message: "The texting registration is being updated; try again in a moment"
})
/** How long one process may talk to the registry about a workspace before another may: beyond any registry call. */
const REGISTRY_LEASE_MS = 60_000

const make = Effect.gen(function*() {
  const store = yield* RegistrationStore
  const liveRegistry = yield* Registry
  const mockRegistry = yield* MockRegistry
  const workspaces = yield* WorkspaceStore
  const numbers = yield* NumberStore
  const ledger = yield* LedgerStore
  const pendingCharges = yield* PendingCharges
  const audit = yield* AuditLog
  const tx = yield* Transactor
  const clock = yield* WorkspaceClock
  const registryOf = (r: Pick<Registration, "mock">) => (r.mock ? mockRegistry : liveRegistry)
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  /** Runs `body` in a transaction holding the workspace's registration lock, on its current registration. */
  const locked = <A, E, R>(
    workspaceId: string,
    body: (current: Option.Option<Registration>) => Effect.Effect<A, E, R>
  ) =>
    tx.withTransaction(Effect.zipRight(tx.lock(`texting:${workspaceId}`), Effect.flatMap(store.get(workspaceId), body)))

  /**
   * Runs `body` on the workspace's registration holding its registry lease (`held`), so one process
   * at a time talks to the registry about it and no transaction is open during those calls; `save`
   * then writes the outcome in a short locked transaction. With `wait`, a lease another process
   * holds is waited for (a person's request); otherwise `held` is false and `body` should only read.
   */
  const leased = <A, E, R>(
    workspaceId: string,
    wait: boolean,
    body: (current: Option.Option<Registration>, held: boolean) => Effect.Effect<A, E, R>
  ) =>
    Effect.gen(function*() {
      const take = Effect.flatMap(Clock.currentTimeMillis, (ms) =>
        store.lease(workspaceId, new Date(ms).toISOString(), new Date(ms + REGISTRY_LEASE_MS).toISOString()))
      const exists = Option.isSome(yield* store.get(workspaceId))
      let held = exists && (yield* take)
      for (let tries = 0; exists && wait && !held && tries < 60; tries++) {
        yield* Effect.sleep("250 millis")
        held = yield* take
      }
      return yield* Effect.flatMap(store.get(workspaceId), (current) =>
        body(current, held)).pipe(
          Effect.ensuring(held ? store.release(workspaceId) : Effect.void)
        )
    })

  /**
   * Stores `next` in place of `seen`, with `also` in the same transaction, unless the registration
   * changed since it was read (a filing in between): then nothing, and false.
   */
  const save = (seen: Registration, next: Registration, also: Effect.Effect<void> = Effect.void) =>
    locked(
      seen.workspaceId,
      (current) =>
        Option.exists(current, (c) => c.updatedAt === seen.updatedAt && c.filedAt === seen.filedAt)
          ? Effect.as(Effect.zipRight(store.put(next), also), true)
          : Effect.succeed(false)
    )

  const status = (p: Principal) => Effect.map(store.get(p.workspaceId), (r) => ({ messaging: messagingStatus(r) }))

  /** Creates the staged campaign with the registry once the brand is accepted; a refused filing fails the campaign. */
  const submitCampaign = (r: Registration): Effect.Effect<Registration> =>
    registryOf(r).fileCampaign(r.workspaceId, r.brand.id!, r.campaignInput).pipe(
      Effect.flatMap((report) =>
        Effect.map(
          now,
          (at) => ({
            ...step(r, RegistrationEvent.CampaignSubmitted()),
            campaign: { ...campaignFrom(report, r.campaign), submittedAt: at }
          })
        )
      ),
      Effect.catchAll((e) =>
        e.reason === "unavailable"
          // Stays `brand_ok`: the next refresh or poll submits it again.
          ? Effect.as(Effect.logWarning("Texting registration: the campaign could not be submitted", e.message), r)
          : Effect.succeed({
            ...step(step(r, RegistrationEvent.CampaignSubmitted()), RegistrationEvent.CampaignRejected()),
            campaign: { ...r.campaign, status: "rejected" as const, failureReasons: [e.message] }
          })
      )
    )

  /**
   * Starts each local number's messaging add-on at approval (live registrations): a pending fee,
   * reserved with the approval and collected by the billing worker outside this lock
   * (core/billing/pending.ts); a declined card is audit-logged there.
   */
  const startAddon = (r: Registration) =>
    Effect.gen(function*() {
      if (r.mock) return
      const at = new Date(yield* workspaceNow(r.workspaceId))
      const local = (yield* numbers.listActive(r.workspaceId)).filter((n) => n.ordered && n.number.type === "local")
      if (local.length === 0) return
      yield* pendingCharges.reserve(r.workspaceId, {
        purpose: `addon:${r.campaign.id}`,
        kind: "fee",
        charges: local.map((n) => messagingAddonCharge(n.number.e164, at)),
        at: at.toISOString(),
        busy: "The messaging add-on",
        leaseMs: 0
      }).pipe(Effect.catchTag("FailedPrecondition", () => Effect.void))
    })

  /**
   * One step forward from what the registry reports now: the brand's review, the campaign's creation
   * or its review. Unchanged when nothing moved or the registry is unavailable.
   */
  const moveForward = (r: Registration): Effect.Effect<Registration, RegistryError> =>
    Effect.gen(function*() {
      const registry = registryOf(r)
      switch (r.step) {
        case "brand_pending":
        case "brand_otp_pending": {
          const report = yield* registry.brandStatus(r.workspaceId, r.brand.id!)
          const brand = brandFrom(report, r.business, r.brand)
          const withBrand = { ...r, brand }
          if (report.status === "rejected") return step(withBrand, RegistrationEvent.BrandRejected())
          if (report.status === "accepted") {
            const ok = step(
              withBrand,
              r.step === "brand_pending" ? RegistrationEvent.BrandAccepted() : RegistrationEvent.OtpVerified()
            )
            return yield* submitCampaign(ok)
          }
          if (report.status === "otp_pending" && r.step === "brand_pending") {
            // The PIN's age is measured on the workspace's clock (the `clock` test helper moves it).
            const sentAt = new Date(yield* workspaceNow(r.workspaceId)).toISOString()
            return step({ ...withBrand, brand: { ...brand, otpSentAt: sentAt } }, RegistrationEvent.BrandNeedsOtp())
          }
          return withBrand
        }
        case "brand_ok":
          return yield* submitCampaign(r)
        case "campaign_pending": {
          const report = yield* registry.campaignStatus(r.workspaceId, r.campaign.id!)
          const withCampaign = { ...r, campaign: campaignFrom(report, r.campaign) }
          if (report.status === "approved") return step(withCampaign, RegistrationEvent.CampaignApproved())
          if (report.status === "rejected") return step(withCampaign, RegistrationEvent.CampaignRejected())
          return withCampaign
        }
        default:
          return r
      }
    }).pipe(Effect.provideService(WorkspaceClock, clock))

  /**
   * Asks the registry where the workspace's registration stands and keeps what moved; at approval,
   * the messaging add-on is reserved with it and charged right after, outside the lock. While
   * another process holds the registry lease, answers the registration as it stands.
   */
  const advance = (workspaceId: string) =>
    leased(workspaceId, false, (current, held) =>
      Option.match(current, {
        onNone: () => Effect.succeedNone,
        onSome: (r) =>
          !held ? Effect.succeed(Option.some(r)) : Effect.gen(function*() {
            const next = yield* moveForward(r)
            // A live campaign's numbers are assigned once it is active, and followed until assigned.
            yield* assignNumbers(registryOf(next), numbers, audit, next)
            if (next === r) return Option.some(r)
            const saved = { ...next, updatedAt: yield* now }
            const approved = r.step !== "campaign_active" && saved.step === "campaign_active"
            const stored = yield* save(
              r,
              saved,
              approved ? Effect.provideService(startAddon(saved), WorkspaceClock, clock) : Effect.void
            )
            return stored ? Option.some(saved) : yield* store.get(workspaceId)
          })
      })).pipe(Effect.tap(() => pendingCharges.recover(10, { workspaceId })))

  const refresh = (p: Principal) =>
    Effect.gen(function*() {
      const moved = yield* advance(p.workspaceId).pipe(Effect.mapError(registryFailure))
      return { messaging: messagingStatus(moved) }
    })

  /** The charges of a live filing: the plan when it ends a trial, and each local number's setup not charged before. */
  const filingCharges = (workspaceId: string, trial: boolean, plan: string | null) =>
    Effect.gen(function*() {
      const charged = new Set(
        (yield* ledger.list(workspaceId)).filter((c) => c.kind === "texting_setup").map((c) => c.numberE164)
      )
      // A number added with a test key is not ordered at the carrier: nothing to set up for it.
      const local = (yield* numbers.listActive(workspaceId)).filter((n) =>
        n.ordered && n.number.type === "local" && !charged.has(n.number.e164)
      )
      // Prorated on the workspace's clock, like every charge and the billing cycle.
      const at = new Date(yield* workspaceNow(workspaceId))
      const planPart: ReadonlyArray<Charge> = trial && plan !== null ? [planCharge(plan, at)] : []
      return [...planPart, ...local.map((n) => textingSetupCharge(n.number.e164))]
    })

  /**
   * A filing in three steps, so no registry or payment call runs while the workspace's lock is held:
   * under the lock, the checks, the gates and the price, kept as a pending charge (one filing in
   * flight per workspace, mock or live); then the payment and the registry; then, under the lock
   * again, the registration, its ledger rows and the end of the trial. A failure after the payment
   * refunds it (core/billing/pending.ts).
   */
  const file = (p: Principal, input: RegistrationRequest) =>
    Effect.gen(function*() {
      const ws = p.workspaceId
      const application = completeApplication(input)
      const mock = p.kind === "test" || input.mock === true
      const decided = yield* locked(ws, (current) =>
        Effect.gen(function*() {
          // A live filing replaces a mock registration at any step: mock mode filed nothing real. A
          // mock filing never replaces a live one (CONTRACT, "Test keys never open a live path").
          if (mock && Option.isSome(current) && !current.value.mock) return yield* liveOnFile
          const previous = Option.filter(current, (r) => mock || !r.mock)
          const state = Option.getOrElse(Option.map(previous, (r): RegistrationState => r), () => initial)
          const from = state.step === "none"
            ? Either.getOrThrow(transition(state, RegistrationEvent.ProfileCreated()))
            : state
          const next = transition(
            from,
            RegistrationEvent.Filed({ soleProprietor: application.business.entityType === "SOLE_PROPRIETOR" })
          )
          if (Either.isLeft(next)) {
            return yield* new FailedPrecondition({
              message: `A texting registration is already ${
                from.step === "campaign_active" ? "active" : "in progress"
              } (step ${from.step}); file again only after a rejection`
            })
          }
          const workspace = Option.getOrThrow(yield* workspaces.get(ws))
          let charges: ReadonlyArray<Charge> = []
          if (!mock) {
            yield* registrationFilingGate(workspace.billing, input.acknowledge_trial_end === true)
            charges = yield* filingCharges(ws, workspace.billing.trial, workspace.billing.plan)
          }
          const pending = yield* pendingCharges.reserve(ws, {
            purpose: "filing",
            kind: "purchase",
            charges,
            at: new Date(yield* workspaceNow(ws)).toISOString(),
            busy: "A texting registration filing"
          })
          return { previous, next: next.right, workspace, charges, pending }
        }).pipe(Effect.provideService(WorkspaceClock, clock)))
      const { charges, next, pending, previous, workspace } = decided
      const filed = yield* pendingCharges.fulfil(workspace, pending, (payment) =>
        Effect.gen(function*() {
          const registry = registryOf({ mock })
          // Only the campaign failed and the business is the same: its accepted brand is kept, not
          // filed (and vetted, and paid for at the registry) again; the new campaign goes in at once.
          const kept = Option.filter(
            previous,
            (r) =>
              r.step === "campaign_failed" && r.brand.status === "accepted" && r.brand.id !== null &&
              canonicalJson(r.business) === canonicalJson(application.business)
          )
          const report: BrandReport = Option.isSome(kept)
            ? {
              brandId: kept.value.brand.id!,
              status: "accepted",
              identityStatus: kept.value.brand.identityStatus,
              failureReasons: [],
              otpSentAt: kept.value.brand.otpSentAt
            }
            : yield* registry.fileBrand(ws, application.business).pipe(Effect.mapError(registryFailure))
          const at = yield* now
          const filedRegistration: Registration = {
            workspaceId: ws,
            step: next.step,
            soleProprietor: next.soleProprietor,
            mock,
            messagingProfileId: Option.match(previous, { onNone: () => null, onSome: (r) => r.messagingProfileId }) ??
              (yield* registry.messagingProfile(ws).pipe(Effect.mapError(registryFailure))),
            business: application.business,
            campaignInput: application.campaign,
            brand: brandFrom(report, application.business),
            campaign: {
              id: null,
              status: "staged",
              useCase: application.campaign.useCase,
              failureReasons: [],
              submittedAt: null
            },
            lastResendAt: null,
            filedAt: at,
            updatedAt: at
          }
          const registration = Option.isSome(kept)
            ? yield* submitCampaign(step(filedRegistration, RegistrationEvent.BrandAccepted()))
            : filedRegistration
          return yield* locked(ws, (current) =>
            Effect.gen(function*() {
              // A live filing that committed meanwhile (mock filings reserve the same purpose, so only
              // through another process's settled filing) wins over a mock one.
              if (mock && Option.isSome(current) && !current.value.mock) return yield* liveOnFile
              yield* tx.lock(billingLock(ws))
              yield* store.put(registration)
              yield* pendingCharges.settle(pending, payment)
              const latest = Option.getOrThrow(yield* workspaces.get(ws))
              if (!mock && latest.billing.trial) {
                yield* workspaces.update({ ...latest, billing: { ...latest.billing, trial: false } })
              }
              yield* audit.append(ws, {
                actor: actorOf(p),
                action: "messaging.registration.filed",
                detail: {
                  mock,
                  keyId: p.keyId,
                  brandId: report.brandId,
                  brandKept: Option.isSome(kept),
                  entityType: application.business.entityType,
                  chargedCents: charges.reduce((s, c) => s + c.amountCents, 0)
                }
              })
              return registration
            }))
        }))
      // After the commit: a receipt that cannot be sent is not a failed filing, but the operator
      // sees why in the audit log (and the log).
      const unsent = (reason: string) =>
        Effect.zipRight(
          Effect.logWarning("Texting registration: the receipt was not mailed", reason),
          audit.append(ws, { actor: "system", action: "messaging.receipt.unsent", detail: { reason } })
        )
      const owner = workspace.billing.ownerEmail
      yield* owner === null
        ? unsent("the workspace has no owner email (billing.ownerEmail)")
        : sendMail(ws, receiptMail(owner, filed, charges)).pipe(
          Effect.catchAll((e) => unsent(e.message))
        )
      return { messaging: messagingStatus(Option.some(filed)), ...(mock ? { mock: true as const } : {}) }
    })

  /** The registration waiting for a PIN, or 409. */
  const waitingForPin = (current: Option.Option<Registration>) =>
    Option.match(Option.filter(current, (r) => r.step === "brand_otp_pending"), {
      onNone: () => Effect.fail(notWaitingForPin),
      onSome: Effect.succeed
    })

  const verifyOtp = (p: Principal, input: typeof OtpInput.Type) =>
    Effect.gen(function*() {
      const ws = p.workspaceId
      const verified = yield* leased(ws, true, (current, held) =>
        Effect.gen(function*() {
          const r = yield* waitingForPin(current)
          if (!held) return yield* registrationBusy
          // Expiry on the workspace's clock, so the `clock` test helper can show it.
          const sentAt = r.brand.otpSentAt === null ? null : Date.parse(r.brand.otpSentAt)
          if (sentAt !== null && (yield* workspaceNow(ws)) - sentAt > OTP_TTL_MILLIS) {
            return yield* new InvalidArgument({
              message:
                "pin: the PIN has expired (PINs are valid for 24 hours): request a new one with POST /messaging/otp/resend"
            })
          }
          const failed = r.brand.failedPinAttempts ?? 0
          if (failed >= MAX_PIN_ATTEMPTS) {
            return yield* new InvalidArgument({
              message:
                `pin: ${MAX_PIN_ATTEMPTS} wrong PINs were entered: request a new one with POST /messaging/otp/resend`
            })
          }
          const checked = yield* Effect.either(registryOf(r).verifyOtp(ws, r.brand.id!, input.pin))
          if (Either.isLeft(checked)) {
            const e = checked.left
            // A wrong PIN is counted (committed, though the request fails), so guesses are bounded.
            if (e._tag === "OtpRejected" && e.reason === "wrong") {
              yield* save(r, { ...r, brand: { ...r.brand, failedPinAttempts: failed + 1 }, updatedAt: yield* now })
              return { wrong: otpFailure(e) } as const
            }
            return yield* otpFailure(e)
          }
          const report = checked.right
          const ok = step({ ...r, brand: brandFrom(report, r.business, r.brand) }, RegistrationEvent.OtpVerified())
          const next = yield* submitCampaign(ok)
          const saved = { ...next, updatedAt: yield* now }
          if (!(yield* save(r, saved))) return yield* registrationBusy
          return { saved } as const
        }).pipe(Effect.provideService(WorkspaceClock, clock)))
      if ("wrong" in verified) return yield* verified.wrong
      return { messaging: messagingStatus(Option.some(verified.saved)) }
    })

  const resendOtp = (p: Principal) =>
    Effect.gen(function*() {
      const ws = p.workspaceId
      const resent = yield* leased(ws, true, (current, held) =>
        Effect.gen(function*() {
          const r = yield* waitingForPin(current)
          if (!held) return yield* registrationBusy
          const at = yield* workspaceNow(ws)
          const last = r.lastResendAt === null ? null : Date.parse(r.lastResendAt)
          if (last !== null && at - last < RESEND_INTERVAL_MILLIS) {
            const retryAfterSeconds = Math.ceil((last + RESEND_INTERVAL_MILLIS - at) / 1000)
            return yield* new ResourceExhausted({
              message: `A PIN was resent less than a minute ago: retry in ${retryAfterSeconds} s`,
              retryAfterSeconds
            })
          }
          const report = yield* registryOf(r).sendOtp(ws, r.brand.id!).pipe(Effect.mapError(registryFailure))
          const saved: Registration = {
            ...r,
            brand: {
              ...brandFrom(report, r.business, r.brand),
              otpSentAt: new Date(at).toISOString(),
              failedPinAttempts: 0
            },
            lastResendAt: new Date(at).toISOString(),
            updatedAt: yield* now
          }
          if (!(yield* save(r, saved))) return yield* registrationBusy
          return saved
        }).pipe(Effect.provideService(WorkspaceClock, clock)))
      return { messaging: messagingStatus(Option.some(resent)) }
    })

  /** A registry webhook said this brand, campaign or number's assignment changed: move its registration forward. */
  const onRegistryChange = (change: RegistryChange) =>
    Effect.flatMap(
      change.kind === "number"
        ? Effect.map(numbers.findByE164(change.id), Option.map((n) => n.workspaceId))
        : store.byRegistryId(change.kind, change.id),
      Option.match({ onNone: () => Effect.succeedNone, onSome: advance })
    )

  return { status, file, refresh, verifyOtp, resendOtp, advance, onRegistryChange } as const
})

export class Registrations
  extends Context.Tag("core/Registrations")<Registrations, Effect.Effect.Success<typeof make>>()
{}

export const layer = Layer.effect(Registrations, make)
