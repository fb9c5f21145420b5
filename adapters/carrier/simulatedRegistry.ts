/**
 * The simulated 10DLC registry. Each workspace has a "next outcome" (the `registry` test helper of
 * CONTRACT.md): a brand filing takes its `brand` part, a campaign filing its `campaign` part, each
 * used once; without one a brand is accepted and a campaign approved. The review completes on the
 * first status read after the filing, so a refresh or the poller moves it, as with the real
 * registry. A brand whose outcome is `otp` and that is a sole proprietor gets a 6-digit PIN
 * "texted" to its mobile; the `otp` test helper reads it back.
 *
 * A number assignment (`assignNumber`) answers `pending` and completes on the next status read
 * (`assigned`, or `failed` when the next outcome's `assignment` is `fail`), as Telnyx's
 * `PENDING_ASSIGNMENT` then `ASSIGNED` or `FAILED_ASSIGNMENT` do. As on Telnyx, only a number on the
 * account (held by a workspace: the NumberStore is the simulator's account) is assigned, only to an
 * approved campaign, and only once. A held number this process never assigned (before a restart,
 * or by another process) is recalled as assigned.
 *
 * State lives in this process's memory (a Ref, one call at a time): right for tests and one process, but processes
 * sharing a database each see only the brands they filed. Production uses the Telnyx adapter.
 */
import { Clock, Context, Effect, Layer, Option, Random, Ref } from "effect"
import { Ids } from "../../core/kernel/ids.ts"
import { NumberStore } from "../../core/numbers/model.ts"
import {
  type AssignmentReport,
  type BrandReport,
  type CampaignReport,
  MockRegistry,
  type NextOutcome,
  OTP_TTL_MILLIS,
  OtpRejected,
  Registry,
  RegistryError,
  RegistrySimulator,
  type SentOtp
} from "../../core/registration/registry.ts"

const BRAND_PREFIX = "sim_brand_"

/** What Telnyx reports for a brand at each step (research telnyx.md §4): a sole proprietor is self-declared until its PIN. */
const identityAt = { pending: "UNVERIFIED", accepted: "VERIFIED", otp_pending: "SELF_DECLARED" } as const
const CAMPAIGN_PREFIX = "sim_campaign_"

const DEFAULT_REASONS = {
  brand: "The brand could not be verified (simulated rejection)",
  campaign: "The campaign was rejected (simulated rejection)",
  assignment: "The number could not be assigned to the campaign (simulated rejection)"
}

/** A filed brand: its report, its decided outcome (applied on the next status read) and the PIN it waits for. */
interface Brand {
  readonly report: BrandReport
  readonly soleProprietor: boolean
  readonly outcome: "accept" | "reject" | "otp"
  readonly reasons: ReadonlyArray<string>
  readonly pin: string | null
}

interface FiledCampaign {
  readonly report: CampaignReport
  readonly outcome: "approve" | "reject"
  readonly reasons: ReadonlyArray<string>
}

/** A number asked for, and how its review settles on the next read. */
interface Assignment {
  readonly report: AssignmentReport
  readonly outcome: "assign" | "fail"
  readonly reasons: ReadonlyArray<string>
}

interface WorkspaceState {
  readonly next: NextOutcome
  readonly brands: ReadonlyMap<string, Brand>
  readonly campaigns: ReadonlyMap<string, FiledCampaign>
  /** Number assignments by number. */
  readonly assignments: ReadonlyMap<string, Assignment>
  readonly lastOtp: SentOtp | null
}

const empty: WorkspaceState = {
  next: {},
  brands: new Map(),
  campaigns: new Map(),
  assignments: new Map(),
  lastOtp: null
}

const rejected = (message: string) => new RegistryError({ reason: "rejected", message })

/** Reasons given with the outcome, or a default naming the simulator. */
const reasonsFor = (
  next: NextOutcome,
  fallback: string
) => (next.reasons !== undefined && next.reasons.length > 0 ? next.reasons : [fallback])

