/**
 * core/billing: the billing gates of CONTRACT.md, enumerated over every billing state (the state is
 * finite, so every combination is checked rather than sampled), and the prices of SPEC "Numbers",
 * prorated at month boundaries with the time passed in or read from a TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Either, Layer, TestClock } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as SimulatedPayments from "../../adapters/payments/simulated.ts"
import { numberPurchaseGate, registrationFilingGate } from "../../core/billing/gates.ts"
import type { Charge } from "../../core/billing/ledger.ts"
import { Payments } from "../../core/billing/payments.ts"
import {
  collectable,
  isProration,
  messagingAddonCharge,
  numberCharge,
  type NumberPurchase,
  planCharge,
  prices,
  prorate,
  textingSetupCharge
} from "../../core/billing/pricing.ts"
import { LedgerStore } from "../../core/billing/store.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import type { Billing } from "../../core/workspaces/model.ts"

const local = "+14155550100" as E164
const tollFree = "+18005550100" as E164

/** Every billing state: each field over all its values (the owner's e-mail gates nothing). */
const allBillingStates: ReadonlyArray<Billing> = (() => {
  const states: Array<Billing> = []
  for (const plan of [null, "standard"]) {
    for (const trial of [true, false]) {
      for (const subscription of ["active", "canceled"] as const) {
        for (const paymentMethod of [true, false]) {
          for (const identity of ["none", "submitted", "verified"] as const) {
            for (const mobileVerified of [true, false]) {
              for (const billedVia of ["card", "app_store"] as const) {
                for (const cardDeclines of [true, false]) {
                  states.push({
                    plan,
                    trial,
                    subscription,
                    paymentMethod,
                    identity,
                    mobileVerified,
                    billedVia,
                    cardDeclines,
                    ownerEmail: null
                  })
                }
              }
            }
          }
        }
      }
    }
  }
  return states
})()

const purchases: ReadonlyArray<readonly [string, NumberPurchase]> = [
  ["the first local number", { e164: local, type: "local", localNumbers: 0 }],
  ["a second local number", { e164: local, type: "local", localNumbers: 1 }],
  ["a fourth local number", { e164: local, type: "local", localNumbers: 3 }],
  ["a toll-free number, no local one yet", { e164: tollFree, type: "toll_free", localNumbers: 0 }],
  ["a toll-free number beside a local one", { e164: tollFree, type: "toll_free", localNumbers: 1 }]
]

/** CONTRACT.md "Billing gates" for POST /numbers, transcribed as data: the first that holds answers. */
const numberGatesOfContract: ReadonlyArray<readonly [string, (b: Billing, p: NumberPurchase) => boolean]> = [
  ["Choose a plan before adding phone numbers", (b) => b.plan === null],
  ["Verify your identity before adding phone numbers", (b) => b.trial && b.identity !== "verified"],
  ["Verify your mobile number before adding phone numbers", (b) => b.trial && !b.mobileVerified],
  [
    "Workspaces billed through an app store cannot buy add-on numbers",
    // a paid add-on: a second local number, or any toll-free line
    (b, p) => b.billedVia === "app_store" && (p.type === "toll_free" || p.localNumbers >= 1)
  ]
]

/** Mid-June 2024: 12 of June's 30 days are left, counting the 19th. */
const june19 = new Date("2024-06-19T15:30:00.000Z")

/** What each allowed purchase costs on June 19, written out by hand. */
const expectedCharge = (p: NumberPurchase): Charge =>
  p.type === "toll_free"
    ? {
      kind: "toll_free_number",
      amountCents: 400,
      description: `Toll-free number ${tollFree}, prorated 12/30 days`,
      numberE164: tollFree
    }
    : p.localNumbers === 0
    ? {
      kind: "local_number",
      amountCents: 0,
      description: `Local number ${local}, included in the plan`,
      numberE164: local
    }
    : {
      kind: "local_number",
      amountCents: 200,
      description: `Local number ${local}, prorated 12/30 days`,
      numberE164: local
    }

