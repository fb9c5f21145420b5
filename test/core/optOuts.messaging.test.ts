/**
 * CONTRACT "Opt-outs and keywords", what Messaging does with them, over the memory stores: STOP,
 * START and HELP recorded and answered once from the number texted; the words the carrier answers
 * itself recorded but not answered; no answer from a number that cannot text; a send to an
 * opted-out phone refused before the carrier; the carrier's own opt-out refusal, on a send or in a
 * status report, recorded as a carrier opt-out.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { AuditLog } from "../../core/audit/store.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { CarrierError } from "../../core/messaging/carrier.ts"
import * as Messaging from "../../core/messaging/service.ts"
import { OptOutStore } from "../../core/optouts/store.ts"
import {
  addNumber,
  CarrierFakeTag,
  carrierOptedOut,
  eventsOf,
  freshNumber,
  inboundText,
  messagingOver,
  type OptOutMessaging,
  register,
  registrationOf,
  workspaceWithNumber
} from "../support/optOutMessaging.ts"

const run = <A, E>(self: Effect.Effect<A, E, OptOutMessaging>) =>
  Effect.provide(self, messagingOver(MemoryStores.layer))

const ADA = "+14155550123"
const BOB = "+14155550124"

/** Telnyx's messaging profile answers these itself (CONTRACT). */
const TELNYX_WORDS = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "START", "UNSTOP", "HELP", "INFO"]

const STOP_REPLY = "Acme: You are unsubscribed and will receive no more messages. Reply START to resubscribe."
const START_REPLY = "Acme: You are resubscribed. Reply STOP to unsubscribe, HELP for help."

/** A workspace with Acme's approved registration (brand "Acme", business phone, no help message). */
const acme = Effect.gen(function*() {
  const w = yield* workspaceWithNumber("Acme workspace")
  yield* register(registrationOf(w.ws, { displayName: "Acme", phone: "+12175550142" }))
  return w
})

/** What the carrier was handed, as [from, to, body]. */
const carried = Effect.map(CarrierFakeTag, (f) => f.sends.map((s) => [s.message.from, s.message.to, s.message.body]))

const optOutOf = (ws: string, phone: string) =>
  Effect.map(Effect.flatMap(OptOutStore, (s) => s.get(ws, phone)), Option.getOrNull)

const typesOf = (ws: string) => Effect.map(eventsOf(ws), (es) => es.map((e) => e.type))

const contactIdOf = (ws: string, phone: string) =>
  Effect.map(Effect.flatMap(ContactStore, (s) => s.findByPhones(ws, [phone])), (cs) => cs[0]?.id ?? null)

/** The refusal of a send; fails the test when it succeeded. */
const refusal = <A, E extends { readonly _tag: string; readonly message: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.either(self),
    (r) => Either.isRight(r) ? Effect.die(new Error("expected the send to be refused")) : Effect.succeed(r.left)
  )

const optedOutRefusal = (phone: string, reason: string) =>
  new RegExp(
    `^\\${phone} opted out of texts from this workspace on \\d{4}-\\d{2}-\\d{2} \\(${reason}\\); they can opt back in by texting START$`
  )

