/**
 * The Messaging and Conversations use cases (SPEC "Messages", "Conversations", "Events" message.*)
 * over the in-memory stores, with a fake Carrier that records every send and can be scripted to
 * refuse, and a RegistrationGate the test sets. Media are fetched by a fake fetcher, stored in the
 * memory blob store and signed by the real signer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option, TestClock } from "effect"
import * as MemoryBlobs from "../../adapters/blobs/memory.ts"
import * as SignedUrls from "../../adapters/media/signedUrls.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { allScopes, type Scope } from "../../core/auth/scopes.ts"
import * as Contacts from "../../core/contacts/service.ts"
import { ContactStore } from "../../core/contacts/store.ts"
import type { ActivityRecord } from "../../core/conversations/model.ts"
import * as Conversations from "../../core/conversations/service.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { type DomainError, InvalidArgument } from "../../core/kernel/errors.ts"
import { layerCursorCodec } from "../../core/kernel/pagination.ts"
import { BlobStore, MediaFetcher, MediaUrls } from "../../core/media/model.ts"
import { Carrier, CarrierError, type InboundMessage, type OutboundMessage } from "../../core/messaging/carrier.ts"
import * as Messaging from "../../core/messaging/service.ts"
import * as ActivityViews from "../../core/messaging/views.ts"
import { NumberStore, numberTypeOf } from "../../core/numbers/model.ts"
import * as OptOuts from "../../core/optouts/service.ts"
import { RegistrationGate, type TextingState } from "../../core/registration/gate.ts"
import { searchMessages, sendMessage } from "../../core/tools/conversations.ts"

// ---------------------------------------------------------------------------------- fakes

/** What the test controls and observes: carrier sends, scripted carrier failures, the texting state. */
interface Fakes {
  /** Every message handed to the carrier, accepted or not. */
  readonly attempts: Array<OutboundMessage>
  /** Outcomes of the next sends, in order; an empty script accepts. */
  readonly script: Array<CarrierError>
  texting: TextingState
  readonly gateCalls: Array<string>
}
class FakesTag extends Context.Tag("test/MessagingFakes")<FakesTag, Fakes>() {}

const fakes = Layer.sync(FakesTag, (): Fakes => ({ attempts: [], script: [], texting: "approved", gateCalls: [] }))

const fakeCarrier = Layer.effect(
  Carrier,
  Effect.map(FakesTag, (f) =>
    Carrier.of({
      answersKeywords: new Set(),
      send: (m) =>
        Effect.suspend(() => {
          f.attempts.push(m)
          const next = f.script.shift()
          return next
            ? Effect.fail(next)
            : Effect.succeed({ carrierMessageId: `car_${crypto.randomUUID()}`, status: "queued" as const })
        })
    }))
)

const fakeGate = Layer.effect(
  RegistrationGate,
  Effect.map(FakesTag, (f) =>
    RegistrationGate.of({
      textingState: (ws) =>
        Effect.sync(() => {
          f.gateCalls.push(ws)
          return f.texting
        })
    }))
)

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])
const PDF = new TextEncoder().encode("%PDF-1.4 fake")

/** `https://media.example/*.png|pdf` fetch; anything else fails as the real fetcher does. */
const fakeFetcher = Layer.succeed(
  MediaFetcher,
  MediaFetcher.of({
    fetch: (url) =>
      url.startsWith("https://media.example/") && url.endsWith(".png")
        ? Effect.succeed({ bytes: PNG, contentType: "image/png", filename: url.split("/").pop()! })
        : url.startsWith("https://media.example/") && url.endsWith(".pdf")
        ? Effect.succeed({ bytes: PDF, contentType: "application/pdf", filename: url.split("/").pop()! })
        : Effect.fail(new InvalidArgument({ message: `url ${url} could not be fetched: the server answered 404` }))
  })
)

const TestLayer = Layer.mergeAll(Messaging.layer, Conversations.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Contacts.layer, ActivityViews.layer, OptOuts.layer)),
  Layer.provideMerge(
    Layer.mergeAll(
      fakeCarrier,
      fakeGate,
      fakeFetcher,
      MemoryBlobs.layer,
      SignedUrls.layer({ baseUrl: "https://api.test", secret: new Uint8Array(32).fill(7) })
    )
  ),
  Layer.provideMerge(fakes),
  Layer.provideMerge(MemoryStores.layer),
  Layer.provideMerge(layerCursorCodec(new Uint8Array(32).fill(3)))
)

const run = <A, E>(self: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) => Effect.provide(self, TestLayer)

// ---------------------------------------------------------------------------------- helpers

const LOCAL = "+14155550100"
const LOCAL_2 = "+14155550199"
const TOLL_FREE = "+18005550100"
const ADA = "+14155550123"
const BOB = "+14155550124"

const principal = (
  kind: "live" | "test",
  workspaceId: string,
  scopes: ReadonlyArray<Scope> = allScopes
): Principal => ({
  workspaceId,
  keyId: crypto.randomUUID(),
  kind,
  scopes: new Set(scopes)
})