describe("the number gates (POST /numbers)", () => {
  it("every billing state x purchase gives CONTRACT's outcome: the first gate that applies, or allowed at its price", () => {
    const seen = new Map<string, number>()
    for (const billing of allBillingStates) {
      for (const [label, purchase] of purchases) {
        const expected = numberGatesOfContract.find(([, applies]) => applies(billing, purchase))?.[0] ?? "allowed"
        seen.set(expected, (seen.get(expected) ?? 0) + 1)
        const result = numberPurchaseGate(billing, purchase)
        const context = `${label} with ${JSON.stringify(billing)}`
        if (expected === "allowed") {
          assert.isTrue(Either.isRight(result), `${context}: ${Either.isLeft(result) ? result.left.message : ""}`)
          assert.deepStrictEqual(numberCharge(purchase, june19), expectedCharge(purchase), context)
        } else {
          const error = Either.getLeft(result)
          assert.strictEqual(error._tag === "Some" ? error.value._tag : "none", "FailedPrecondition", context)
          assert.strictEqual(error._tag === "Some" ? error.value.message : "", expected, context)
        }
      }
    }
    // 384 states x 5 purchases; every outcome is reached, so no gate is dead and none always fires.
    assert.strictEqual(allBillingStates.length, 384)
    assert.deepStrictEqual([...seen.keys()].sort(), [...numberGatesOfContract.map(([m]) => m), "allowed"].sort())
    assert.strictEqual([...seen.values()].reduce((a, b) => a + b), 384 * 5)
  })

  it("order: a state failing every gate hears the plan first, then identity, then mobile, then the app store", () => {
    const worst: Billing = {
      plan: null,
      trial: true,
      subscription: "active",
      paymentMethod: false,
      identity: "none",
      mobileVerified: false,
      billedVia: "app_store",
      cardDeclines: false,
      ownerEmail: null
    }
    const extra = { type: "toll_free", localNumbers: 1 } as const
    const message = (b: Billing) =>
      Either.match(numberPurchaseGate(b, extra), { onLeft: (e) => e.message, onRight: () => "allowed" })
    assert.strictEqual(message(worst), "Choose a plan before adding phone numbers")
    assert.strictEqual(message({ ...worst, plan: "standard" }), "Verify your identity before adding phone numbers")
    assert.strictEqual(
      message({ ...worst, plan: "standard", identity: "submitted" }),
      "Verify your identity before adding phone numbers"
    )
    assert.strictEqual(
      message({ ...worst, plan: "standard", identity: "verified" }),
      "Verify your mobile number before adding phone numbers"
    )
    assert.strictEqual(
      message({ ...worst, plan: "standard", identity: "verified", mobileVerified: true }),
      "Workspaces billed through an app store cannot buy add-on numbers"
    )
    // off a trial, identity and mobile are not asked for
    assert.strictEqual(
      message({ ...worst, plan: "standard", trial: false }),
      "Workspaces billed through an app store cannot buy add-on numbers"
    )
    assert.strictEqual(message({ ...worst, plan: "standard", trial: false, billedVia: "card" }), "allowed")
    // an app-store workspace keeps its included first local number
    assert.isTrue(
      Either.isRight(
        numberPurchaseGate({ ...worst, plan: "standard", trial: false }, { type: "local", localNumbers: 0 })
      )
    )
  })
})

/** CONTRACT.md "Billing gates" for a live registration filing, as data. */
const filingGatesOfContract: ReadonlyArray<readonly [string, (b: Billing, acknowledged: boolean) => boolean]> = [
  ["Filing ends your free trial: send acknowledge_trial_end: true", (b, ack) => b.trial && !ack],
  [
    "Add a payment method",
    (b) => !b.paymentMethod || b.subscription === "canceled" || (b.trial && b.identity === "none")
  ]
]

