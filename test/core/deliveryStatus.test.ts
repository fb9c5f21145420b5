/**
 * Message `deliveryStatus` (SPEC "Message deliveryStatus"): forward-only, so a late `sent` never
 * overwrites `delivered`; terminal states stay terminal; `simulated` (test keys) ranks with `queued`
 * so the test helpers can play carrier reports onto it. And the mapping of Telnyx's status words.
 */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { advance, type DeliveryStatus, fromCarrier, isTerminal } from "../../core/messaging/deliveryStatus.ts"

const all: ReadonlyArray<DeliveryStatus> = ["queued", "sent", "delivered", "failed", "received", "simulated"]
const status = fc.constantFrom(...all)
/** What a carrier can report about an outbound message (fromCarrier never yields received or simulated). */
const report = fc.constantFrom<DeliveryStatus>("queued", "sent", "delivered", "failed")

/** The rank the SPEC implies: queued/simulated, then sent, then a terminal outcome. */
const rankOf = (s: DeliveryStatus) => (s === "queued" || s === "simulated" ? 0 : s === "sent" ? 1 : 2)

/** The reference model: the highest rank reached wins; among terminal reports the first one wins. */
const expected = (start: DeliveryStatus, reports: ReadonlyArray<DeliveryStatus>): DeliveryStatus => {
  let best = start
  for (const r of reports) {
    if (rankOf(best) === 2) break
    if (rankOf(r) > rankOf(best)) best = r
  }
  return best
}

describe("advance", () => {
  it("the documented examples", () => {
    assert.strictEqual(advance("queued", "sent"), "sent")
    assert.strictEqual(advance("sent", "delivered"), "delivered")
    // a late `sent` never overwrites `delivered`
    assert.strictEqual(advance("delivered", "sent"), "delivered")
    assert.strictEqual(advance("delivered", "queued"), "delivered")
    assert.strictEqual(advance("sent", "queued"), "sent")
    assert.strictEqual(advance("queued", "failed"), "failed")
    assert.strictEqual(advance("sent", "failed"), "failed")
    // the first terminal outcome wins
    assert.strictEqual(advance("delivered", "failed"), "delivered")
    assert.strictEqual(advance("failed", "delivered"), "failed")
    assert.strictEqual(advance("received", "delivered"), "received")
    assert.strictEqual(advance("received", "failed"), "received")
  })

  it("simulated behaves like queued", () => {
    for (const r of all) {
      const fromSimulated = advance("simulated", r)
      const fromQueued = advance("queued", r)
      // the same move happens (or not) from either starting point
      assert.strictEqual(fromSimulated === "simulated", fromQueued === "queued", `report ${r}`)
      if (fromQueued !== "queued") assert.strictEqual(fromSimulated, fromQueued, `report ${r}`)
    }
    assert.strictEqual(advance("simulated", "queued"), "simulated")
    assert.strictEqual(advance("queued", "simulated"), "queued")
    assert.strictEqual(advance("simulated", "sent"), "sent")
    assert.strictEqual(advance("simulated", "delivered"), "delivered")
    assert.strictEqual(advance("simulated", "failed"), "failed")
  })

  it("isTerminal: delivered, failed and received only", () => {
    assert.deepStrictEqual(all.filter(isTerminal), ["delivered", "failed", "received"])
  })

  it.prop(
    "never moves backward: the result ranks at least as high as the current status",
    [status, status],
    ([current, reported]) => {
      const next = advance(current, reported)
      assert.isTrue(next === current || next === reported)
      assert.isAtLeast(rankOf(next), rankOf(current))
    }
  )

  it.prop("a higher-ranked report on a non-terminal status is taken", [status, status], ([current, reported]) => {
    const next = advance(current, reported)
    if (!isTerminal(current) && rankOf(reported) > rankOf(current)) assert.strictEqual(next, reported)
    else assert.strictEqual(next, current)
  })

  it.prop("terminal statuses never change", [
    fc.constantFrom<DeliveryStatus>("delivered", "failed", "received"),
    fc.array(status)
  ], ([terminal, reports]) => {
    assert.strictEqual(reports.reduce(advance, terminal), terminal)
  })

  it.prop("idempotent: the same report twice equals once", [status, status], ([current, reported]) => {
    const once = advance(current, reported)
    assert.strictEqual(advance(once, reported), once)
  })

  it.prop(
    "any sequence of reports yields the highest status reached, the first terminal one on ties",
    [fc.constantFrom<DeliveryStatus>("queued", "simulated"), fc.array(report, { maxLength: 12 })],
    ([start, reports]) => {
      const final = reports.reduce(advance, start)
      assert.strictEqual(final, expected(start, reports), `${start} + ${reports.join(",")}`)
      const firstTerminal = reports.find((r) => isTerminal(r))
      if (firstTerminal !== undefined) assert.strictEqual(final, firstTerminal)
    }
  )

  it.prop(
    "order of arrival of non-terminal reports does not matter",
    [
      fc.constantFrom<DeliveryStatus>("queued", "simulated"),
      fc.array(fc.constantFrom<DeliveryStatus>("queued", "sent"), { maxLength: 10 })
    ],
    ([start, reports]) => {
      const forward = reports.reduce(advance, start)
      const backward = [...reports].reverse().reduce(advance, start)
      assert.strictEqual(forward, backward)
      assert.strictEqual(forward, reports.includes("sent") ? "sent" : start)
    }
  )
})

describe("fromCarrier (Telnyx status words)", () => {
  it("maps Telnyx's words onto ours", () => {
    const table: ReadonlyArray<readonly [string, DeliveryStatus | null]> = [
      ["queued", "queued"],
      ["sending", "sent"],
      ["sent", "sent"],
      ["delivered", "delivered"],
      ["sending_failed", "failed"],
      ["delivery_failed", "failed"],
      ["delivery_unconfirmed", "sent"],
      ["expired", "failed"],
      ["failed", "failed"],
      // words that are not outbound delivery outcomes are ignored
      ["received", null],
      ["webhook_delivered", null],
      ["simulated", null],
      ["DELIVERED", null],
      ["", null],
      ["unknown_word", null]
    ]
    for (const [word, ours] of table) assert.strictEqual(fromCarrier(word), ours, word)
  })

  it.prop("any word maps to null or a status a carrier can report", [fc.string()], ([word]) => {
    const s = fromCarrier(word)
    assert.isTrue(s === null || ["queued", "sent", "delivered", "failed"].includes(s))
  })
})
