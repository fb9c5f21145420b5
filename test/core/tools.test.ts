/**
 * The capability table (core/tools) over the memory layers: entries run the same use cases as the
 * REST routes, inputs decode through the table's Schemas, every entry's example decodes and has a
 * JSON Schema, every answer the tests get is one its `output` Schema encodes, the hints follow one
 * policy, and each declared scope is the one its use case enforces.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, JSONSchema, Layer, Schema } from "effect"
import * as MemoryBlobs from "../../adapters/blobs/memory.ts"
import * as SimulatedCarrier from "../../adapters/carrier/simulated.ts"
import * as SimulatedInventory from "../../adapters/carrier/simulatedInventory.ts"
import * as SimulatedRegistry from "../../adapters/carrier/simulatedRegistry.ts"
import * as SimulatedVoice from "../../adapters/carrier/simulatedVoice.ts"
import * as SignedUrls from "../../adapters/media/signedUrls.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as SimulatedPayments from "../../adapters/payments/simulated.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { allScopes, type Scope } from "../../core/auth/scopes.ts"
import { HostResolver, layerOutboundGuard } from "../../core/egress/guard.ts"
import { InvalidArgument } from "../../core/kernel/errors.ts"
import type { DomainError } from "../../core/kernel/errors.ts"
import { layerCursorCodec } from "../../core/kernel/pagination.ts"
import { CoreLive } from "../../core/layer.ts"
import { Mailer } from "../../core/mail/mailer.ts"
import { MediaFetcher } from "../../core/media/model.ts"
import { ConsoleOrigin } from "../../core/members/sessions.ts"
import { NumberStore } from "../../core/numbers/model.ts"
import { layerNotFiled } from "../../core/registration/gate.ts"
import {
  Agent,
  type AnyTool,
  Calls,
  callTool as callUnchecked,
  Contacts,
  Conversations,
  Numbers,
  OptOuts,
  Registration,
  Scheduling,
  type Tool,
  tools,
  Webhooks
} from "../../core/tools/index.ts"
import { WebhookSender } from "../../core/webhooks/store.ts"

const unused = <A>(name: string) => Effect.dieMessage(`${name} is not used by these tests`) as Effect.Effect<A>

const TestLayer = CoreLive.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      SimulatedCarrier.layer,
      SimulatedInventory.layer,
      SimulatedRegistry.layer,
      SimulatedVoice.layer,
      SimulatedPayments.layer,
      layerNotFiled,
      MemoryBlobs.layer,
      SignedUrls.layer({ baseUrl: "https://api.test", secret: new Uint8Array(32).fill(7) }),
      Layer.succeed(MediaFetcher, MediaFetcher.of({ fetch: () => unused("MediaFetcher") })),
      Layer.succeed(WebhookSender, WebhookSender.of({ send: () => unused("WebhookSender") })),
      Layer.succeed(Mailer, Mailer.of({ send: () => unused("Mailer") })),
      Layer.succeed(ConsoleOrigin, { baseUrl: "https://api.test" }),
      layerOutboundGuard(false).pipe(
        Layer.provide(Layer.succeed(HostResolver, HostResolver.of({ resolve: () => unused("HostResolver") })))
      )
    )
  ),
  Layer.provideMerge(MemoryStores.layer),
  Layer.provideMerge(layerCursorCodec(new Uint8Array(32).fill(3)))
)

const run = <A, E>(self: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) => Effect.provide(self, TestLayer)

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

const LOCAL = "+14155550100"

/**
 * `callTool`, then the answer encoded with the tool's `output` as REST and MCP encode it, refusing
 * any field the Schema does not declare: the Schema describes exactly what the tool answers.
 */
const callTool = <I, IE, A, E extends DomainError, R>(t: Tool<I, IE, A, E, R>, p: Principal, raw: unknown) =>
  Effect.tap(
    callUnchecked(t, p, raw),
    (answer) => Effect.orDie(Schema.encode(t.output, { onExcessProperty: "error" })(answer))
  )