describe("the registration-filing gates (POST /messaging/registration, live, no mock)", () => {
  it("every billing state x acknowledgement gives CONTRACT's outcome", () => {
    const seen = new Set<string>()
    for (const billing of allBillingStates) {
      for (const acknowledged of [true, false]) {
        const expected = filingGatesOfContract.find(([, applies]) => applies(billing, acknowledged))?.[0] ?? "allowed"
        seen.add(expected)
        const context = `acknowledge_trial_end ${acknowledged} with ${JSON.stringify(billing)}`
        const message = Either.match(registrationFilingGate(billing, acknowledged), {
          onLeft: (e) => `${e._tag}: ${e.message}`,
          onRight: () => "allowed"
        })
        if (expected === "allowed") assert.strictEqual(message, "allowed", context)
        else if (expected === "Add a payment method") {
          assert.match(message, /^FailedPrecondition: Add a payment method \S.* \S+$/, context)
        } else assert.strictEqual(message, `FailedPrecondition: ${expected}`, context)
      }
    }
    assert.strictEqual(seen.size, 3)
  })

  it("the payment message says which of the three is missing", () => {
    const ready: Billing = {
      plan: "standard",
      trial: true,
      subscription: "active",
      paymentMethod: true,
      identity: "submitted",
      mobileVerified: false,
      billedVia: "card",
      cardDeclines: false,
      ownerEmail: null
    }
    const message = (b: Billing) =>
      Either.match(registrationFilingGate(b, true), { onLeft: (e) => e.message, onRight: () => "allowed" })
    assert.strictEqual(message(ready), "allowed")
    assert.strictEqual(
      message({ ...ready, paymentMethod: false }),
      "Add a payment method before filing: a texting registration is charged to the card on file"
    )
    assert.strictEqual(
      message({ ...ready, subscription: "canceled" }),
      "Add a payment method and reactivate your subscription before filing a texting registration"
    )
    assert.strictEqual(
      message({ ...ready, identity: "none" }),
      "Add a payment method and submit your identity check before filing a texting registration"
    )
    // identity matters only while on a trial, and then only whether it was submitted
    assert.strictEqual(message({ ...ready, trial: false, identity: "none" }), "allowed")
  })

  it.effect("a filing that passes the gates stops at a declining card, and nothing is collected", () =>
    Effect.gen(function*() {
      const payments = yield* Payments
      const recorded = yield* SimulatedPayments.SimulatedPayments
      const workspace = {
        id: crypto.randomUUID(),
        billing: {
          plan: "standard",
          trial: false,
          subscription: "active",
          paymentMethod: true,
          identity: "verified",
          mobileVerified: true,
          billedVia: "card",
          cardDeclines: true,
          ownerEmail: null
        } as const
      }
      assert.isTrue(Either.isRight(registrationFilingGate(workspace.billing, false)))
      const setup = textingSetupCharge(local)
      const declined = yield* Effect.flip(payments.charge({
        workspace,
        amountCents: setup.amountCents,
        description: setup.description,
        idempotencyKey: crypto.randomUUID(),
        metadata: {}
      }))
      assert.deepStrictEqual(declined.message, "Your card was declined")
      assert.deepStrictEqual(yield* recorded.charges(workspace.id), [])
    }).pipe(Effect.provide(SimulatedPayments.layer)))
})