/** A workspace with the given numbers (active), each with its own inbox. */
const workspace = (numbers: ReadonlyArray<string> = [LOCAL]) =>
  Effect.gen(function*() {
    const store = yield* NumberStore
    const ws = crypto.randomUUID()
    const inboxes: Record<string, string> = {}
    for (const e164 of numbers) {
      const inboxId = crypto.randomUUID()
      inboxes[e164] = inboxId
      const inserted = yield* Effect.either(
        store.insert(ws, {
          e164: e164 as never,
          type: numberTypeOf(e164),
          voiceMode: "app",
          agentId: null,
          forwardTo: null,
          assignedUserId: null,
          status: "active"
        }, inboxId)
      )
      assert.isTrue(Either.isRight(inserted))
    }
    return { ws, inboxes, live: principal("live", ws), test: principal("test", ws) }
  })

/** Fails the test unless `self` fails with `tag`; returns the error. */
const failsWith = <A, R>(tag: DomainError["_tag"], self: Effect.Effect<A, DomainError, R>) =>
  Effect.gen(function*() {
    const result = yield* Effect.either(self)
    if (Either.isRight(result)) return assert.fail(`expected ${tag}, got success ${JSON.stringify(result.right)}`)
    assert.strictEqual(result.left._tag, tag, result.left.message)
    return result.left
  })

const events = (ws: string) =>
  Effect.flatMap(EventOutbox, (o) => o.list(ws)).pipe(
    Effect.map((es) => es.map((e) => ({ type: e.type, data: e.data as Record<string, unknown> })))
  )

/** Everything a refused send must not leave behind. */
const nothingStored = (ws: string) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    assert.deepStrictEqual(yield* store.listThreads({ workspaceId: ws, status: null, limit: 100, after: null }), [])
    assert.deepStrictEqual(yield* events(ws), [])
    assert.deepStrictEqual(yield* (yield* ContactStore).findByPhones(ws, [ADA, BOB]), [])
  })

let seq = 0
const inbound = (
  to: string,
  from: string,
  body: string | null,
  extra: Partial<InboundMessage> = {}
): InboundMessage => ({
  carrierMessageId: `in_${++seq}_${crypto.randomUUID()}`,
  from,
  to,
  body,
  media: [],
  ...extra
})

const thread = (ws: string, id: string) =>
  Effect.flatMap(ConversationStore, (s) => s.getThread(ws, id)).pipe(Effect.map(Option.getOrThrow))

const tick = TestClock.adjust("1 second")

// ---------------------------------------------------------------------------------- gates

describe("send: gates", () => {
  it.effect("no active number: 409 with the documented reason, for test and live keys alike", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const { ws, live, test } = yield* workspace([])
      for (const p of [test, live]) {
        const e = yield* failsWith("FailedPrecondition", m.send(p, { to: ADA, body: "hi" }))
        assert.strictEqual(e.message, "The workspace has no active phone number: add one before texting")
      }
      assert.lengthOf(f.attempts, 0)
      yield* nothingStored(ws)
    })))

  it.effect("toll-free numbers cannot text: neither as the only number nor as an explicit from", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const only = yield* workspace([TOLL_FREE])
      for (const p of [only.test, only.live]) {
        const e = yield* failsWith("FailedPrecondition", m.send(p, { to: ADA, body: "hi" }))
        assert.strictEqual(
          e.message,
          `${TOLL_FREE} is toll-free: texting from toll-free numbers is unavailable; send from a local number`
        )
      }
      yield* nothingStored(only.ws)
      const both = yield* workspace(["+18885550100", LOCAL])
      // without from, the local number is used even though the toll-free one is older
      const sent = yield* m.send(both.test, { to: ADA, body: "hi" })
      assert.strictEqual((yield* thread(both.ws, sent.conversationId)).numberE164, LOCAL)
      const e = yield* failsWith("FailedPrecondition", m.send(both.test, { to: ADA, from: "+18885550100", body: "hi" }))
      assert.strictEqual(
        e.message,
        "+18885550100 is toll-free: texting from toll-free numbers is unavailable; send from a local number"
      )
      assert.lengthOf(f.attempts, 0)
    })))

  it.effect("live keys: every texting state but approved is a 409 saying what is missing; nothing is sent or stored", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const { ws, live } = yield* workspace()
      const expected: ReadonlyArray<readonly [TextingState, string]> = [
        ["not_filed", "Texting is not registered: the 10DLC registration is not filed"],
        ["in_review", "Texting is not registered yet: the registration is in carrier review"],
        ["awaiting_pin", "Texting is not registered yet: the registration is waiting for the sole-proprietor PIN"],
        ["rejected", "Texting is not registered: the registration was rejected"]
      ]
      for (const [state, message] of expected) {
        f.texting = state
        const e = yield* failsWith(
          "FailedPrecondition",
          m.send(live, { to: ADA, body: "hi", mediaUrls: ["https://media.example/a.png"] })
        )
        assert.strictEqual(e.message, message, state)
      }
      assert.deepStrictEqual(f.gateCalls, [ws, ws, ws, ws])
      assert.lengthOf(f.attempts, 0)
      yield* nothingStored(ws)
    })))

  it.effect("test keys skip the registration gate, never reach the carrier, and record `simulated`", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const store = yield* ConversationStore
      f.texting = "not_filed"
      const { ws, test } = yield* workspace()
      const sent = yield* m.send(test, {
        to: ADA,
        body: "hello from a test key",
        mediaUrls: ["https://media.example/a.png"]
      })
      assert.strictEqual(sent.simulated, true)
      assert.strictEqual(sent.message.deliveryStatus, "simulated")
      assert.strictEqual(sent.message.direction, "outbound")
      assert.strictEqual(sent.message.body, "hello from a test key")
      assert.lengthOf(f.attempts, 0)
      assert.lengthOf(f.gateCalls, 0)
      const stored = Option.getOrThrow(yield* store.getActivity(ws, sent.message.id))
      assert.strictEqual(stored.deliveryStatus, "simulated")
      assert.strictEqual(stored.carrierMessageId, null)
      assert.lengthOf(stored.media, 1)
    })))

  it.effect("a scope other than messages:send is 403", () =>
    run(Effect.gen(function*() {
      const { ws } = yield* workspace()
      const p = principal("test", ws, allScopes.filter((s) => s !== "messages:send"))
      // The scope is the capability's (core/tools); the service trusts its caller.
      const e = yield* failsWith("PermissionDenied", sendMessage.run(p, { to: ADA, body: "hi" }))
      assert.match(e.message, /messages:send/)
      yield* nothingStored(ws)
    })))
})

