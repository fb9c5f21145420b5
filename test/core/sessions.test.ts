/**
 * core/members/sessions.ts on the memory stores with Effect's TestClock: a link works within 15
 * minutes and once; a session ends after 30 days without use, and use keeps it; a removed member
 * is signed out; the mail names the link; switching needs a membership of that email.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, TestClock } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { layerOutbox } from "../../core/mail/mailer.ts"
import { MailOutbox } from "../../core/mail/store.ts"
import type { MemberRecord } from "../../core/members/model.ts"
import * as Sessions from "../../core/members/sessions.ts"
import { MemberStore } from "../../core/members/store.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"

const TestLayer = Sessions.layer.pipe(
  Layer.provideMerge(layerOutbox),
  Layer.provideMerge(Layer.succeed(Sessions.ConsoleOrigin, { baseUrl: "https://switchboard.example/" })),
  Layer.provideMerge(MemoryStores.layer)
)

const member = (email: string, workspaceName = "Acme") =>
  Effect.gen(function*() {
    const workspaceId = crypto.randomUUID()
    yield* (yield* WorkspaceStore).insert({
      id: workspaceId,
      name: workspaceName,
      billing: defaultBilling,
      ...defaultTexting,
      createdAt: new Date(0).toISOString()
    })
    const record: MemberRecord = {
      id: crypto.randomUUID(),
      workspaceId,
      email,
      name: "Ada",
      role: "member",
      phone: null,
      createdAt: new Date(yield* TestClock.currentTimeMillis).toISOString()
    }
    yield* (yield* MemberStore).insert(record)
    return record
  })

/** Asks for a link and reads it back from the mail, as the person would. */
const mailedToken = (m: MemberRecord) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions.Sessions
    yield* sessions.requestLink(` ${m.email.toUpperCase()} `)
    const mail = yield* (yield* MailOutbox).list(m.workspaceId)
    const text = mail[0]!.text
    assert.match(text, /https:\/\/switchboard\.example\/app\/sign-in\//)
    return /\/app\/sign-in\/([A-Za-z0-9_-]{43})/.exec(text)![1]!
  })

const failsWith = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>, tag: string) =>
  Effect.map(Effect.either(self), (r) => {
    assert.isTrue(Either.isLeft(r) && r.left._tag === tag, `expected ${tag}`)
  })

describe("sessions", () => {
  it.effect("a link works within 15 minutes, once", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions.Sessions
      const m = yield* member("ada@example.com")
      const late = yield* mailedToken(m)
      yield* TestClock.adjust("15 minutes")
      yield* failsWith(sessions.redeem(late), "InvalidArgument")
      yield* TestClock.adjust("1 minute")
      const fresh = yield* mailedToken(m)
      yield* TestClock.adjust("14 minutes")
      const session = yield* sessions.redeem(fresh)
      yield* failsWith(sessions.redeem(fresh), "InvalidArgument")
      const who = yield* sessions.authenticate(session)
      assert.strictEqual(who.member.id, m.id)
      assert.deepStrictEqual(who.principal.memberId, m.id)
      assert.strictEqual(who.principal.kind, "live")
      assert.isFalse(who.principal.scopes.has("webhooks:manage"))
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a session ends after 30 days without use; use keeps it", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions.Sessions
      const m = yield* member("grace@example.com")
      const kept = yield* sessions.redeem(yield* mailedToken(m))
      const idle = yield* sessions.redeem(yield* mailedToken(m))
      for (let day = 0; day < 3; day++) {
        yield* TestClock.adjust("20 days")
        yield* sessions.authenticate(kept)
      }
      yield* failsWith(sessions.authenticate(idle), "Unauthenticated")
      yield* TestClock.adjust("30 days")
      yield* TestClock.adjust("1 minute")
      yield* failsWith(sessions.authenticate(kept), "Unauthenticated")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a removed member is signed out, and a link mailed before no longer works", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions.Sessions
      const m = yield* member("linus@example.com")
      const session = yield* sessions.redeem(yield* mailedToken(m))
      const unused = yield* mailedToken(m)
      yield* (yield* MemberStore).remove(m.id)
      yield* failsWith(sessions.authenticate(session), "Unauthenticated")
      yield* failsWith(sessions.redeem(unused), "InvalidArgument")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("switching needs a membership of the same email", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions.Sessions
      const first = yield* member("alan@example.com", "First")
      yield* TestClock.adjust("1 second")
      const second = yield* member("alan@example.com", "Second")
      const stranger = yield* member("someone@example.com", "Third")
      const session = yield* sessions.redeem(yield* mailedToken(first))
      const who = yield* sessions.profile(yield* sessions.authenticate(session))
      assert.deepStrictEqual(who.workspace, { id: first.workspaceId, name: "First" })
      assert.deepStrictEqual(who.workspaces.map((w) => w.name), ["First", "Second"])
      const moved = yield* sessions.switchWorkspace(session, second.workspaceId)
      assert.strictEqual(moved.principal.workspaceId, second.workspaceId)
      assert.strictEqual((yield* sessions.authenticate(session)).member.id, second.id)
      yield* failsWith(sessions.switchWorkspace(session, stranger.workspaceId), "NotFound")
      yield* sessions.signOut(session)
      yield* failsWith(sessions.authenticate(session), "Unauthenticated")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an email that is no member's gets no mail", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions.Sessions
      const m = yield* member("known@example.com")
      yield* sessions.requestLink("unknown@example.com")
      assert.deepStrictEqual(yield* (yield* MailOutbox).list(m.workspaceId), [])
    }).pipe(Effect.provide(TestLayer)))
})