describe("STOP", () => {
  it.effect("records a keyword opt-out, fires contact.opted_out with the contact, and replies once from the texted number", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const store = yield* ConversationStore
      const { number, ws } = yield* acme
      const received = yield* m.receive(inboundText(number, ADA, "  Opt out! "))

      const optOut = yield* optOutOf(ws, ADA)
      assert.deepStrictEqual(
        optOut && { ...optOut, createdAt: "" },
        { workspaceId: ws, phone: ADA, source: "keyword", keyword: "OPT OUT", note: null, createdAt: "" }
      )
      const contactId = yield* contactIdOf(ws, ADA)
      assert.isNotNull(contactId)
      const events = yield* eventsOf(ws)
      assert.deepStrictEqual(events.map((e) => e.type), ["message.received", "contact.opted_out", "message.delivered"])
      assert.deepStrictEqual(events[1]!.data, { phone: ADA, contactId, source: "keyword", keyword: "OPT OUT" })

      assert.deepStrictEqual(yield* carried, [[number, ADA, STOP_REPLY]])
      // The text and the answer in the thread; the answer by nobody.
      const thread = yield* store.listActivities(ws, received.conversationId)
      assert.deepStrictEqual(
        thread.map((a) => [a.direction, a.body, a.authorUid]),
        [["inbound", "  Opt out! ", null], ["outbound", STOP_REPLY, null]]
      )
    })))

  it.effect("the same carrier message delivered twice, one after the other or at once, is answered once", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { number, ws } = yield* acme
      const stop = inboundText(number, ADA, "STOP")
      yield* m.receive(stop)
      yield* m.receive(stop)
      const other = inboundText(number, BOB, "stop")
      yield* Effect.all([m.receive(other), m.receive(other)], { concurrency: "unbounded" })
      assert.deepStrictEqual(yield* carried, [[number, ADA, STOP_REPLY], [number, BOB, STOP_REPLY]])
      assert.deepStrictEqual(
        (yield* typesOf(ws)).filter((t) => t === "contact.opted_out"),
        ["contact.opted_out", "contact.opted_out"]
      )
    })))

  it.effect("a second STOP (another word, another message) is stored but not answered, and changes nothing", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { number, ws } = yield* acme
      yield* m.receive(inboundText(number, ADA, "STOP"))
      const first = yield* optOutOf(ws, ADA)
      const before = yield* typesOf(ws)
      const again = yield* m.receive(inboundText(number, ADA, "unsubscribe"))
      assert.strictEqual(again.body, "unsubscribe")
      assert.deepStrictEqual(yield* optOutOf(ws, ADA), first)
      assert.deepStrictEqual(yield* typesOf(ws), [...before, "message.received"])
      assert.lengthOf((yield* CarrierFakeTag).sends, 1)
    })))

  it.effect("after it, every send to the phone from any of the workspace's numbers is refused with CONTRACT's 409, before the carrier", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* CarrierFakeTag
      const { live, number, ws } = yield* acme
      const second = freshNumber()
      yield* addNumber(ws, second)
      yield* m.receive(inboundText(second, ADA, "REVOKE"))
      // The answer went from the number texted.
      assert.deepStrictEqual(yield* carried, [[second, ADA, STOP_REPLY]])
      const events = (yield* eventsOf(ws)).length

      for (const from of [number, second]) {
        const e = yield* refusal(m.send(live, { to: ADA, from, body: "Your order shipped" }))
        assert.strictEqual(e._tag, "FailedPrecondition")
        assert.match(e.message, optedOutRefusal(ADA, "replied REVOKE"))
      }
      const conversationId = (yield* m.receive(inboundText(number, ADA, "why?"))).conversationId
      const e = yield* refusal(m.send(live, { conversationId, body: "Because" }))
      assert.match(e.message, optedOutRefusal(ADA, "replied REVOKE"))
      assert.lengthOf(f.sends, 1)
      // Nothing stored by the refusals: only the inbound "why?" and its event.
      assert.lengthOf(yield* eventsOf(ws), events + 1)
      // Another phone is not affected.
      yield* m.send(live, { to: BOB, body: "Your order shipped" })
      assert.lengthOf(f.sends, 2)
    })))
})

describe("START", () => {
  it.effect("from an opted-out sender: opts in (contact.opted_in, audit opt_out.removed), replies, and sends go through again", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { live, number, ws } = yield* acme
      yield* m.receive(inboundText(number, ADA, "STOP"))
      const removed = yield* optOutOf(ws, ADA)
      yield* m.receive(inboundText(number, ADA, "Unstop."))

      assert.isNull(yield* optOutOf(ws, ADA))
      const contactId = yield* contactIdOf(ws, ADA)
      const events = yield* eventsOf(ws)
      assert.deepStrictEqual(
        events.filter((e) => e.type.startsWith("contact.opted")),
        [
          {
            type: "contact.opted_out",
            data: { phone: ADA, contactId, source: "keyword", keyword: "STOP" }
          },
          {
            type: "contact.opted_in",
            data: { phone: ADA, contactId, source: "keyword", keyword: "UNSTOP" }
          }
        ]
      )
      const audit = (yield* (yield* AuditLog).list(ws)).filter((a) => a.action === "opt_out.removed")
      assert.lengthOf(audit, 1)
      assert.strictEqual(audit[0]!.actor, "recipient")
      const { workspaceId: _, ...view } = removed!
      assert.deepStrictEqual(audit[0]!.detail, { phone: ADA, keyword: "UNSTOP", optedOut: view })

      assert.deepStrictEqual(yield* carried, [[number, ADA, STOP_REPLY], [number, ADA, START_REPLY]])
      yield* m.send(live, { to: ADA, body: "Welcome back" })
      assert.deepStrictEqual((yield* carried)[2], [number, ADA, "Welcome back"])
    })))

  it.effect("YES (or START) from a sender who is not opted out is an ordinary text: no reply, no event but message.received", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { number, ws } = yield* acme
      yield* m.receive(inboundText(number, ADA, "Yes"))
      yield* m.receive(inboundText(number, ADA, "START"))
      assert.deepStrictEqual(yield* carried, [])
      assert.deepStrictEqual(yield* typesOf(ws), ["message.received", "message.received"])
      assert.deepStrictEqual((yield* (yield* AuditLog).list(ws)).filter((a) => a.action === "opt_out.removed"), [])
    })))

  it.effect("an opt-out in one workspace is not one in another: its START opts in nothing, its sends go through", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const a = yield* acme
      const b = yield* workspaceWithNumber("Other")
      yield* m.receive(inboundText(a.number, ADA, "STOP"))
      yield* m.send(b.live, { to: ADA, body: "From B" })
      yield* m.receive(inboundText(b.number, ADA, "START"))
      assert.isNotNull(yield* optOutOf(a.ws, ADA))
      assert.isNull(yield* optOutOf(b.ws, ADA))
      assert.deepStrictEqual(yield* carried, [[a.number, ADA, STOP_REPLY], [b.number, ADA, "From B"]])
    })))
})

