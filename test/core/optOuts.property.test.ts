/**
 * CONTRACT "Opt-outs and keywords" as a property: random runs of inbound texts (the STOP words, the
 * START words, HELP, ordinary texts) and sends, to a few phones from two workspaces, one after the
 * other or all at once. One after the other, a model predicts every text the carrier is handed and
 * every refusal. At once: no send the carrier accepted went to a phone opted out at that moment
 * (the carrier looks, while it holds the send); each opt-out and opt-in is answered once, each HELP
 * once; a workspace's opt-outs come from its own texts only. On the memory stores, and with fewer
 * runs on Postgres (PGlite when there is none).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Duration, Effect, Either, FastCheck as fc, Layer, Option, Redacted, Runtime } from "effect"
import { inject } from "vitest"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import * as Messaging from "../../core/messaging/service.ts"
import { OptOutStore } from "../../core/optouts/store.ts"
import {
  CarrierFakeTag,
  eventsOf,
  inboundText,
  messagingOver,
  type OptOutMessaging,
  workspaceWithNumber
} from "../support/optOutMessaging.ts"
import { freshPglite } from "../support/pglite.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"

type Kind = "stop" | "start" | "help" | "text"

const texts: Record<Kind, ReadonlyArray<string>> = {
  stop: [
    "STOP",
    "stop",
    "Stop.",
    "STOP ALL",
    "stopall",
    "unsubscribe!",
    "cancel",
    "End",
    "quit",
    "revoke",
    "OptOut",
    "opt out",
    "OPT-OUT!"
  ],
  start: ["START", "start!", "Unstop", "yes", "Subscribe."],
  help: ["HELP", "help?", "Info"],
  text: ["hello", "stop please", "yes please", "can you help", "s t o p", "ok"]
}

const PHONES = ["+14155550123", "+14155550124", "+14155550125"]

type Command =
  | { readonly op: "in"; readonly w: number; readonly p: number; readonly kind: Kind; readonly text: string }
  | { readonly op: "send"; readonly w: number; readonly p: number }

const target = { w: fc.integer({ min: 0, max: 1 }), p: fc.integer({ min: 0, max: PHONES.length - 1 }) }
const inbound = fc.constantFrom(...(Object.keys(texts) as Array<Kind>)).chain((kind) =>
  fc.record({
    op: fc.constant("in" as const),
    ...target,
    kind: fc.constant(kind),
    text: fc.constantFrom(...texts[kind])
  })
)
const send = fc.record({ op: fc.constant("send" as const), ...target })
const commands = fc.array(fc.oneof(inbound, send), { minLength: 1, maxLength: 24 })

const stopReply = (brand: string) =>
  `${brand}: You are unsubscribed and will receive no more messages. Reply START to resubscribe.`
const startReply = (brand: string) => `${brand}: You are resubscribed. Reply STOP to unsubscribe, HELP for help.`
const helpReply = (brand: string) => `${brand}: Reply STOP to unsubscribe. Msg & data rates may apply.`
const REFUSED =
  /^\+1\d{10} opted out of texts from this workspace on \d{4}-\d{2}-\d{2} \(replied [A-Z -]+\); they can opt back in by texting START$/

/** Runs `cmds` on fresh workspaces, in order or all at once, and checks what the carrier and the stores saw. */
const check = (cmds: ReadonlyArray<Command>, concurrent: boolean, latency: Duration.DurationInput = 0) =>
  Effect.gen(function*() {
    const m = yield* Messaging.Messaging
    const f = yield* CarrierFakeTag
    const optOuts = yield* OptOutStore
    const run = crypto.randomUUID().slice(0, 8)
    const spaces = [yield* workspaceWithNumber(`W0 ${run}`), yield* workspaceWithNumber(`W1 ${run}`)]
    const brands = [`W0 ${run}`, `W1 ${run}`]
    const wOf = (number: string) => spaces.findIndex((s) => s.number === number)
    const ours = (number: string) => wOf(number) >= 0

    // The carrier looks at the moment it holds a send, after a carrier's latency that lets other
    // transactions run: the recipient must not be opted out then.
    const violations: Array<string> = []
    f.during = (msg) =>
      !ours(msg.from) || !msg.body.startsWith("msg ")
        ? Effect.void
        : Effect.gen(function*() {
          yield* Effect.sleep(latency)
          const o = yield* optOuts.get(spaces[wOf(msg.from)]!.ws, msg.to)
          if (Option.isSome(o)) violations.push(`${msg.body} to ${msg.to} while opted out (${o.value.keyword})`)
        })

    /** null for an inbound text; a send's outcome. */
    const step = (c: Command, i: number) =>
      Effect.gen(function*() {
        if (c.op === "in") {
          yield* m.receive(inboundText(spaces[c.w]!.number, PHONES[c.p]!, c.text))
          return null
        }
        return yield* Effect.either(m.send(spaces[c.w]!.live, { to: PHONES[c.p]!, body: `msg ${i}` }))
      })
    const outcomes = yield* Effect.forEach(cmds, step, { concurrency: concurrent ? "unbounded" : 1 })
    f.during = null
    const sent = f.sends.filter((s) => ours(s.message.from))
    assert.deepStrictEqual(violations, [])
    assert.isTrue(sent.every((s) => s.outcome === "accepted"))

    const refusals = outcomes.flatMap((o, i) =>
      o !== null && Either.isLeft(o) ? [[i, o.left._tag, o.left.message] as const] : []
    )
    for (const [, tag, message] of refusals) {
      assert.strictEqual(tag, "FailedPrecondition")
      assert.match(message, REFUSED)
    }

    if (!concurrent) {
      // The model: who is opted out where, and what the carrier must have been handed, in order.
      const optedOut = new Set<string>()
      const expected: Array<[string, string, string]> = []
      const expectedRefusals: Array<number> = []
      cmds.forEach((c, i) => {
        const key = `${c.w} ${c.p}`
        const line = (body: string): [string, string, string] => [spaces[c.w]!.number, PHONES[c.p]!, body]
        if (c.op === "send") {
          if (optedOut.has(key)) expectedRefusals.push(i)
          else expected.push(line(`msg ${i}`))
        } else if (c.kind === "stop" && !optedOut.has(key)) {
          optedOut.add(key)
          expected.push(line(stopReply(brands[c.w]!)))
        } else if (c.kind === "start" && optedOut.has(key)) {
          optedOut.delete(key)
          expected.push(line(startReply(brands[c.w]!)))
        } else if (c.kind === "help") {
          expected.push(line(helpReply(brands[c.w]!)))
        }
      })
      assert.deepStrictEqual(sent.map((s) => [s.message.from, s.message.to, s.message.body]), expected)
      assert.deepStrictEqual(refusals.map(([i]) => i), expectedRefusals)
      for (const [w, s] of spaces.entries()) {
        for (const [p, phone] of PHONES.entries()) {
          assert.strictEqual(Option.isSome(yield* optOuts.get(s.ws, phone)), optedOut.has(`${w} ${p}`))
        }
      }
      return
    }

    for (const [w, s] of spaces.entries()) {
      const events = yield* eventsOf(s.ws)
      for (const [p, phone] of PHONES.entries()) {
        const mine = cmds.filter((c) => c.w === w && c.p === p)
        const changes = events.filter((e) => e.type.startsWith("contact.opted") && e.data["phone"] === phone)
          .map((e) => e.type)
        // Opted out, in, out, ...: each change once, the last one what the store holds.
        changes.forEach((t, i) => assert.strictEqual(t, i % 2 === 0 ? "contact.opted_out" : "contact.opted_in"))
        assert.strictEqual(Option.isSome(yield* optOuts.get(s.ws, phone)), changes.length % 2 === 1)
        // A workspace's opt-outs come from its own STOPs only.
        if (!mine.some((c) => c.op === "in" && c.kind === "stop")) {
          assert.deepStrictEqual(changes, [])
          assert.isFalse(refusals.some(([i]) => cmds[i]!.w === w && cmds[i]!.p === p))
        }
        // Each change answered once, each HELP once; every send accepted or refused.
        const bodies = sent.filter((x) => x.message.from === s.number && x.message.to === phone).map((x) =>
          x.message.body
        )
        const count = (body: string) => bodies.filter((b) => b === body).length
        assert.strictEqual(count(stopReply(brands[w]!)), changes.filter((t) => t === "contact.opted_out").length)
        assert.strictEqual(count(startReply(brands[w]!)), changes.filter((t) => t === "contact.opted_in").length)
        assert.strictEqual(count(helpReply(brands[w]!)), mine.filter((c) => c.op === "in" && c.kind === "help").length)
        const sends = mine.filter((c) => c.op === "send").length
        const refused = refusals.filter(([i]) => cmds[i]!.w === w && cmds[i]!.p === p).length
        assert.strictEqual(bodies.filter((b) => b.startsWith("msg ")).length + refused, sends)
      }
    }
  })