// ---------------------------------------------------------------------------------- live sends

describe("send: live key through the carrier", () => {
  it.effect("approved: the carrier gets from, to, body and signed media URLs; the message is stored queued with the carrier id", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const store = yield* ConversationStore
      const urls = yield* MediaUrls
      const blobs = yield* BlobStore
      const { ws, live, inboxes } = yield* workspace()
      const sent = yield* m.send(live, {
        to: "(415) 555-0123",
        body: "Your table is ready",
        mediaUrls: ["https://media.example/menu.png", "https://media.example/bill.pdf"]
      })
      assert.lengthOf(f.attempts, 1)
      const call = f.attempts[0]!
      assert.strictEqual(call.from, LOCAL)
      assert.strictEqual(call.to, ADA)
      assert.strictEqual(call.body, "Your table is ready")
      assert.lengthOf(call.mediaUrls, 2)
      const expectedBytes = [PNG, PDF]
      for (const [i, u] of call.mediaUrls.entries()) {
        const url = new URL(u)
        assert.strictEqual(url.origin, "https://api.test")
        const [, v1, media, wsPart, key] = url.pathname.split("/")
        assert.deepStrictEqual([v1, media, wsPart], ["v1", "media", ws])
        assert.isTrue(
          yield* urls.verify(ws, key!, url.searchParams.get("expires")!, url.searchParams.get("signature")!)
        )
        assert.deepStrictEqual((yield* blobs.get(ws, key!))?.bytes, expectedBytes[i])
      }

      assert.strictEqual(sent.simulated, undefined)
      assert.strictEqual(sent.message.deliveryStatus, "queued")
      assert.deepStrictEqual(
        sent.message.media.map((x) => ({ contentType: x.contentType, size: x.size, filename: x.filename })),
        [
          { contentType: "image/png", size: PNG.byteLength, filename: "menu.png" },
          { contentType: "application/pdf", size: PDF.byteLength, filename: "bill.pdf" }
        ]
      )
      for (const x of sent.message.media) {
        assert.match(x.url!, /^https:\/\/api\.test\/v1\/media\/.+\?expires=\d+&signature=/)
      }
      const stored = Option.getOrThrow(yield* store.getActivity(ws, sent.message.id))
      assert.strictEqual(stored.deliveryStatus, "queued")
      assert.match(stored.carrierMessageId!, /^car_/)
      const t = yield* thread(ws, sent.conversationId)
      assert.strictEqual(t.numberE164, LOCAL)
      assert.strictEqual(t.participant, ADA)
      assert.strictEqual(t.inboxId, inboxes[LOCAL])
      assert.strictEqual(t.preview, "Your table is ready")
    })))

  it.effect("carrier `rejected`: 409 naming the refusal, nothing stored", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const { ws, live } = yield* workspace()
      f.script.push(new CarrierError({ reason: "rejected", message: "Invalid destination number" }))
      const e = yield* failsWith("FailedPrecondition", m.send(live, { to: ADA, body: "hi" }))
      assert.match(e.message, /Invalid destination number/)
      assert.lengthOf(f.attempts, 1)
      yield* nothingStored(ws)
    })))

  it.effect("carrier `unavailable`: Internal (500, retryable), nothing stored; a retry then succeeds once", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const store = yield* ConversationStore
      const { ws, live } = yield* workspace()
      f.script.push(new CarrierError({ reason: "unavailable", message: "timeout" }))
      yield* failsWith("Internal", m.send(live, { to: ADA, body: "hi" }))
      yield* nothingStored(ws)
      const ok = yield* m.send(live, { to: ADA, body: "hi" })
      assert.lengthOf(f.attempts, 2)
      assert.lengthOf(yield* store.listActivities(ws, ok.conversationId), 1)
    })))
})

// ---------------------------------------------------------------------------------- addressing

