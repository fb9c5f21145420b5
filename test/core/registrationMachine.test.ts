/** SPEC "Messaging registration `step`": the pure pipeline, by example and over random event sequences. */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import {
  canText,
  initial,
  InvalidTransition,
  type RegistrationEvent,
  RegistrationEvent as E,
  type RegistrationState,
  steps,
  transition
} from "../../core/registration/machine.ts"

/** Applies events in order, failing the test on the first invalid one; returns every step visited. */
const run = (events: ReadonlyArray<RegistrationEvent>, from: RegistrationState = initial) => {
  const visited = [from.step]
  const state = events.reduce((s, e) => {
    const next = Either.getOrThrow(transition(s, e))
    visited.push(next.step)
    return next
  }, from)
  return { state, visited }
}

const filed = (soleProprietor: boolean) => [E.ProfileCreated(), E.Filed({ soleProprietor })]

describe("documented paths", () => {
  it("business: profile, filing, brand accepted, campaign submitted and approved", () => {
    const { state, visited } = run([...filed(false), E.BrandAccepted(), E.CampaignSubmitted(), E.CampaignApproved()])
    expect(visited).toEqual([
      "none",
      "profile_ready",
      "brand_pending",
      "brand_ok",
      "campaign_pending",
      "campaign_active"
    ])
    expect(canText(state)).toBe(true)
  })

  it("sole proprietor: the brand waits for the PIN, then the campaign is created and approved", () => {
    const { state, visited } = run([
      ...filed(true),
      E.BrandNeedsOtp(),
      E.OtpVerified(),
      E.CampaignSubmitted(),
      E.CampaignApproved()
    ])
    expect(visited).toEqual([
      "none",
      "profile_ready",
      "brand_pending",
      "brand_otp_pending",
      "brand_ok",
      "campaign_pending",
      "campaign_active"
    ])
    expect(canText(state)).toBe(true)
  })

  it("a business brand never waits for a PIN", () => {
    const { state } = run(filed(false))
    expect(transition(state, E.BrandNeedsOtp())).toEqual(
      Either.left(new InvalidTransition({ step: "brand_pending", event: "BrandNeedsOtp" }))
    )
  })

  it("brand rejected, then resubmitted and accepted", () => {
    const { state, visited } = run([
      ...filed(false),
      E.BrandRejected(),
      E.Filed({ soleProprietor: false }),
      E.BrandAccepted()
    ])
    expect(visited).toEqual(["none", "profile_ready", "brand_pending", "brand_failed", "brand_pending", "brand_ok"])
    expect(canText(state)).toBe(false)
  })

  it("a sole-proprietor brand may fail while it waits for its PIN", () => {
    expect(run([...filed(true), E.BrandNeedsOtp(), E.BrandRejected()]).state.step).toBe("brand_failed")
  })

  it("campaign rejected, then a new filing restarts at the brand; it may change the entity type", () => {
    const { state, visited } = run([
      ...filed(false),
      E.BrandAccepted(),
      E.CampaignSubmitted(),
      E.CampaignRejected(),
      E.Filed({ soleProprietor: true }),
      E.BrandNeedsOtp()
    ])
    expect(visited.slice(-3)).toEqual(["campaign_failed", "brand_pending", "brand_otp_pending"])
    expect(state).toEqual({ step: "brand_otp_pending", soleProprietor: true })
  })

  it("an invalid transition is a typed error naming the step and the event, and says so", () => {
    const result = transition(initial, E.CampaignApproved())
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.getLeft(result).pipe((o) => (o._tag === "Some" ? o.value : undefined))!
    expect(error._tag).toBe("InvalidTransition")
    expect(error.message).toBe("the registration cannot take CampaignApproved while its step is none")
  })

  it("canText is true in campaign_active only", () => {
    for (const step of steps) expect(canText({ step, soleProprietor: false })).toBe(step === "campaign_active")
  })
})

const everyEvent: ReadonlyArray<RegistrationEvent> = [
  E.ProfileCreated(),
  E.Filed({ soleProprietor: false }),
  E.Filed({ soleProprietor: true }),
  E.BrandAccepted(),
  E.BrandNeedsOtp(),
  E.BrandRejected(),
  E.OtpVerified(),
  E.CampaignSubmitted(),
  E.CampaignApproved(),
  E.CampaignRejected()
]

/**
 * A random sequence of inputs: each either any event (mostly invalid ones, which must be refused)
 * or one of the events valid in the state reached, so long sequences get deep into the pipeline.
 */
const sequences = fc.array(fc.record({ anyEvent: fc.boolean(), pick: fc.nat() }), { maxLength: 40 })

/** Every (state, event, result) of a sequence; an invalid event leaves the state as it was, as a caller would. */
const walk = (choices: ReadonlyArray<{ anyEvent: boolean; pick: number }>) => {
  const trace: Array<
    { before: RegistrationState; event: RegistrationEvent; after: RegistrationState; valid: boolean }
  > = []
  let state = initial
  for (const { anyEvent, pick } of choices) {
    const valid = everyEvent.filter((e) => Either.isRight(transition(state, e)))
    const pool = anyEvent || valid.length === 0 ? everyEvent : valid
    const e = pool[pick % pool.length]!
    const next = transition(state, e)
    const after = Either.getOrElse(next, () => state)
    trace.push({ before: state, event: e, after, valid: Either.isRight(next) })
    state = after
  }
  return trace
}

describe("properties over random event sequences", () => {
  it("canText becomes true only through the carriers' approval of a pending campaign", () => {
    fc.assert(
      fc.property(sequences, (choices) => {
        for (const t of walk(choices)) {
          if (canText(t.after) && !canText(t.before)) {
            expect(t.before.step).toBe("campaign_pending")
            expect(t.event._tag).toBe("CampaignApproved")
          }
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("only a brand filed as a sole proprietor enters brand_otp_pending", () => {
    fc.assert(
      fc.property(sequences, (events) => {
        let lastFiledSole: boolean | null = null
        for (const t of walk(events)) {
          if (t.valid && t.event._tag === "Filed") lastFiledSole = t.event.soleProprietor
          if (t.after.step === "brand_otp_pending") expect(lastFiledSole).toBe(true)
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("brand_failed and campaign_failed are left only by a new filing", () => {
    fc.assert(
      fc.property(sequences, (events) => {
        for (const t of walk(events)) {
          if (
            (t.before.step === "brand_failed" || t.before.step === "campaign_failed") && t.after.step !== t.before.step
          ) {
            expect(t.event._tag).toBe("Filed")
            expect(t.after.step).toBe("brand_pending")
          }
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("random sequences reach every step and try invalid events, so the properties above are exercised", () => {
    const seen = new Set<string>()
    let refused = 0
    fc.assert(
      fc.property(sequences, (choices) => {
        for (const t of walk(choices)) {
          seen.add(t.after.step)
          if (!t.valid) refused++
        }
      }),
      { numRuns: 1000 }
    )
    expect([...seen].sort()).toEqual([...steps].sort())
    expect(refused).toBeGreaterThan(500)
  })
})