describe("HELP", () => {
  it.effect("answered with the registration's helpMessage, every time, opted out or not", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { number, ws } = yield* workspaceWithNumber("Acme workspace")
      yield* register(registrationOf(ws, { displayName: "Acme", phone: "+12175550142" }, "Acme: call 217-555-0142."))
      yield* m.receive(inboundText(number, ADA, "help"))
      yield* m.receive(inboundText(number, ADA, "INFO?"))
      yield* m.receive(inboundText(number, ADA, "STOP"))
      yield* m.receive(inboundText(number, ADA, "Help"))
      assert.deepStrictEqual((yield* carried).map(([, , body]) => body), [
        "Acme: call 217-555-0142.",
        "Acme: call 217-555-0142.",
        STOP_REPLY,
        "Acme: call 217-555-0142."
      ])
      assert.isNotNull(yield* optOutOf(ws, ADA))
    })))

  it.effect("without a helpMessage: the default naming the brand and the business phone, else email; no registration: the workspace's name", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const withPhone = yield* acme
      const withEmail = yield* workspaceWithNumber("Bolt workspace")
      yield* register(registrationOf(withEmail.ws, { displayName: "Bolt", email: "help@bolt.example" }))
      const unregistered = yield* workspaceWithNumber("Corner Cafe")
      for (const w of [withPhone, withEmail, unregistered]) yield* m.receive(inboundText(w.number, ADA, "HELP"))
      assert.deepStrictEqual((yield* carried).map(([from, , body]) => [from, body]), [
        [withPhone.number, "Acme: Reply STOP to unsubscribe. Msg & data rates may apply. Help: +12175550142."],
        [withEmail.number, "Bolt: Reply STOP to unsubscribe. Msg & data rates may apply. Help: help@bolt.example."],
        [unregistered.number, "Corner Cafe: Reply STOP to unsubscribe. Msg & data rates may apply."]
      ])
    })))
})

describe("keywords the carrier answers itself", () => {
  it.effect("with Telnyx's words: STOP and START recorded but not answered; REVOKE, OPT-OUT, YES and SUBSCRIBE answered", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* CarrierFakeTag
      for (const w of TELNYX_WORDS) f.answersKeywords.add(w)
      const { number, ws } = yield* acme

      yield* m.receive(inboundText(number, ADA, "STOP"))
      assert.strictEqual((yield* optOutOf(ws, ADA))?.keyword, "STOP")
      yield* m.receive(inboundText(number, ADA, "START"))
      assert.isNull(yield* optOutOf(ws, ADA))
      yield* m.receive(inboundText(number, ADA, "HELP"))
      assert.deepStrictEqual(yield* carried, [])

      yield* m.receive(inboundText(number, ADA, "revoke"))
      assert.strictEqual((yield* optOutOf(ws, ADA))?.keyword, "REVOKE")
      yield* m.receive(inboundText(number, ADA, "SUBSCRIBE"))
      yield* m.receive(inboundText(number, BOB, "opt-out"))
      yield* m.receive(inboundText(number, BOB, "yes!"))
      assert.deepStrictEqual(yield* carried, [
        [number, ADA, STOP_REPLY],
        [number, ADA, START_REPLY],
        [number, BOB, STOP_REPLY],
        [number, BOB, START_REPLY]
      ])
      assert.deepStrictEqual(
        (yield* typesOf(ws)).filter((t) => t.startsWith("contact.")),
        [
          "contact.opted_out",
          "contact.opted_in",
          "contact.opted_out",
          "contact.opted_in",
          "contact.opted_out",
          "contact.opted_in"
        ]
      )
    })))
})

