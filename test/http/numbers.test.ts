/**
 * SPEC "Numbers" through the HTTP API, on real Postgres when the suite has one (PGlite otherwise):
 * search, buy through CONTRACT's billing gates, pay, and the ledger.
 */
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SimulatedPayments } from "../../adapters/payments/simulated.ts"
import { numberGateMessages } from "../../core/billing/gates.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { NumberStore } from "../../core/numbers/model.ts"
import type { makeTestApp } from "../support/app.ts"
import { makeSqlTestApp } from "../support/sqlApp.ts"
import { bearer, expectError, toTenthOfNextMonth } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

/** Billing that passes every gate: a plan, off trial, a card that pays. */
const ready = {
  plan: "standard",
  trial: false,
  subscription: "active",
  paymentMethod: true,
  identity: "verified",
  mobileVerified: true,
  billedVia: "card",
  cardDeclines: false
}

let app: App
let close: () => Promise<void>
beforeAll(async () => {
  ;({ app, close } = await makeSqlTestApp("numbers_http"))
}, 60_000)
afterAll(() => close())

/** A workspace with the given billing and a live key with every scope. */
const workspace = async (billing: Record<string, unknown> = ready) => {
  const { workspaceId } = await app.createWorkspace("Numbers", billing)
  const live = (await app.createKey(workspaceId, { kind: "live" })).token
  const test = (await app.createKey(workspaceId, { kind: "test" })).token
  await toTenthOfNextMonth(app.fetch, test)
  return { workspaceId, live, test }
}

const search = async (token: string, query = "limit=5") => {
  const res = await app.fetch(`/v1/api/numbers/available?${query}`, { headers: bearer(token) })
  expect(res.status, await res.clone().text()).toBe(200)
  return ((await res.json()) as {
    available: Array<{ phone_number: string; phone_number_type: string; cost_information: { monthly_cost: string } }>
  }).available
}

const buy = (token: string, json: unknown, headers: Record<string, string> = {}) =>
  app.fetch("/v1/api/numbers", { method: "POST", headers: { ...bearer(token), ...headers }, json })

const ledger = async (workspaceId: string) =>
  ((await (await app.admin(`/workspaces/${workspaceId}/ledger`)).json()) as { charges: Array<any> }).charges
const owned = async (token: string) =>
  ((await (await app.fetch("/v1/api/numbers", { headers: bearer(token) })).json()) as { numbers: Array<any> }).numbers
const payments = (workspaceId: string) =>
  app.runtime.runPromise(Effect.flatMap(SimulatedPayments, (p) => p.charges(workspaceId)))
const events = (workspaceId: string) => app.runtime.runPromise(Effect.flatMap(EventOutbox, (o) => o.list(workspaceId)))

describe("GET /numbers/available", () => {
  it("lists local numbers at 5.00 and toll-free at 10.00, in a stable order, filtered", async () => {
    const { live } = await workspace()
    const first = await search(live, "startsWith=415&limit=3")
    expect(first).toHaveLength(3)
    expect(
      first.every((n) =>
        n.phone_number.startsWith("+1415") && n.phone_number_type === "local" &&
        n.cost_information.monthly_cost === "5.00"
      )
    ).toBe(true)
    expect(await search(live, "startsWith=415&limit=3")).toEqual(first)
    const tollFree = await search(live, "type=toll_free&limit=2")
    expect(tollFree.every((n) => n.phone_number_type === "toll_free" && n.cost_information.monthly_cost === "10.00"))
      .toBe(true)
    await expectError(
      await app.fetch("/v1/api/numbers/available?limit=51", { headers: bearer(live) }),
      400,
      "invalid_argument"
    )
  })
})