describe("send: to, conversationId and from", () => {
  it.effect("exactly one of to and conversationId", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { ws, test } = yield* workspace()
      const first = yield* m.send(test, { to: ADA, body: "hi" })
      yield* failsWith("InvalidArgument", m.send(test, { body: "neither" }))
      yield* failsWith("InvalidArgument", m.send(test, { to: ADA, conversationId: first.conversationId, body: "both" }))
      yield* failsWith("InvalidArgument", m.send(test, { to: "not a phone", body: "x" }))
      assert.lengthOf(yield* (yield* ConversationStore).listActivities(ws, first.conversationId), 1)
    })))

  it.effect("unknown, malformed or foreign conversationId: 404", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const a = yield* workspace()
      const b = yield* workspace([LOCAL_2])
      const theirs = yield* m.send(b.test, { to: ADA, body: "theirs" })
      for (const conversationId of [crypto.randomUUID(), "nope", `${theirs.conversationId}x`, theirs.conversationId]) {
        const e = yield* failsWith("NotFound", m.send(a.test, { conversationId, body: "hi" }))
        assert.strictEqual(e.message, "No such conversation")
      }
      yield* nothingStored(a.ws)
    })))

  it.effect("from must be one of the workspace's numbers (404 otherwise); it picks the thread's number", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const { ws, live, inboxes } = yield* workspace([LOCAL, LOCAL_2])
      const other = yield* workspace(["+14155550177"])
      for (const from of ["+14155550111", "+14155550177"]) {
        yield* failsWith("NotFound", m.send(live, { to: ADA, from, body: "hi" }))
      }
      yield* failsWith("InvalidArgument", m.send(live, { to: ADA, from: "garbage", body: "hi" }))
      assert.lengthOf(f.attempts, 0)
      yield* nothingStored(ws)
      yield* nothingStored(other.ws)

      const viaSecond = yield* m.send(live, { to: ADA, from: "+1 415 555 0199", body: "from the second line" })
      assert.strictEqual(f.attempts[0]!.from, LOCAL_2)
      const t = yield* thread(ws, viaSecond.conversationId)
      assert.strictEqual(t.numberE164, LOCAL_2)
      assert.strictEqual(t.inboxId, inboxes[LOCAL_2])
      // the same participant on the default number is another thread
      const viaDefault = yield* m.send(live, { to: ADA, body: "from the main line" })
      assert.notStrictEqual(viaDefault.conversationId, viaSecond.conversationId)
      assert.strictEqual(f.attempts[1]!.from, LOCAL)
    })))

  it.effect("with conversationId, from is ignored: the reply goes from the thread's number to its participant", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const store = yield* ConversationStore
      const { ws, live } = yield* workspace([LOCAL, LOCAL_2])
      const first = yield* m.send(live, { to: ADA, from: LOCAL_2, body: "one" })
      const reply = yield* m.send(live, { conversationId: first.conversationId, from: LOCAL, body: "two" })
      const reply2 = yield* m.send(live, { conversationId: first.conversationId, from: "+19995550000", body: "three" })
      assert.strictEqual(reply.conversationId, first.conversationId)
      assert.strictEqual(reply2.conversationId, first.conversationId)
      assert.deepStrictEqual(f.attempts.map((a) => [a.from, a.to]), [[LOCAL_2, ADA], [LOCAL_2, ADA], [LOCAL_2, ADA]])
      assert.lengthOf(yield* store.listThreads({ workspaceId: ws, status: null, limit: 10, after: null }), 1)
    })))

  it.effect("sending to a number reuses its thread", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const store = yield* ConversationStore
      const { ws, test } = yield* workspace()
      const a = yield* m.send(test, { to: ADA, body: "one" })
      yield* tick
      const b = yield* m.send(test, { to: "415-555-0123", body: "two" })
      assert.strictEqual(a.conversationId, b.conversationId)
      assert.deepStrictEqual((yield* store.listActivities(ws, a.conversationId)).map((x) => x.body), ["one", "two"])
    })))

  it.effect("an unfetchable media URL is InvalidArgument naming mediaUrls[i]; nothing is sent or stored", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const f = yield* FakesTag
      const { ws, live } = yield* workspace()
      const e = yield* failsWith(
        "InvalidArgument",
        m.send(live, {
          to: ADA,
          body: "x",
          mediaUrls: ["https://media.example/ok.png", "https://elsewhere.example/missing.png"]
        })
      )
      assert.match(e.message, /^mediaUrls\[1\]: /)
      assert.include(e.message, "https://elsewhere.example/missing.png")
      assert.lengthOf(f.attempts, 0)
      yield* nothingStored(ws)
    })))
})

// ---------------------------------------------------------------------------------- reads

/** The store calls a send makes ("Port.method", in order), and what happens while the carrier holds the message. */
interface Probe {
  readonly calls: Array<string>
  duringCarrier: Effect.Effect<void>
}
class ProbeTag extends Context.Tag("test/SendProbe")<ProbeTag, Probe>() {}

/** The port as the test layer builds it, with each call recorded when it runs. */
const recorded = <I, S extends object>(tag: Context.Tag<I, S>, port: string) =>
  Layer.effect(
    tag,
    Effect.gen(function*() {
      const inner = yield* tag
      const { calls } = yield* ProbeTag
      const methods = Object.entries(inner as Record<string, (...args: Array<unknown>) => Effect.Effect<unknown>>)
      return Object.fromEntries(
        methods.map(([method, f]) => [method, (...args: Array<unknown>) =>
          Effect.suspend(() => (calls.push(`${port}.${method}`), f(...args)))]
        )
      ) as S
    })
  )