describe("pricing", () => {
  /** Local and toll-free add-ons bought at `iso`. */
  const at = (iso: string) => {
    const when = new Date(iso)
    return {
      local: numberCharge({ e164: local, type: "local", localNumbers: 1 }, when),
      tollFree: numberCharge({ e164: tollFree, type: "toll_free", localNumbers: 0 }, when)
    }
  }
  const cents = (iso: string) => {
    const c = at(iso)
    return [c.local.amountCents, c.tollFree.amountCents, c.local.description.replace(`Local number ${local}, `, "")]
  }

  it("prorates to the end of the month (UTC), counting the day of purchase, to the nearest cent", () => {
    // first and last day of a 30-day month
    assert.deepStrictEqual(cents("2024-06-01T00:00:00.000Z"), [500, 1000, "prorated 30/30 days"])
    assert.deepStrictEqual(cents("2024-06-30T23:59:59.999Z"), [17, 33, "prorated 1/30 days"]) // 16.67, 33.33
    // first and last day of a 31-day month
    assert.deepStrictEqual(cents("2024-01-01T00:00:00.000Z"), [500, 1000, "prorated 31/31 days"])
    assert.deepStrictEqual(cents("2024-01-31T12:00:00.000Z"), [16, 32, "prorated 1/31 days"]) // 16.13, 32.26
    // February in a leap year: 29 days, the 28th is not the last
    assert.deepStrictEqual(cents("2024-02-01T00:00:00.000Z"), [500, 1000, "prorated 29/29 days"])
    assert.deepStrictEqual(cents("2024-02-28T08:00:00.000Z"), [34, 69, "prorated 2/29 days"]) // 34.48, 68.97
    assert.deepStrictEqual(cents("2024-02-29T23:59:59.999Z"), [17, 34, "prorated 1/29 days"]) // 17.24, 34.48
    // February in a common year ends on the 28th
    assert.deepStrictEqual(cents("2023-02-28T00:00:00.000Z"), [18, 36, "prorated 1/28 days"]) // 17.86, 35.71
    // Dec 31 -> Jan: the last millisecond of the year bills one day, the next one a whole month
    assert.deepStrictEqual(cents("2024-12-31T23:59:59.999Z"), [16, 32, "prorated 1/31 days"])
    assert.deepStrictEqual(cents("2025-01-01T00:00:00.000Z"), [500, 1000, "prorated 31/31 days"])
    // the month is UTC's: 02:00 on March 1st at +05:00 is still February 29th
    assert.deepStrictEqual(cents("2024-03-01T02:00:00+05:00"), [17, 34, "prorated 1/29 days"])
    assert.deepStrictEqual(
      at("2024-06-19T00:00:00.000Z").tollFree.description,
      `Toll-free number ${tollFree}, prorated 12/30 days`
    )
  })

  it("every day of four years: the rounded share, the full price on the 1st, never more on a later day, never 0", () => {
    for (const monthly of [prices.localNumberMonthly, prices.tollFreeMonthly, prices.messagingMonthly]) {
      for (let day = Date.UTC(2023, 0, 1); day < Date.UTC(2027, 0, 1); day += 86_400_000) {
        const when = new Date(day + 43_200_000)
        const p = prorate(monthly, when)
        const daysInMonth = [
          31,
          when.getUTCFullYear() % 4 === 0 ? 29 : 28,
          31,
          30,
          31,
          30,
          31,
          31,
          30,
          31,
          30,
          31
        ][when.getUTCMonth()]!
        assert.strictEqual(p.daysInMonth, daysInMonth)
        assert.strictEqual(p.days, daysInMonth - when.getUTCDate() + 1)
        // monthly x days / daysInMonth never lands on half a cent for these prices, so Math.round agrees
        assert.strictEqual(p.amountCents, Math.round((monthly * p.days) / daysInMonth), when.toISOString())
        if (when.getUTCDate() === 1) assert.strictEqual(p.amountCents, monthly)
        else assert.isAtMost(p.amountCents, prorate(monthly, new Date(day - 43_200_000)).amountCents)
        assert.isAbove(p.amountCents, 0)
      }
    }
  })

  it("rounds halves up", () => {
    // one day of February 2023 is 1/28 of the month: 14 cents make exactly half a cent, 13 less, 42 one and a half
    assert.strictEqual(prorate(14, new Date("2023-02-28T00:00:00Z")).amountCents, 1)
    assert.strictEqual(prorate(13, new Date("2023-02-28T00:00:00Z")).amountCents, 0)
    assert.strictEqual(prorate(42, new Date("2023-02-28T00:00:00Z")).amountCents, 2) // 1.5
  })

  it("the first local number is included; texting setup and the messaging add-on", () => {
    assert.deepStrictEqual(numberCharge({ e164: local, type: "local", localNumbers: 0 }, june19), {
      kind: "local_number",
      description: `Local number ${local}, included in the plan`,
      amountCents: 0,
      numberE164: local
    })
    // a toll-free line is an add-on even as the workspace's first number
    assert.strictEqual(
      numberCharge({ e164: tollFree, type: "toll_free", localNumbers: 0 }, new Date("2024-06-01T00:00:00Z"))
        .amountCents,
      1000
    )
    assert.deepStrictEqual(textingSetupCharge(local), {
      kind: "texting_setup",
      description: `Texting setup for ${local}`,
      amountCents: 2000,
      numberE164: local
    })
    assert.deepStrictEqual(messagingAddonCharge(local, june19), {
      kind: "messaging_addon",
      description: `Messaging add-on for ${local}, prorated 12/30 days`,
      amountCents: 160,
      numberE164: local
    })
    assert.strictEqual(messagingAddonCharge(local, new Date("2024-07-01T00:00:00Z")).amountCents, 400)
  })

  it("tells a partial month's row from a whole month's, and waives a total under the minimum", () => {
    const at = new Date("2024-06-19T00:00:00Z")
    assert.isTrue(isProration(numberCharge({ e164: local, type: "local", localNumbers: 1 }, at)))
    assert.isTrue(isProration(messagingAddonCharge(local, at)))
    assert.isTrue(isProration(planCharge("standard", at)))
    assert.isFalse(isProration({ description: `Local number ${local}, June 2024` }))
    assert.isFalse(isProration(textingSetupCharge(local)))
    const lastDay = numberCharge({ e164: local, type: "local", localNumbers: 1 }, new Date("2024-06-30T00:00:00Z"))
    assert.strictEqual(lastDay.amountCents, 17)
    assert.deepStrictEqual(collectable([lastDay]), [{
      ...lastDay,
      amountCents: 0,
      description: `${lastDay.description}, waived (under the 50-cent minimum charge)`
    }])
    // The total decides: two small rows that reach the minimum together are charged as they are.
    const addons = [
      messagingAddonCharge(local, new Date("2024-06-28T00:00:00Z")),
      messagingAddonCharge(local, new Date("2024-06-28T00:00:00Z"))
    ]
    assert.strictEqual(addons[0]!.amountCents, 40)
    assert.deepStrictEqual(collectable(addons), addons)
  })

  it.effect("a use case prices with Clock's time, and the ledger stamps rows with the time it is given", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2024-02-29T18:00:00.000Z"))
      const now = new Date(yield* Clock.currentTimeMillis)
      const charge = numberCharge({ e164: local, type: "local", localNumbers: 2 }, now)
      assert.strictEqual(charge.description, `Local number ${local}, prorated 1/29 days`)
      const ledger = yield* LedgerStore
      const workspaceId = crypto.randomUUID()
      const [row] = yield* ledger.append(workspaceId, [charge], now.toISOString())
      assert.deepStrictEqual(row, {
        ...charge,
        id: row!.id,
        workspaceId,
        currency: "USD",
        createdAt: "2024-02-29T18:00:00.000Z"
      })
      yield* TestClock.adjust("6 hours")
      const next = numberCharge(
        { e164: local, type: "local", localNumbers: 3 },
        new Date(yield* Clock.currentTimeMillis)
      )
      assert.strictEqual(next.description, `Local number ${local}, prorated 31/31 days`)
      assert.strictEqual(next.amountCents, 500)
    }).pipe(Effect.provide(Layer.fresh(MemoryStores.layer))))
})