/** The next outcome once a filing used its `part`: a rejection takes the reasons with it, for the other part's default. */
const used = (next: NextOutcome, part: "brand" | "campaign" | "assignment", rejects: boolean): NextOutcome => {
  const { [part]: _part, ...rest } = next
  if (!rejects) return rest
  const { reasons: _reasons, ...left } = rest
  return left
}

const makePin = Effect.map(Random.nextIntBetween(0, 1_000_000), (n) => String(n).padStart(6, "0"))

const make = Effect.gen(function*() {
  const numbers = yield* NumberStore
  const state = yield* Ref.make<ReadonlyMap<string, WorkspaceState>>(new Map())
  // Every call reads, decides, then writes: one at a time, so concurrent calls never lose an update.
  const lock = yield* Effect.makeSemaphore(1)
  const serial = <A, E>(effect: Effect.Effect<A, E>) => lock.withPermits(1)(effect)

  const read = (workspaceId: string) => Effect.map(Ref.get(state), (all) => all.get(workspaceId) ?? empty)
  const write = (workspaceId: string, ws: WorkspaceState) =>
    Ref.update(state, (all) => new Map(all).set(workspaceId, ws))
  const withBrand = (ws: WorkspaceState, brand: Brand): WorkspaceState => ({
    ...ws,
    brands: new Map(ws.brands).set(brand.report.brandId, brand)
  })

  /**
   * A brand of this workspace. One of the simulator's own ids that this process does not know was
   * filed before a restart (or by another process): it is recalled as `as` says, rather than
   * leaving a stored registration unable to move.
   */
  const findBrand = (workspaceId: string, brandId: string, as: "pending" | "accepted" | "otp_pending") =>
    Effect.flatMap(Ref.get(state), (all) => {
      const ws = all.get(workspaceId) ?? empty
      const brand = ws.brands.get(brandId)
      if (brand !== undefined) return Effect.succeed({ ws, brand })
      // Another workspace's brand is not found under this one.
      const elsewhere = [...all.values()].some((other) => other.brands.has(brandId))
      if (!brandId.startsWith(BRAND_PREFIX) || elsewhere) return Effect.fail(rejected(`Brand ${brandId} not found`))
      const recalled: Brand = {
        report: { brandId, status: as, identityStatus: identityAt[as], failureReasons: [], otpSentAt: null },
        soleProprietor: as === "otp_pending",
        outcome: as === "otp_pending" ? "otp" : "accept",
        reasons: [],
        pin: null
      }
      return Effect.succeed({ ws: withBrand(ws, recalled), brand: recalled })
    })

  /** Texts a fresh PIN: the brand waits for it and the test helper can read it. */
  const textPin = (workspaceId: string, ws: WorkspaceState, brand: Brand) =>
    Effect.gen(function*() {
      const sent: SentOtp = { pin: yield* makePin, sentAt: new Date(yield* Clock.currentTimeMillis).toISOString() }
      const updated: Brand = {
        ...brand,
        pin: sent.pin,
        report: { ...brand.report, status: "otp_pending", otpSentAt: sent.sentAt }
      }
      yield* write(workspaceId, { ...withBrand(ws, updated), lastOtp: sent })
      return updated.report
    })

  const registry = Registry.of({
    messagingProfile: (workspaceId) => Effect.succeed(`sim_profile_${workspaceId}`),
    fileBrand: (workspaceId, business) =>
      serial(
        Effect.gen(function*() {
          const ws = yield* read(workspaceId)
          const soleProprietor = business.entityType === "SOLE_PROPRIETOR"
          const outcome = ws.next.brand ?? "accept"
          const report: BrandReport = {
            brandId: `${BRAND_PREFIX}${(yield* Ids).uuid()}`,
            status: "pending",
            identityStatus: soleProprietor ? "SELF_DECLARED" : "UNVERIFIED",
            failureReasons: [],
            otpSentAt: null
          }
          const brand: Brand = {
            report,
            soleProprietor,
            outcome,
            reasons: reasonsFor(ws.next, DEFAULT_REASONS.brand),
            pin: null
          }
          yield* write(workspaceId, { ...withBrand(ws, brand), next: used(ws.next, "brand", outcome === "reject") })
          return report
        })
      ),

    brandStatus: (workspaceId, brandId) =>
      serial(
        Effect.gen(function*() {
          const { brand, ws } = yield* findBrand(workspaceId, brandId, "pending")
          if (brand.report.status !== "pending") return brand.report
          // The review completes now. Only sole proprietors verify by PIN; another brand told `otp` is accepted.
          if (brand.outcome === "otp" && brand.soleProprietor) return yield* textPin(workspaceId, ws, brand)
          const report: BrandReport = brand.outcome === "reject"
            ? { ...brand.report, status: "rejected", identityStatus: "UNVERIFIED", failureReasons: brand.reasons }
            : { ...brand.report, status: "accepted", identityStatus: "VERIFIED" }
          yield* write(workspaceId, withBrand(ws, { ...brand, report }))
          return report
        })
      ),

    sendOtp: (workspaceId, brandId) =>
      serial(
        Effect.gen(function*() {
          const { brand, ws } = yield* findBrand(workspaceId, brandId, "otp_pending")
          if (brand.report.status !== "otp_pending") return yield* rejected(`Brand ${brandId} is not waiting for a PIN`)
          return yield* textPin(workspaceId, ws, brand)
        })
      ),

    verifyOtp: (workspaceId, brandId, pin) =>
      serial(
        Effect.gen(function*() {
          const { brand, ws } = yield* findBrand(workspaceId, brandId, "otp_pending")
          if (brand.report.status !== "otp_pending" || brand.pin === null || brand.report.otpSentAt === null) {
            return yield* rejected(`Brand ${brandId} is not waiting for a PIN`)
          }
          if (pin !== brand.pin) return yield* new OtpRejected({ reason: "wrong", message: "The PIN is not correct" })
          if ((yield* Clock.currentTimeMillis) - Date.parse(brand.report.otpSentAt) > OTP_TTL_MILLIS) {
            return yield* new OtpRejected({ reason: "expired", message: "The PIN has expired: request a new one" })
          }
          const report: BrandReport = { ...brand.report, status: "accepted", identityStatus: "VERIFIED" }
          yield* write(workspaceId, withBrand(ws, { ...brand, report, pin: null }))
          return report
        })
      ),

    fileCampaign: (workspaceId, brandId, _campaign) =>
      serial(
        Effect.gen(function*() {
          const { brand, ws } = yield* findBrand(workspaceId, brandId, "accepted")
          if (brand.report.status !== "accepted") return yield* rejected(`Brand ${brandId} is not accepted yet`)
          const outcome = ws.next.campaign ?? "approve"
          const report: CampaignReport = {
            campaignId: `${CAMPAIGN_PREFIX}${(yield* Ids).uuid()}`,
            brandId,
            status: "pending",
            failureReasons: []
          }
          const filed: FiledCampaign = { report, outcome, reasons: reasonsFor(ws.next, DEFAULT_REASONS.campaign) }
          yield* write(workspaceId, {
            ...ws,
            campaigns: new Map(ws.campaigns).set(report.campaignId, filed),
            next: used(ws.next, "campaign", outcome === "reject")
          })
          return report
        })
      ),

    campaignStatus: (workspaceId, campaignId) =>
      serial(
        Effect.gen(function*() {
          const ws = yield* read(workspaceId)
          // A campaign of ours this process does not know (filed before a restart) is recalled as approved.
          const elsewhere = [...(yield* Ref.get(state)).values()].some((other) => other.campaigns.has(campaignId))
          const filed = ws.campaigns.get(campaignId) ??
            (campaignId.startsWith(CAMPAIGN_PREFIX) && !elsewhere
              ? {
                report: { campaignId, brandId: "", status: "pending" as const, failureReasons: [] },
                outcome: "approve" as const,
                reasons: []
              }
              : undefined)
          if (filed === undefined) return yield* rejected(`Campaign ${campaignId} not found`)
          if (filed.report.status !== "pending") return filed.report
          const report: CampaignReport = filed.outcome === "reject"
            ? { ...filed.report, status: "rejected", failureReasons: filed.reasons }
            : { ...filed.report, status: "approved" }
          yield* write(workspaceId, { ...ws, campaigns: new Map(ws.campaigns).set(campaignId, { ...filed, report }) })
          return report
        })
      ),

    assignNumber: (workspaceId, campaignId, e164) => assignNumber(workspaceId, campaignId, e164),
    assignmentStatus: (workspaceId, e164) => assignmentStatus(workspaceId, e164)
  })

  /** Whether a workspace holds the number: the simulator's account. */
  const onAccount = (e164: string) => Effect.map(numbers.findByE164(e164), Option.isSome)

  const assignNumber: Registry["assignNumber"] = (workspaceId, campaignId, e164) =>
    serial(
      Effect.gen(function*() {
        if (!(yield* onAccount(e164))) return yield* rejected(`${e164} is not a phone number on this account`)
        const ws = yield* read(workspaceId)
        const campaign = ws.campaigns.get(campaignId)
        // Telnyx assigns only to an active campaign; one of ours this process does not know is recalled as approved.
        if (campaign !== undefined && campaign.report.status !== "approved") {
          return yield* rejected(`Campaign ${campaignId} is not active`)
        }
        if (campaign === undefined && !campaignId.startsWith(CAMPAIGN_PREFIX)) {
          return yield* rejected(`Campaign ${campaignId} not found`)
        }
        if (ws.assignments.has(e164)) return yield* rejected(`${e164} is already assigned to a campaign`)
        const outcome = ws.next.assignment ?? "assign"
        const assignment: Assignment = {
          report: { phoneNumber: e164, status: "pending", failureReasons: [] },
          outcome,
          reasons: reasonsFor(ws.next, DEFAULT_REASONS.assignment)
        }
        yield* write(workspaceId, {
          ...ws,
          assignments: new Map(ws.assignments).set(e164, assignment),
          next: used(ws.next, "assignment", outcome === "fail")
        })
        return assignment.report
      })
    )

  const assignmentStatus: Registry["assignmentStatus"] = (workspaceId, e164) =>
    serial(
      Effect.gen(function*() {
        const ws = yield* read(workspaceId)
        const known = ws.assignments.get(e164)
        if (known === undefined) {
          if (!(yield* onAccount(e164))) return yield* rejected(`No campaign assignment for ${e164}`)
          return { phoneNumber: e164, status: "assigned" as const, failureReasons: [] }
        }
        if (known.report.status !== "pending") return known.report
        const report: AssignmentReport = known.outcome === "fail"
          ? { ...known.report, status: "failed", failureReasons: known.reasons }
          : { ...known.report, status: "assigned" }
        yield* write(workspaceId, { ...ws, assignments: new Map(ws.assignments).set(e164, { ...known, report }) })
        return report
      })
    )

  const control = RegistrySimulator.of({
    setNextOutcome: (workspaceId, outcome) =>
      serial(Effect.flatMap(read(workspaceId), (ws) => write(workspaceId, { ...ws, next: outcome }))),
    lastOtp: (workspaceId) => Effect.map(read(workspaceId), (ws) => Option.fromNullable(ws.lastOtp))
  })
  return Context.make(Registry, registry).pipe(
    Context.add(MockRegistry, registry),
    Context.add(RegistrySimulator, control)
  )
})

/** The simulator as the registry (live filings too, under CARRIER=simulated), the mock registry and the test helpers' side. */
export const layer: Layer.Layer<Registry | MockRegistry | RegistrySimulator, never, NumberStore> = Layer.effectContext(
  make
)

/** The simulator for mock-mode filings and the test helpers only, beside a real registry. */
export const layerMock: Layer.Layer<MockRegistry | RegistrySimulator, never, NumberStore> = Layer.effectContext(
  Effect.map(make, Context.omit(Registry))
)