const probedCarrier = Layer.effect(
  Carrier,
  Effect.map(ProbeTag, (probe) =>
    Carrier.of({
      answersKeywords: new Set(),
      send: () =>
        Effect.as(Effect.suspend(() => probe.duringCarrier), {
          carrierMessageId: `car_${crypto.randomUUID()}`,
          status: "queued" as const
        })
    }))
)

/** Messaging over recorded stores and the probed carrier; everything else as in TestLayer. */
class ProbedMessaging
  extends Context.Tag("test/ProbedMessaging")<ProbedMessaging, Context.Tag.Service<Messaging.Messaging>>()
{}
const ProbedLayer = Layer.effect(ProbedMessaging, Messaging.make).pipe(
  Layer.provide(
    Layer.mergeAll(
      recorded(ConversationStore, "ConversationStore"),
      recorded(NumberStore, "NumberStore"),
      recorded(ContactStore, "ContactStore"),
      probedCarrier
    )
  ),
  Layer.provideMerge(Layer.sync(ProbeTag, (): Probe => ({ calls: [], duringCarrier: Effect.void }))),
  Layer.provideMerge(TestLayer)
)

/** The store calls `self` makes. */
const callsOf = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { calls } = yield* ProbeTag
    calls.length = 0
    yield* self
    return [...calls]
  })

describe("send: each row read once", () => {
  it.effect("the senders listed once; the thread, its contact and the activity stored in one call", () =>
    Effect.gen(function*() {
      const m = yield* ProbedMessaging
      const { live } = yield* workspace()
      const sent = yield* m.send(live, { to: ADA, body: "one" })
      const stored = ["NumberStore.listActive", "ConversationStore.recordOutbound"]
      // to a new thread: created carrying the message
      assert.deepStrictEqual(yield* callsOf(m.send(live, { to: BOB, body: "one" })), stored)
      // ADA's reply gives the thread its contact
      yield* m.receive(inbound(LOCAL, ADA, "hi"))
      assert.deepStrictEqual(yield* callsOf(m.send(live, { to: ADA, body: "two" })), stored)
      assert.deepStrictEqual(yield* callsOf(m.send(live, { conversationId: sent.conversationId, body: "three" })), [
        "ConversationStore.getThread",
        "NumberStore.findByE164",
        "ConversationStore.recordOutbound"
      ])
      // a thread without a contact
      assert.deepStrictEqual(yield* callsOf(m.send(live, { to: BOB, body: "two" })), stored)
    }).pipe(Effect.provide(ProbedLayer)))

  it.effect("with conversationId, a status set and a contact deleted while the carrier holds the message survive the send", () =>
    Effect.gen(function*() {
      const m = yield* ProbedMessaging
      const conv = yield* Conversations.Conversations
      const contacts = yield* Contacts.Contacts
      const probe = yield* ProbeTag
      const { ws, live } = yield* workspace()
      const got = yield* m.receive(inbound(LOCAL, ADA, "Table for two?"))
      const before = yield* thread(ws, got.conversationId)
      assert.isNotNull(before.contactId)
      probe.duringCarrier = Effect.orDie(
        Effect.zipRight(conv.patch(live, before.id, { status: "done" }), contacts.remove(live, before.contactId!))
      )
      yield* tick
      yield* m.send(live, { conversationId: before.id, body: "Booked" })
      const after = yield* thread(ws, before.id)
      assert.deepStrictEqual(
        {
          status: after.status,
          contactId: after.contactId,
          contactName: after.contactName,
          preview: after.preview,
          unread: after.unread
        },
        { status: "done", contactId: null, contactName: ADA, preview: "Booked", unread: 0 }
      )
      assert.isTrue(after.lastActivityAt > before.lastActivityAt)
    }).pipe(Effect.provide(ProbedLayer)))
})

// ---------------------------------------------------------------------------------- events