describe("POST /numbers", () => {
  it("buys the plan's included local number, then a prorated add-on and a toll-free line, each with one ledger row", async () => {
    const { workspaceId, live } = await workspace()
    const [a, b] = await search(live, "startsWith=312&limit=2")
    const res = await buy(live, { phoneNumber: a!.phone_number })
    expect(res.status, await res.clone().text()).toBe(201)
    expect(await res.json()).toEqual({
      number: {
        e164: a!.phone_number,
        type: "local",
        voiceMode: "app",
        agentId: null,
        forwardTo: null,
        assignedUserId: null,
        status: "active"
      }
    })
    expect((await buy(live, { phoneNumber: b!.phone_number })).status).toBe(201)
    const [tollFree] = await search(live, "type=toll_free&limit=1")
    // The number decides the billed type, whatever the hint says.
    const tf = await buy(live, { phoneNumber: tollFree!.phone_number, type: "local" })
    expect(((await tf.json()) as any).number.type).toBe("toll_free")
    const rows = (await ledger(workspaceId)).reverse()
    expect(rows.map((r) => [r.kind, r.numberE164, r.currency])).toEqual([
      ["local_number", a!.phone_number, "USD"],
      ["local_number", b!.phone_number, "USD"],
      ["toll_free_number", tollFree!.phone_number, "USD"]
    ])
    expect(rows[0].amountCents).toBe(0)
    expect(rows[1].amountCents).toBeGreaterThan(0)
    expect(rows[1].amountCents).toBeLessThanOrEqual(500)
    expect(rows[2].amountCents).toBeGreaterThan(0)
    expect(rows[2].amountCents).toBeLessThanOrEqual(1000)
    expect((await payments(workspaceId)).map((p) => [p.amountCents, p.refunded])).toEqual([
      [rows[1].amountCents, false],
      [rows[2].amountCents, false]
    ])
    expect((await owned(live)).map((n) => n.e164)).toEqual([a!.phone_number, b!.phone_number, tollFree!.phone_number])
    // The number is gone from every search once bought.
    expect((await search(live, "startsWith=312&limit=50")).map((n) => n.phone_number)).not.toContain(a!.phone_number)
  })

  it("answers each documented 409 from the matching billing state, and leaves nothing behind", async () => {
    const cases: Array<[string, Record<string, unknown>, string, number]> = [
      ["no plan", { ...ready, plan: null }, numberGateMessages.plan, 0],
      [
        "trial, identity not verified",
        { ...ready, trial: true, identity: "submitted" },
        numberGateMessages.identity,
        0
      ],
      ["trial, mobile not verified", { ...ready, trial: true, mobileVerified: false }, numberGateMessages.mobile, 0],
      ["app store, a second local number", { ...ready, billedVia: "app_store" }, numberGateMessages.appStore, 1],
      ["a declined card, a second local number", { ...ready, cardDeclines: true }, "Your card was declined", 1]
    ]
    for (const [name, billing, message, seeded] of cases) {
      const { workspaceId, live, test } = await workspace(billing)
      if (seeded > 0) {
        await app.admin(`/workspaces/${workspaceId}/numbers`, {
          method: "POST",
          json: { e164: `+1415555${String(1000 + cases.findIndex(([n]) => n === name)).padStart(4, "0")}` }
        })
      }
      const before = await owned(live)
      const eventsBefore = await events(workspaceId)
      const [candidate] = await search(live, "startsWith=646&limit=1")
      const error = await expectError(
        await buy(live, { phoneNumber: candidate!.phone_number }),
        409,
        "failed_precondition"
      )
      expect(error.message, name).toBe(message)
      expect(await owned(live), name).toEqual(before)
      expect(await ledger(workspaceId), name).toEqual([])
      expect(await payments(workspaceId), name).toEqual([])
      expect(await events(workspaceId), name).toEqual(eventsBefore)
      // Test keys meet the same gates (a declined card only matters to a live purchase).
      if (message !== "Your card was declined") {
        await expectError(await buy(test, { phoneNumber: candidate!.phone_number }), 409, "failed_precondition")
      }
    }
    const appStore = await workspace({ ...ready, billedVia: "app_store" })
    const [tollFree] = await search(appStore.live, "type=toll_free&limit=1")
    expect(
      (await expectError(await buy(appStore.live, { phoneNumber: tollFree!.phone_number }), 409, "failed_precondition"))
        .message
    ).toBe(numberGateMessages.appStore)
  })

  it("with a test key adds the number without ordering or charging (simulated)", async () => {
    const { workspaceId, test } = await workspace()
    const [n] = await search(test, "startsWith=206&limit=1")
    const res = await buy(test, { phoneNumber: n!.phone_number })
    expect(res.status).toBe(201)
    expect(((await res.json()) as any).simulated).toBe(true)
    expect((await owned(test)).map((x) => x.e164)).toEqual([n!.phone_number])
    expect(await ledger(workspaceId)).toEqual([])
    expect(await payments(workspaceId)).toEqual([])
  })

  it("a live key buys the workspace's own test number in place (ordered and charged then); a test number never takes the plan's included one", async () => {
    const { workspaceId, live, test } = await workspace()
    const [t, l] = (await search(test, "startsWith=206&limit=2")).map((n) => n.phone_number)
    expect((await buy(test, { phoneNumber: t })).status).toBe(201)
    // The first number bought live is the plan's included one, though a test number came first.
    expect((await buy(live, { phoneNumber: l })).status).toBe(201)
    const already = `${t} is already one of this workspace's numbers`
    expect((await expectError(await buy(test, { phoneNumber: t }), 409, "failed_precondition")).message).toBe(already)
    const upgraded = await buy(live, { phoneNumber: t })
    expect(upgraded.status, await upgraded.clone().text()).toBe(201)
    expect(((await upgraded.json()) as any).number).toMatchObject({ e164: t, type: "local", status: "active" })
    expect((await expectError(await buy(live, { phoneNumber: t }), 409, "failed_precondition")).message).toBe(already)
    const rows = (await ledger(workspaceId)).reverse()
    expect(rows.map((r) => [r.numberE164, r.amountCents > 0])).toEqual([[l, false], [t, true]])
    expect((await payments(workspaceId)).map((p) => p.amountCents)).toEqual([rows[1].amountCents])
    expect((await owned(live)).map((n) => n.e164)).toEqual([t, l])
    const stored = await app.runtime.runPromise(Effect.flatMap(NumberStore, (s) => s.findByE164(t!)))
    expect(Option.getOrThrow(stored).ordered).toBe(true)
  })

  it("refuses a number the workspace already has, bad input, and a key without numbers:manage", async () => {
    const { workspaceId, live } = await workspace()
    const [n] = await search(live, "startsWith=213&limit=1")
    expect((await buy(live, { phoneNumber: n!.phone_number })).status).toBe(201)
    const again = await expectError(await buy(live, { phoneNumber: n!.phone_number }), 409, "failed_precondition")
    expect(again.message).toBe(`${n!.phone_number} is already one of this workspace's numbers`)
    expect((await expectError(await buy(live, {}), 400, "invalid_argument")).message).toMatch(/^phoneNumber: /)
    expect((await expectError(await buy(live, { phoneNumber: "not a number" }), 400, "invalid_argument")).message)
      .toMatch(/^phoneNumber: /)
    expect(
      (await expectError(await buy(live, { phoneNumber: n!.phone_number, colour: "red" }), 400, "invalid_argument"))
        .message
    ).toMatch(/colour/)
    const reader = (await app.createKey(workspaceId, { kind: "live", scopes: ["numbers:read"] })).token
    expect((await app.fetch("/v1/api/numbers", { headers: bearer(reader) })).status).toBe(200)
    await expectError(await buy(reader, { phoneNumber: n!.phone_number }), 403, "permission_denied")
    await expectError(
      await app.fetch("/v1/api/numbers/available", { headers: bearer(reader) }),
      403,
      "permission_denied"
    )
    expect(await ledger(workspaceId)).toHaveLength(1)
  })

  it("writes exactly one ledger charge for a purchase retried with its Idempotency-Key or raced 20 times", async () => {
    const { workspaceId, live } = await workspace()
    await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+14155559001" } })
    const [a, b] = await search(live, "startsWith=617&limit=2")
    const first = await buy(live, { phoneNumber: a!.phone_number }, { "idempotency-key": "buy-a" })
    expect(first.status).toBe(201)
    const retried = await buy(live, { phoneNumber: a!.phone_number }, { "idempotency-key": "buy-a" })
    expect(retried.status).toBe(201)
    expect(retried.headers.get("idempotency-replayed")).toBe("true")
    expect(await retried.json()).toEqual(await first.json())
    const raced = await Promise.all(
      Array.from({ length: 20 }, () => buy(live, { phoneNumber: b!.phone_number }, { "idempotency-key": "buy-b" }))
    )
    const statuses = raced.map((r) => r.status)
    // One runs; the others replay it or, while it runs past the wait, answer 409 (CONTRACT "Idempotency").
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1)
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true)
    const rows = await ledger(workspaceId)
    expect(rows.map((r) => r.numberE164).sort()).toEqual([a!.phone_number, b!.phone_number].sort())
    expect((await payments(workspaceId)).filter((p) => !p.refunded)).toHaveLength(2)
  })

  it("lets exactly one of two workspaces racing for a number own it; the other gets the carrier's message and pays nothing", async () => {
    const one = await workspace()
    const two = await workspace()
    for (const w of [one, two]) {
      await app.admin(`/workspaces/${w.workspaceId}/numbers`, {
        method: "POST",
        json: { e164: `+1415555${w === one ? "8001" : "8002"}` }
      })
    }
    const [n] = await search(one.live, "startsWith=305&limit=1")
    const answers = await Promise.all([
      buy(one.live, { phoneNumber: n!.phone_number }),
      buy(two.live, { phoneNumber: n!.phone_number })
    ])
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409])
    const loser = answers[0]!.status === 409 ? one : two
    const winner = loser === one ? two : one
    expect((await expectError(answers.find((r) => r.status === 409)!, 409, "failed_precondition")).message).toBe(
      `Phone number ${n!.phone_number} is no longer available`
    )
    expect(await ledger(loser.workspaceId)).toEqual([])
    expect((await payments(loser.workspaceId)).filter((p) => !p.refunded)).toEqual([])
    expect((await ledger(winner.workspaceId)).map((r) => r.numberE164)).toEqual([n!.phone_number])
    expect((await owned(loser.live)).map((x) => x.e164)).not.toContain(n!.phone_number)
  })
})

