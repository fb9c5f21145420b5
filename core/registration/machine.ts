/**
 * The US 10DLC registration pipeline (SPEC "Messaging registration `step`") as a pure state
 * machine: no store, no HTTP, no clock. Whoever owns the registration (the service, a poller, an
 * embedder) feeds it what happened and stores the state it returns. It imports nothing but
 * `effect`, so it runs anywhere the core does.
 */
import { Data, Either } from "effect"

/** The SPEC `step` values, in pipeline order. */
export const steps = [
  "none",
  "profile_ready",
  "brand_pending",
  "brand_failed",
  "brand_otp_pending",
  "brand_ok",
  "campaign_pending",
  "campaign_active",
  "campaign_failed"
] as const
export type Step = (typeof steps)[number]

/**
 * Where a registration is. `soleProprietor` is the kind of the brand filed last: only such a brand
 * may wait for a PIN, so the machine has to know it, not trust the carrier's report.
 */
export interface RegistrationState {
  readonly step: Step
  readonly soleProprietor: boolean
}

/** A workspace that has never filed. */
export const initial: RegistrationState = { step: "none", soleProprietor: false }

/**
 * What can happen to a registration. `Filed` is the first filing and every resubmission; the
 * others are the carrier's and registry's outcomes, or the customer's PIN.
 */
export type RegistrationEvent = Data.TaggedEnum<{
  /** The carrier messaging profile exists (`none` -> `profile_ready`). */
  ProfileCreated: {}
  /** Brand and staged campaign filed with the registry; also a resubmission after a failure. */
  Filed: { readonly soleProprietor: boolean }
  BrandAccepted: {}
  /** The registry texted a PIN to the sole proprietor's mobile. */
  BrandNeedsOtp: {}
  BrandRejected: {}
  /** The sole proprietor entered the correct, unexpired PIN. */
  OtpVerified: {}
  /** The staged campaign was created with the registry (automatic once the brand is accepted). */
  CampaignSubmitted: {}
  CampaignApproved: {}
  CampaignRejected: {}
}>
export const RegistrationEvent = Data.taggedEnum<RegistrationEvent>()

/** An event that cannot happen in the current step: the caller's state and the event are kept for the message. */
export class InvalidTransition extends Data.TaggedError("InvalidTransition")<{
  readonly step: Step
  readonly event: RegistrationEvent["_tag"]
}> {
  override get message() {
    return `the registration cannot take ${this.event} while its step is ${this.step}`
  }
}

/** Steps a filing may start from: before the first, or after a failure (a resubmission). */
const fileable: ReadonlySet<Step> = new Set(["profile_ready", "brand_failed", "campaign_failed"])

/** The next step, or null when the event is not allowed in this state. */
const nextStep = (state: RegistrationState, event: RegistrationEvent): Step | null => {
  switch (event._tag) {
    case "ProfileCreated":
      return state.step === "none" ? "profile_ready" : null
    case "Filed":
      return fileable.has(state.step) ? "brand_pending" : null
    case "BrandAccepted":
      return state.step === "brand_pending" ? "brand_ok" : null
    case "BrandNeedsOtp":
      return state.step === "brand_pending" && state.soleProprietor ? "brand_otp_pending" : null
    case "BrandRejected":
      // A sole-proprietor brand can also fail while it waits for its PIN (the registry gives up on it).
      return state.step === "brand_pending" || state.step === "brand_otp_pending" ? "brand_failed" : null
    case "OtpVerified":
      return state.step === "brand_otp_pending" ? "brand_ok" : null
    case "CampaignSubmitted":
      return state.step === "brand_ok" ? "campaign_pending" : null
    case "CampaignApproved":
      return state.step === "campaign_pending" ? "campaign_active" : null
    case "CampaignRejected":
      return state.step === "campaign_pending" ? "campaign_failed" : null
  }
}

/** The state after `event`, or `InvalidTransition` (the state is then unchanged: nothing to store). */
export const transition = (
  state: RegistrationState,
  event: RegistrationEvent
): Either.Either<RegistrationState, InvalidTransition> => {
  const step = nextStep(state, event)
  if (step === null) return Either.left(new InvalidTransition({ step: state.step, event: event._tag }))
  return Either.right({ step, soleProprietor: event._tag === "Filed" ? event.soleProprietor : state.soleProprietor })
}

/** Whether the workspace may text on its own campaign: only once the carriers approved it. */
export const canText = (state: RegistrationState): boolean => state.step === "campaign_active"