describe("message events", () => {
  it.effect("send emits message.delivered without deliveryStatus", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { ws, live, test, inboxes } = yield* workspace()
      const a = yield* m.send(live, { to: ADA, body: "live" })
      const b = yield* m.send(test, { to: BOB, body: "test" })
      assert.deepStrictEqual(yield* events(ws), [
        {
          type: "message.delivered",
          data: { conversationId: a.conversationId, inboxId: inboxes[LOCAL], activityId: a.message.id }
        },
        {
          type: "message.delivered",
          data: { conversationId: b.conversationId, inboxId: inboxes[LOCAL], activityId: b.message.id }
        }
      ])
    })))

  it.effect("inbound emits message.received with numberE164, conversationId, inboxId, activityId and contactId", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { ws, inboxes } = yield* workspace([LOCAL, LOCAL_2])
      const got = yield* m.receive(inbound(LOCAL_2, ADA, "hello"))
      const t = yield* thread(ws, got.conversationId)
      assert.isNotNull(t.contactId)
      assert.deepStrictEqual(yield* events(ws), [
        {
          type: "message.received",
          data: {
            numberE164: LOCAL_2,
            conversationId: got.conversationId,
            inboxId: inboxes[LOCAL_2],
            activityId: got.id,
            contactId: t.contactId
          }
        }
      ])
    })))

  it.effect("status reports: message.delivered with deliveryStatus, message.failed with the carrier word, nothing for stale or unknown reports", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const store = yield* ConversationStore
      const { ws, live, inboxes } = yield* workspace()
      const ok = yield* m.send(live, { to: ADA, body: "will arrive" })
      const bad = yield* m.send(live, { to: BOB, body: "will fail" })
      const carrierId = (id: string) =>
        Effect.map(store.getActivity(ws, id), (a) => Option.getOrThrow(a).carrierMessageId!)
      const okId = yield* carrierId(ok.message.id)
      const badId = yield* carrierId(bad.message.id)
      const before = (yield* events(ws)).length

      const sent = yield* m.applyStatus({ carrierMessageId: okId, status: "sent" })
      assert.strictEqual(Option.getOrThrow(sent).deliveryStatus, "sent")
      yield* m.applyStatus({ carrierMessageId: okId, status: "delivered" })
      // stale: a late sent, a repeated delivered, and a failure after delivery change nothing
      yield* m.applyStatus({ carrierMessageId: okId, status: "sent" })
      yield* m.applyStatus({ carrierMessageId: okId, status: "delivered" })
      const late = yield* m.applyStatus({ carrierMessageId: okId, status: "delivery_failed" })
      assert.strictEqual(Option.getOrThrow(late).deliveryStatus, "delivered")
      yield* m.applyStatus({ carrierMessageId: badId, status: "delivery_failed" })
      yield* m.applyStatus({ carrierMessageId: badId, status: "delivered" })
      // unknown ids and words are ignored
      assert.isTrue(Option.isNone(yield* m.applyStatus({ carrierMessageId: "car_unknown", status: "delivered" })))
      yield* m.applyStatus({ carrierMessageId: okId, status: "teleported" })

      const ev = (yield* events(ws)).slice(before)
      const base = (id: string, conversationId: string) => ({ conversationId, inboxId: inboxes[LOCAL], activityId: id })
      assert.deepStrictEqual(ev, [
        { type: "message.delivered", data: { ...base(ok.message.id, ok.conversationId), deliveryStatus: "sent" } },
        { type: "message.delivered", data: { ...base(ok.message.id, ok.conversationId), deliveryStatus: "delivered" } },
        {
          type: "message.failed",
          data: { ...base(bad.message.id, bad.conversationId), deliveryStatus: "delivery_failed" }
        }
      ])
      assert.strictEqual(Option.getOrThrow(yield* store.getActivity(ws, ok.message.id)).deliveryStatus, "delivered")
      assert.strictEqual(Option.getOrThrow(yield* store.getActivity(ws, bad.message.id)).deliveryStatus, "failed")
    })))

  it.effect("a status report never touches an inbound message", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const store = yield* ConversationStore
      const { ws } = yield* workspace()
      const msg = inbound(LOCAL, ADA, "hi")
      const got = yield* m.receive(msg)
      const before = (yield* events(ws)).length
      yield* m.applyStatus({ carrierMessageId: msg.carrierMessageId, status: "delivery_failed" })
      assert.strictEqual(Option.getOrThrow(yield* store.getActivity(ws, got.id)).deliveryStatus, "received")
      assert.lengthOf(yield* events(ws), before)
    })))
})

// ---------------------------------------------------------------------------------- inbound