describe("a number that cannot text", () => {
  it.effect("records the opt-out but sends no answer when the registration is not approved", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* CarrierFakeTag
      const { number, ws } = yield* acme
      for (const state of ["in_review", "not_filed", "unassigned"] as const) {
        f.texting = state
        const phone = `+1415555090${["in_review", "not_filed", "unassigned"].indexOf(state)}`
        yield* m.receive(inboundText(number, phone, "STOP"))
        yield* m.receive(inboundText(number, phone, "HELP"))
        assert.strictEqual((yield* optOutOf(ws, phone))?.source, "keyword", state)
      }
      assert.deepStrictEqual(yield* carried, [])
      assert.notInclude(yield* typesOf(ws), "message.delivered")
    })))
})

describe("the carrier's own opt-out", () => {
  it.effect("a send refused as opted out: stored failed with message.failed, a carrier opt-out recorded, the send refused with CONTRACT's message", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* CarrierFakeTag
      const store = yield* ConversationStore
      const { live, number, ws } = yield* acme
      f.script.push(carrierOptedOut)
      const e = yield* refusal(m.send(live, { to: ADA, body: "Your order shipped" }))
      assert.strictEqual(e._tag, "FailedPrecondition")
      assert.match(e.message, optedOutRefusal(ADA, "the carrier reported their opt-out"))

      const optOut = yield* optOutOf(ws, ADA)
      assert.strictEqual(optOut?.source, "carrier")
      assert.isNull(optOut?.keyword)
      assert.strictEqual(optOut?.note, carrierOptedOut.message)
      const events = yield* eventsOf(ws)
      assert.deepStrictEqual(events.map((x) => x.type), ["message.failed", "contact.opted_out"])
      assert.deepStrictEqual(events[1]!.data, { phone: ADA, contactId: null, source: "carrier", keyword: null })
      const activityId = events[0]!.data["activityId"] as string
      const failed = Option.getOrNull(yield* store.getActivity(ws, activityId))
      assert.strictEqual(failed?.deliveryStatus, "failed")
      assert.strictEqual(failed?.body, "Your order shipped")
      assert.strictEqual(events[0]!.data["deliveryStatus"], "failed")

      // The next send is refused before the carrier.
      const again = yield* refusal(m.send(live, { to: ADA, from: number, body: "Hello?" }))
      assert.match(again.message, optedOutRefusal(ADA, "the carrier reported their opt-out"))
      assert.lengthOf(f.sends, 1)
    })))

  it.effect("a carrier refusal for another reason records no opt-out", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* CarrierFakeTag
      const { live, ws } = yield* acme
      f.script.push(new CarrierError({ reason: "rejected", message: "Invalid destination" }))
      yield* refusal(m.send(live, { to: ADA, body: "hi" }))
      assert.isNull(yield* optOutOf(ws, ADA))
      assert.deepStrictEqual(yield* typesOf(ws), [])
    })))

  it.effect("a status report: failed with optedOut records a carrier opt-out; optedOut on a delivery, or a failure without it, does not", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const store = yield* ConversationStore
      const { live, ws } = yield* acme
      const carrierIdOf = (id: string) =>
        Effect.map(store.getActivity(ws, id), (a) => Option.getOrThrow(a).carrierMessageId!)
      const toAda = yield* carrierIdOf((yield* m.send(live, { to: ADA, body: "one" })).message.id)
      const toBob = yield* carrierIdOf((yield* m.send(live, { to: BOB, body: "two" })).message.id)
      const carol = "+14155550125"
      const toCarol = yield* carrierIdOf((yield* m.send(live, { to: carol, body: "three" })).message.id)

      yield* m.applyStatus({ carrierMessageId: toBob, status: "delivered", optedOut: true })
      yield* m.applyStatus({ carrierMessageId: toCarol, status: "delivery_failed" })
      assert.isNull(yield* optOutOf(ws, BOB))
      assert.isNull(yield* optOutOf(ws, carol))

      yield* m.applyStatus({ carrierMessageId: toAda, status: "delivery_failed", optedOut: true })
      const optOut = yield* optOutOf(ws, ADA)
      assert.strictEqual(optOut?.source, "carrier")
      assert.strictEqual(optOut?.note, "The carrier reported delivery_failed")
      const events = yield* eventsOf(ws)
      assert.deepStrictEqual(
        events.filter((e) => e.type === "contact.opted_out").map((e) => e.data),
        [{ phone: ADA, contactId: null, source: "carrier", keyword: null }]
      )
      // A repeated report changes nothing.
      yield* m.applyStatus({ carrierMessageId: toAda, status: "delivery_failed", optedOut: true })
      assert.lengthOf(yield* eventsOf(ws), events.length)
      const e = yield* refusal(m.send(live, { to: ADA, body: "again" }))
      assert.match(e.message, optedOutRefusal(ADA, "the carrier reported their opt-out"))
    })))
})