/** `runs` random runs of the check on the runtime's stores. */
const property = (concurrent: boolean, runs: number, latency: Duration.DurationInput) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<OptOutMessaging>()
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(commands, (cmds) => Runtime.runPromise(runtime)(check(cmds, concurrent, latency))),
        { numRuns: runs }
      )
    )
  })

describe("opt-outs as a property: memory", () => {
  const fresh = (concurrent: boolean) => (cmds: ReadonlyArray<Command>) =>
    Effect.runPromise(
      Effect.provide(check(cmds, concurrent), messagingOver(MemoryStores.layer))
    )
  it("one after the other, the model predicts every text and refusal", async () => {
    await fc.assert(fc.asyncProperty(commands, fresh(false)), { numRuns: 150 })
  })
  it("all at once, no send reaches an opted-out phone, each change is answered once", async () => {
    await fc.assert(fc.asyncProperty(commands, fresh(true)), { numRuns: 150 })
  })
})

const url = inject("postgresUrl")
const sql = url === null
  ? { name: "PGlite", client: freshPglite("migrated") }
  : {
    name: "Postgres",
    client: Layer.unwrapScoped(
      Effect.map(
        Effect.acquireRelease(
          Effect.promise(() => freshDatabase(url, "opt_out_property")),
          (db) => Effect.promise(() => db.drop())
        ),
        (db) => Postgres.layer({ url: Redacted.make(db.url) })
      )
    )
  }

layer(
  Layer.merge(messagingOver(sqlStores(sql.client)), Layer.setTracerEnabled(false)),
  { excludeTestServices: true, timeout: "300 seconds" }
)(`opt-outs as a property: ${sql.name}`, (it) => {
  it.effect("one after the other, the model predicts every text and refusal", () => property(false, 15, 0))
  it.effect("all at once, no send reaches an opted-out phone, each change is answered once", () =>
    property(true, 40, "25 millis"))
})