describe("inbound messages", () => {
  it.effect("an unknown sender gets a placeholder contact (source inbound, no contact event) and a thread", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const contacts = yield* ContactStore
      const { ws, inboxes } = yield* workspace()
      const got = yield* m.receive(inbound(LOCAL, "(415) 555-0123", "Is the table ready?"))
      assert.strictEqual(got.direction, "inbound")
      assert.strictEqual(got.deliveryStatus, "received")
      assert.strictEqual(got.body, "Is the table ready?")
      const found = yield* contacts.findByPhones(ws, [ADA])
      assert.lengthOf(found, 1)
      assert.strictEqual(found[0]!.source, "inbound")
      assert.deepStrictEqual(found[0]!.phones, [{ value: ADA }])
      assert.deepStrictEqual([found[0]!.firstName, found[0]!.lastName, found[0]!.company], [null, null, null])
      const t = yield* thread(ws, got.conversationId)
      assert.strictEqual(t.contactId, found[0]!.id)
      assert.strictEqual(t.participant, ADA)
      assert.strictEqual(t.numberE164, LOCAL)
      assert.strictEqual(t.inboxId, inboxes[LOCAL])
      assert.strictEqual(t.contactName, ADA)
      assert.strictEqual(t.status, "open")
      assert.strictEqual(t.unread, 1)
      assert.strictEqual(t.preview, "Is the table ready?")
      assert.deepStrictEqual((yield* events(ws)).map((e) => e.type), ["message.received"])
    })))

  it.effect("sending to an unknown number creates no contact; the reply creates the placeholder and attaches the thread", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const contacts = yield* ContactStore
      const { ws, test } = yield* workspace()
      const sent = yield* m.send(test, { to: ADA, body: "Your table is ready" })
      assert.deepStrictEqual(yield* contacts.findByPhones(ws, [ADA]), [])
      const before = yield* thread(ws, sent.conversationId)
      assert.strictEqual(before.contactId, null)
      assert.strictEqual(before.contactName, ADA)
      yield* tick
      yield* m.receive(inbound(LOCAL, ADA, "On our way"))
      const found = yield* contacts.findByPhones(ws, [ADA])
      assert.lengthOf(found, 1)
      assert.strictEqual(found[0]!.source, "inbound")
      assert.strictEqual((yield* thread(ws, sent.conversationId)).contactId, found[0]!.id)
    })))

  it.effect("an inbound text whose media cannot be fetched is stored without that media, not lost", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { ws } = yield* workspace()
      const got = yield* m.receive(
        inbound(LOCAL, ADA, "See attached", {
          media: [{ url: "https://media.example/missing", contentType: "image/png" }]
        })
      )
      assert.strictEqual(got.body, "See attached")
      assert.deepStrictEqual(got.media, [])
      assert.deepStrictEqual((yield* events(ws)).map((e) => e.type), ["message.received"])
    })))

  it.effect("a second text from the same number reuses the thread and the contact", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const store = yield* ConversationStore
      const { ws } = yield* workspace()
      const a = yield* m.receive(inbound(LOCAL, ADA, "one"))
      yield* tick
      const b = yield* m.receive(inbound(LOCAL, ADA, "two"))
      assert.strictEqual(a.conversationId, b.conversationId)
      assert.lengthOf(yield* (yield* ContactStore).findByPhones(ws, [ADA]), 1)
      const ev = yield* events(ws)
      assert.strictEqual(ev[0]!.data.contactId, ev[1]!.data.contactId)
      assert.deepStrictEqual((yield* store.listActivities(ws, a.conversationId)).map((x) => x.body), ["one", "two"])
      const t = yield* thread(ws, a.conversationId)
      assert.strictEqual(t.unread, 2)
      assert.strictEqual(t.preview, "two")
    })))

  it.effect("a known contact's text lands on its thread with its name", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const contacts = yield* Contacts.Contacts
      const { ws, test } = yield* workspace()
      const ada = yield* contacts.create(test, { firstName: "Ada", lastName: "Lovelace", phone: ADA })
      const got = yield* m.receive(inbound(LOCAL, ADA, "hi"))
      const t = yield* thread(ws, got.conversationId)
      assert.strictEqual(t.contactId, ada.id)
      assert.strictEqual(t.contactName, "Ada Lovelace")
    })))

  it.effect("inbound reopens a done thread and counts as unread; an outbound message resets unread", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const conv = yield* Conversations.Conversations
      const { ws, test } = yield* workspace()
      const a = yield* m.receive(inbound(LOCAL, ADA, "one"))
      yield* m.receive(inbound(LOCAL, ADA, "two"))
      assert.strictEqual((yield* thread(ws, a.conversationId)).unread, 2)
      const done = yield* conv.patch(test, a.conversationId, { status: "done" })
      assert.strictEqual(done.status, "done")
      assert.strictEqual(done.unread, 0)
      yield* tick
      yield* m.receive(inbound(LOCAL, ADA, "three"))
      let t = yield* thread(ws, a.conversationId)
      assert.strictEqual(t.status, "open")
      assert.strictEqual(t.unread, 1)
      yield* m.receive(inbound(LOCAL, ADA, "four"))
      assert.strictEqual((yield* thread(ws, a.conversationId)).unread, 2)
      yield* tick
      yield* m.send(test, { conversationId: a.conversationId, body: "reply" })
      t = yield* thread(ws, a.conversationId)
      assert.strictEqual(t.unread, 0)
      assert.strictEqual(t.status, "open")
      assert.strictEqual(t.preview, "reply")
    })))

  it.effect("deleting the contact detaches its threads (raw number as name); the next text creates a fresh contact", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const contacts = yield* Contacts.Contacts
      const contactStore = yield* ContactStore
      const conv = yield* Conversations.Conversations
      const { ws, test } = yield* workspace([LOCAL, LOCAL_2])
      const ada = yield* contacts.create(test, { company: "Analytical Engines", phone: ADA })
      const one = yield* m.receive(inbound(LOCAL, ADA, "hi"))
      const two = yield* m.send(test, { to: ADA, from: LOCAL_2, body: "other line" })
      assert.strictEqual((yield* thread(ws, one.conversationId)).contactName, "Analytical Engines")
      yield* contacts.remove(test, ada.id)
      for (const id of [one.conversationId, two.conversationId]) {
        const t = yield* thread(ws, id)
        assert.strictEqual(t.contactId, null)
        assert.strictEqual(t.contactName, ADA)
        assert.strictEqual((yield* conv.get(test, id)).conversation.contactName, ADA)
      }
      // history is kept
      assert.lengthOf((yield* conv.get(test, one.conversationId)).activities, 1)

      const eventsBefore = (yield* events(ws)).length
      yield* tick
      const again = yield* m.receive(inbound(LOCAL, ADA, "me again"))
      assert.strictEqual(again.conversationId, one.conversationId)
      const fresh = yield* contactStore.findByPhones(ws, [ADA])
      assert.lengthOf(fresh, 1)
      assert.notStrictEqual(fresh[0]!.id, ada.id)
      assert.strictEqual(fresh[0]!.source, "inbound")
      const t = yield* thread(ws, one.conversationId)
      assert.strictEqual(t.contactId, fresh[0]!.id)
      const ev = (yield* events(ws)).slice(eventsBefore)
      assert.deepStrictEqual(ev.map((e) => e.type), ["message.received"])
      assert.strictEqual(ev[0]!.data.contactId, fresh[0]!.id)
      assert.lengthOf((yield* conv.get(test, one.conversationId)).activities, 2)
    })))

  it.effect("an inbound with a carrier id already stored is stored once", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const store = yield* ConversationStore
      const { ws } = yield* workspace()
      const msg = inbound(LOCAL, ADA, "only once")
      const a = yield* m.receive(msg)
      const b = yield* m.receive({ ...msg })
      assert.strictEqual(a.id, b.id)
      assert.lengthOf(yield* store.listActivities(ws, a.conversationId), 1)
      assert.lengthOf(yield* events(ws), 1)
      assert.strictEqual((yield* thread(ws, a.conversationId)).unread, 1)
    })))

  it.effect("inbound MMS: media are fetched, stored and shown as signed URLs; a text-less MMS previews as an attachment note", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const conv = yield* Conversations.Conversations
      const { ws, test } = yield* workspace()
      const got = yield* m.receive(
        inbound(LOCAL, ADA, null, { media: [{ url: "https://media.example/photo.png", contentType: "image/png" }] })
      )
      assert.lengthOf(got.media, 1)
      assert.strictEqual((yield* thread(ws, got.conversationId)).preview, "[1 attachment]")
      const read = yield* conv.get(test, got.conversationId)
      const [media] = read.activities[0]!.media
      assert.strictEqual(media!.contentType, "image/png")
      assert.strictEqual(media!.size, PNG.byteLength)
      assert.match(media!.url!, new RegExp(`^https://api\\.test/v1/media/${ws}/`))
    })))

  it.effect("inbound to a number nobody holds is NotFound and stores nothing", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const { ws } = yield* workspace()
      yield* failsWith("NotFound", m.receive(inbound("+14155550911", ADA, "hi")))
      yield* nothingStored(ws)
    })))
})