/** A workspace with one active local number. */
const workspace = Effect.gen(function*() {
  const ws = crypto.randomUUID()
  const numbers = yield* NumberStore
  yield* Effect.orDie(
    numbers.insert(ws, {
      e164: LOCAL as never,
      type: "local",
      voiceMode: "app",
      agentId: null,
      forwardTo: null,
      assignedUserId: null,
      status: "active"
    }, crypto.randomUUID())
  )
  return ws
})

describe("the capability table", () => {
  it("names are unique `<resource>_<action>` and every entry has a title and a description; the scope is written once, in `scope` (MCP adds it to the description)", () => {
    const names = tools.map((t) => t.name)
    assert.strictEqual(new Set(names).size, names.length)
    for (const t of tools) {
      assert.match(t.name, /^[a-z]+(_[a-z]+)+$/)
      assert.isAbove(t.title.length, 5, t.name)
      assert.notMatch(t.description, /Scope `/, t.name)
    }
    assert.sameMembers(names, [
      "contacts_list",
      "contacts_get",
      "contacts_create",
      "contacts_update",
      "contacts_delete",
      "opt_outs_list",
      "opt_outs_create",
      "opt_outs_delete",
      "conversations_list",
      "conversations_get",
      "conversations_update",
      "messages_send",
      "messages_search",
      "scheduled_messages_create",
      "scheduled_messages_list",
      "scheduled_messages_get",
      "scheduled_messages_cancel",
      "broadcasts_create",
      "broadcasts_list",
      "broadcasts_get",
      "broadcasts_recipients",
      "broadcasts_cancel",
      "calls_list",
      "calls_place",
      "numbers_list",
      "numbers_search",
      "numbers_buy",
      "numbers_connect",
      "numbers_disconnect",
      "messaging_status",
      "messaging_register",
      "messaging_refresh",
      "messaging_verify_otp",
      "messaging_resend_otp",
      "agent_get",
      "agent_update",
      "agent_publish",
      "webhooks_event_types",
      "webhooks_list",
      "webhooks_create",
      "webhooks_get",
      "webhooks_update",
      "webhooks_delete",
      "webhooks_rotate",
      "webhooks_test",
      "webhooks_deliveries",
      "webhooks_deliveries_retry",
      "webhooks_recover"
    ])
  })

  it("hints follow one policy: reads are read-only and closed-world, deletes destructive and idempotent, idempotency keys only on open-world writes", () => {
    for (const t of tools) {
      const { readOnly, destructive, idempotent, openWorld } = t.hints
      if (t.scope.endsWith(":read") || /_(list|get|search|status|event_types|deliveries)$/.test(t.name)) {
        assert.isTrue(readOnly, t.name)
      }
      if (readOnly) assert.deepStrictEqual([destructive, idempotent], [false, true], t.name)
      // The one read that asks an outside party: the carrier's live inventory.
      if (readOnly) assert.strictEqual(openWorld, t.name === "numbers_search", t.name)
      if (t.name.endsWith("_delete")) {
        assert.deepStrictEqual([readOnly, destructive, idempotent], [false, true, true], t.name)
      }
      if (t.idempotencyKey) assert.deepStrictEqual([readOnly, idempotent, openWorld], [false, false, true], t.name)
    }
    const open = tools.filter((t) => t.hints.openWorld && !t.hints.readOnly).map((t) => t.name)
    assert.sameMembers(open, [
      "messages_send",
      "scheduled_messages_create",
      "broadcasts_create",
      "calls_place",
      "numbers_buy",
      "messaging_register",
      "messaging_refresh",
      "messaging_verify_otp",
      "messaging_resend_otp",
      "webhooks_test",
      // Both send (now, or through the worker) to the endpoint's outside URL.
      "webhooks_deliveries_retry",
      "webhooks_recover",
      // An endpoint sends every later event of the workspace, with personal data, to an outside URL.
      "webhooks_create",
      "webhooks_update"
    ])
  })

  it("lists every tool its modules export", () => {
    const exported = [Agent, Calls, Contacts, Conversations, OptOuts, Registration, Numbers, Scheduling, Webhooks]
      .flatMap((m) => Object.values(m)).filter((v) => typeof v === "object" && v !== null && "run" in v)
    assert.sameMembers([...tools], exported)
  })

  it("every entry's input decodes its example and has a JSON Schema; its output's JSON Schema is an object (MCP's structuredContent)", () => {
    for (const t of tools) {
      assert.isTrue(Either.isRight(Schema.decodeUnknownEither(t.input)(t.example)), t.name)
      const json = JSONSchema.make(t.input) as { readonly type?: string; readonly $ref?: string }
      assert.isTrue(json.type === "object" || json.$ref !== undefined, t.name)
      assert.strictEqual((JSONSchema.make(t.output) as { readonly type?: string }).type, "object", t.name)
    }
  })

  it.effect("create a contact, then read it back and update it, through the table", () =>
    run(Effect.gen(function*() {
      const p = principal("live", yield* workspace)
      const created = yield* callTool(Contacts.createContact, p, { firstName: "Ada", phone: "+1 415 555 0123" })
      assert.strictEqual(created.contact.firstName, "Ada")
      assert.deepStrictEqual(created.contact.phones, [{ value: "+14155550123" }])
      const got = yield* callTool(Contacts.getContact, p, { id: created.contact.id })
      assert.deepStrictEqual(got, created)
      const updated = yield* callTool(Contacts.updateContact, p, { id: created.contact.id, company: "Engines" })
      assert.strictEqual(updated.contact.company, "Engines")
      const listed = yield* callTool(Contacts.listContacts, p, { q: "ada" })
      assert.deepStrictEqual(listed.contacts.map((c) => c.id), [created.contact.id])
      assert.deepStrictEqual(yield* callTool(Contacts.deleteContact, p, { id: created.contact.id }), { deleted: true })
      assert.strictEqual(
        (yield* Effect.flip(callTool(Contacts.getContact, p, { id: created.contact.id })))._tag,
        "NotFound"
      )
    })))

  it.effect("send a message with a test key; the thread is attached to the contact and searchable", () =>
    run(Effect.gen(function*() {
      const p = principal("test", yield* workspace)
      yield* callTool(Contacts.createContact, p, { firstName: "Ada", phone: "+14155550123" })
      const sent = yield* callTool(Conversations.sendMessage, p, { to: "+14155550123", body: "Your table is ready" })
      assert.strictEqual(sent.simulated, true)
      assert.strictEqual(sent.message.deliveryStatus, "simulated")
      const thread = yield* callTool(Conversations.getConversation, p, { id: sent.conversationId })
      assert.strictEqual(thread.conversation.contactName, "Ada")
      assert.deepStrictEqual(thread.activities.map((a) => a.id), [sent.message.id])
      const found = yield* callTool(Conversations.searchMessages, p, { q: "table" })
      assert.deepStrictEqual(found.results.map((r) => r.activityId), [sent.message.id])
      const done = yield* callTool(Conversations.updateConversation, p, { id: sent.conversationId, status: "done" })
      assert.strictEqual(done.conversation.status, "done")
      assert.deepStrictEqual(
        (yield* callTool(Conversations.listConversations, p, { status: "done" })).conversations.map((c) => c.id),
        [sent.conversationId]
      )
    })))

  it.effect("create and publish the agent, route the number to it and away, through the table", () =>
    run(Effect.gen(function*() {
      const p = principal("live", yield* workspace)
      assert.deepStrictEqual((yield* callTool(Agent.getAgent, p, {})).agent, null)
      const refused = yield* Effect.flip(callTool(Agent.connectNumber, p, { e164: LOCAL }))
      assert.strictEqual(refused.message, "Create an agent first")
      const created = yield* callTool(Agent.updateAgent, p, Agent.updateAgent.example)
      assert.strictEqual(created.agent.status, "draft")
      assert.strictEqual((yield* callTool(Agent.publishAgent, p, {})).agent.status, "published")
      assert.deepStrictEqual(yield* callTool(Agent.connectNumber, p, { e164: "(415) 555-0100" }), {
        ok: true,
        voiceMode: "agent"
      })
      const [routed] = (yield* callTool(Numbers.listNumbers, p, {})).numbers
      assert.strictEqual(routed?.agentId, created.agent.id)
      assert.deepStrictEqual(yield* callTool(Agent.disconnectNumber, p, Agent.disconnectNumber.example), {
        ok: true,
        voiceMode: "forward"
      })
      const [forwarded] = (yield* callTool(Numbers.listNumbers, p, {})).numbers
      assert.deepStrictEqual([forwarded?.voiceMode, forwarded?.agentId, forwarded?.forwardTo], [
        "forward",
        null,
        "+14155550199"
      ])
    })))

  it.effect("calls_place with no published agent is refused (409); calls_list answers the empty history", () =>
    run(Effect.gen(function*() {
      const p = principal("test", yield* workspace)
      const refused = yield* Effect.flip(callTool(Calls.placeCall, p, { to: "+14155550123" }))
      assert.strictEqual(refused._tag, "FailedPrecondition")
      assert.include(refused.message, "Publish an agent first")
      assert.deepStrictEqual(yield* callTool(Calls.listCalls, p, {}), { calls: [] })
    })))

  it.effect("search the carrier's numbers and read the texting registration, through the table", () =>
    run(Effect.gen(function*() {
      const p = principal("test", yield* workspace)
      const { available } = yield* callTool(Numbers.searchAvailableNumbers, p, { startsWith: "415", limit: 2 })
      assert.isAbove(available.length, 0)
      assert.isTrue(available.every((n) => n.phone_number.startsWith("+1415")))
      assert.strictEqual((yield* callTool(Registration.getMessagingStatus, p, {})).messaging.step, "none")
      assert.deepStrictEqual(yield* callTool(Webhooks.listWebhooks, p, {}), { webhooks: [] })
      assert.isAbove((yield* callTool(Webhooks.listWebhookEventTypes, p, {})).events.length, 0)
    })))

  it.effect("a live key on a workspace that is not registered is refused by the same gate as REST", () =>
    run(Effect.gen(function*() {
      const p = principal("live", yield* workspace)
      const refused = yield* Effect.flip(callTool(Conversations.sendMessage, p, { to: "+14155550123", body: "hi" }))
      assert.strictEqual(refused._tag, "FailedPrecondition")
    })))

  it.effect("an input the Schema refuses is InvalidArgument naming the field; nothing runs", () =>
    run(Effect.gen(function*() {
      const p = principal("test", yield* workspace)
      const e = yield* Effect.flip(
        callTool(Conversations.sendMessage, p, { to: "+14155550123", body: "hi", colour: "red" })
      )
      assert.instanceOf(e, InvalidArgument)
      assert.include(e.message, "colour")
      const listed = yield* callTool(Conversations.listConversations, p, {})
      assert.deepStrictEqual(listed.conversations, [])
    })))

  it.effect("an input beyond the bounds of core/kernel/input.ts is refused before the Schema sees it, for any transport", () =>
    run(Effect.gen(function*() {
      const p = principal("test", yield* workspace)
      let deep: unknown = "x"
      for (let i = 0; i < 3_000; i++) deep = [deep]
      const nested = yield* Effect.flip(
        callTool(Contacts.createContact, p, { firstName: "Ada", properties: { x: deep } })
      )
      assert.instanceOf(nested, InvalidArgument)
      assert.match(nested.message, /^properties\.x\..*: nested deeper than 16 levels$/)
      const wide = yield* Effect.flip(
        callTool(Contacts.createContact, p, { tags: Array.from({ length: 200_000 }, () => "a") })
      )
      assert.strictEqual(wide.message, "tags: more than 10000 items")
      const nul = yield* Effect.flip(callTool(Contacts.createContact, p, { firstName: "a\u0000" }))
      assert.strictEqual(nul.message, "firstName: must not contain NUL characters")
    })))

  it.effect("each entry's declared scope is the one its use case enforces", () =>
    run(Effect.gen(function*() {
      const ws = yield* workspace
      for (const t of tools as ReadonlyArray<AnyTool>) {
        const without = principal("test", ws, allScopes.filter((s) => s !== t.scope))
        const e = yield* Effect.flip(callTool(t, without, t.example))
        assert.strictEqual(e._tag, "PermissionDenied", t.name)
        assert.strictEqual(e.message, `This key lacks the scope ${t.scope}`, t.name)
      }
    })))
})