describe("the texting gate and numbers", () => {
  it("answers 409 to a message from a toll-free number", async () => {
    const { test } = await workspace()
    const [tf] = await search(test, "type=toll_free&limit=1")
    expect((await buy(test, { phoneNumber: tf!.phone_number })).status).toBe(201)
    const error = await expectError(
      await app.fetch("/v1/api/messages", {
        method: "POST",
        headers: bearer(test),
        json: { to: "+14155550123", from: tf!.phone_number, body: "hi" }
      }),
      409,
      "failed_precondition"
    )
    expect(error.message).toBe(
      `${tf!.phone_number} is toll-free: texting from toll-free numbers is unavailable; send from a local number`
    )
  })
})

describe("E164Param, the {e164} of number routes", () => {
  it("decodes a %2B-encoded number (as the router hands it over), and refuses anything but E.164", async () => {
    const { Schema } = await import("effect")
    const { E164Param } = await import("../../adapters/http/api/shared.ts")
    const decode = Schema.decodeUnknownEither(E164Param)
    const decoded = decode({ e164: decodeURIComponent("%2B14155550100") })
    expect(decoded._tag === "Right" ? decoded.right.e164 : decoded.left.message).toBe("+14155550100")
    // A + that a form decoder turned into a space is still the number.
    expect(decode({ e164: " 14155550100" })._tag).toBe("Right")
    for (const bad of ["14155550100", "+1", "+1415555010a", "", "%2B14155550100"]) {
      expect(decode({ e164: bad })._tag, bad).toBe("Left")
    }
  })
})
