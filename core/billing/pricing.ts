/**
 * What each purchase costs (SPEC "Numbers", pricing rules), as the charge to collect and write to the
 * ledger. Pure: the time of purchase is an argument (the use case reads it from Clock).
 */
import type { E164 } from "../kernel/phone.ts"
import type { NumberType } from "../numbers/model.ts"
import type { Charge } from "./ledger.ts"

/** List prices in US cents. */
export const prices = {
  /**
   * The plan, once a filing ends the free trial (SPEC leaves its price open; every plan name costs
   * this here). A workspace past its trial already pays it and is not charged again.
   */
  planMonthly: 1500,
  /** Each local number after the first, which the plan includes. */
  localNumberMonthly: 500,
  tollFreeMonthly: 1000,
  /** Once per local number, when its texting registration is filed. */
  textingSetup: 2000,
  /** Each local number's, from the campaign's approval. */
  messagingMonthly: 400
} as const

/** A number being bought. */
export interface NumberPurchase {
  readonly e164: E164
  /** The billed type (`numberTypeOf`: a +1 8xx number is toll-free whatever the caller says). */
  readonly type: typeof NumberType.Type
  /** How many local numbers the workspace has before this one. */
  readonly localNumbers: number
}

/**
 * The smallest amount a card is charged: Stripe's minimum for USD
 * (https://docs.stripe.com/currencies#minimum-and-maximum-charge-amounts). A purchase whose
 * prorated total is below it (a day or two left in the month) is waived, not charged.
 */
export const minimumChargeCents = 50

/** A purchase's charges as collected: a total under the minimum is waived, each row kept at 0 and saying so. */
export const collectable = (charges: ReadonlyArray<Charge>): ReadonlyArray<Charge> => {
  const total = charges.reduce((sum, c) => sum + c.amountCents, 0)
  return total > 0 && total < minimumChargeCents
    ? charges.map((c) => ({
      ...c,
      amountCents: 0,
      description: `${c.description}, waived (under the ${minimumChargeCents}-cent minimum charge)`
    }))
    : charges
}

/** A paid add-on: a second (or later) local number, or any toll-free line. */
export const isAddOn = (purchase: Pick<NumberPurchase, "type" | "localNumbers">): boolean =>
  purchase.type === "toll_free" || purchase.localNumbers > 0

export interface Proration {
  readonly amountCents: number
  /** Days billed: the day of purchase through the last day of its month. */
  readonly days: number
  readonly daysInMonth: number
}

/**
 * A monthly price for the rest of the month (UTC) of `at`: the day of purchase counts in full, so the
 * first of a month bills the whole price and the last day bills one day. The amount is
 * `monthlyCents × days ÷ daysInMonth` rounded to the nearest cent, halves up (integer arithmetic, no
 * floating-point drift).
 */
export const prorate = (monthlyCents: number, at: Date): Proration => {
  const daysInMonth = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0)).getUTCDate()
  const days = daysInMonth - at.getUTCDate() + 1
  return { amountCents: Math.floor((2 * monthlyCents * days + daysInMonth) / (2 * daysInMonth)), days, daysInMonth }
}

const prorated = (p: Proration) => `prorated ${p.days}/${p.daysInMonth} days`

/** Whether a ledger row paid for part of a month (a purchase, a filing, an approval), not a whole one (an invoice). */
export const isProration = (c: Pick<Charge, "description">) => /, prorated \d+\/\d+ days/.test(c.description)

/** The charge for a number bought at `at`: the first local number is included in the plan (0). */
export const numberCharge = (purchase: NumberPurchase, at: Date): Charge => {
  const { e164 } = purchase
  if (purchase.type === "toll_free") {
    const p = prorate(prices.tollFreeMonthly, at)
    return {
      kind: "toll_free_number",
      description: `Toll-free number ${e164}, ${prorated(p)}`,
      amountCents: p.amountCents,
      numberE164: e164
    }
  }
  if (!isAddOn(purchase)) {
    return {
      kind: "local_number",
      description: `Local number ${e164}, included in the plan`,
      amountCents: 0,
      numberE164: e164
    }
  }
  const p = prorate(prices.localNumberMonthly, at)
  return {
    kind: "local_number",
    description: `Local number ${e164}, ${prorated(p)}`,
    amountCents: p.amountCents,
    numberE164: e164
  }
}

/** The one-time texting setup of a local number, charged when its registration is filed (never twice per number). */
export const textingSetupCharge = (e164: E164): Charge => ({
  kind: "texting_setup",
  description: `Texting setup for ${e164}`,
  amountCents: prices.textingSetup,
  numberE164: e164
})

/** A local number's messaging add-on from the campaign's approval at `at`, prorated like a number. */
export const messagingAddonCharge = (e164: E164, at: Date): Charge => {
  const p = prorate(prices.messagingMonthly, at)
  return {
    kind: "messaging_addon",
    description: `Messaging add-on for ${e164}, ${prorated(p)}`,
    amountCents: p.amountCents,
    numberE164: e164
  }
}

/** The plan's first paid month, from the day a filing ended the trial, prorated like a number. */
export const planCharge = (plan: string, at: Date): Charge => {
  const p = prorate(prices.planMonthly, at)
  return { kind: "plan", description: `Plan ${plan}, ${prorated(p)}`, amountCents: p.amountCents, numberE164: null }
}