// ---------------------------------------------------------------------------------- search

const callActivity = (
  ws: string,
  conversationId: string,
  createdAt: string,
  transcript: ReadonlyArray<string>
): ActivityRecord => ({
  id: crypto.randomUUID(),
  workspaceId: ws,
  conversationId,
  type: "call",
  direction: "inbound",
  authorUid: null,
  body: null,
  media: [],
  deliveryStatus: null,
  carrierMessageId: null,
  call: { status: "completed", durationSeconds: 42 },
  aiTags: [],
  callTranscript: transcript.map((text, i) => ({
    speaker: i % 2 === 0 ? "caller" : "agent",
    text,
    offsetSeconds: i * 5
  })),
  createdAt
})

describe("search", () => {
  it.effect("words and prefixes, case-insensitive, every word must match, bodies and transcripts, newest first, limit", () =>
    run(Effect.gen(function*() {
      const m = yield* Messaging.Messaging
      const conv = yield* Conversations.Conversations
      const store = yield* ConversationStore
      const { ws, test } = yield* workspace()
      const other = yield* workspace([LOCAL_2])
      yield* tick
      const a = yield* m.send(test, { to: ADA, body: "Your TABLE for two is ready" })
      yield* tick
      const b = yield* m.receive(inbound(LOCAL, BOB, "Thanks! We're on our way, tables are hard to find."))
      yield* tick
      const callId = callActivity(ws, a.conversationId, new Date(yield* TestClockNow).toISOString(), [
        "Hi, I'd like to book a table",
        "Sure, for how many guests?"
      ])
      yield* store.insertActivity(callId)
      yield* tick
      yield* m.send(other.test, { to: ADA, body: "a table in another workspace" })

      const ids = (q: string, limit = 25) =>
        Effect.map(conv.search(test, q, limit), (rs) => rs.map((r) => r.activityId))
      // prefix, case-insensitive, newest first; the transcript counts
      assert.deepStrictEqual(yield* ids("tab"), [callId.id, b.id, a.message.id])
      assert.deepStrictEqual(yield* ids("TaBlE"), [callId.id, b.id, a.message.id])
      // AND of words
      assert.deepStrictEqual(yield* ids("table ready"), [a.message.id])
      assert.deepStrictEqual(yield* ids("table guests"), [callId.id])
      assert.deepStrictEqual(yield* ids("table zebra"), [])
      // prefixes only: no infix matches
      assert.deepStrictEqual(yield* ids("able"), [])
      // punctuation in documents and queries is a word break
      assert.deepStrictEqual(yield* ids("way,"), [b.id])
      assert.deepStrictEqual(yield* ids("we're"), [b.id])
      // limit keeps the newest
      assert.deepStrictEqual(yield* ids("tab", 2), [callId.id, b.id])

      const [first] = yield* conv.search(test, "ready", 25)
      assert.deepStrictEqual(first, {
        activityId: a.message.id,
        conversationId: a.conversationId,
        type: "message",
        direction: "outbound",
        body: "Your TABLE for two is ready",
        participants: [ADA],
        numberE164: LOCAL,
        createdAt: a.message.createdAt
      })
      const [call] = yield* conv.search(test, "guests", 25)
      assert.strictEqual(call!.type, "call")
      assert.strictEqual(call!.body, null)

      yield* failsWith("InvalidArgument", conv.search(test, " ?! ", 25))
      yield* failsWith("PermissionDenied", searchMessages.run(principal("test", ws, ["messages:send"]), { q: "table" }))
    })))
})

const TestClockNow = Effect.clockWith((c) => c.currentTimeMillis)
