/**
 * The contract of the sign-in link and session store, run unchanged against memory, PGlite and a
 * real Postgres: links read back through `redeemLink` once, never after their expiry, and are
 * counted per email from a time; sessions read back exactly, are touched, moved to another
 * membership and removed; a removed member's sessions are gone.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import type { MemberRecord } from "../../core/members/model.ts"
import { type SessionRecord, SessionStore, type SignInLink } from "../../core/members/sessions.ts"
import { MemberStore } from "../../core/members/store.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = SessionStore | MemberStore | WorkspaceStore

const newMember = (email = `m-${uuid()}@example.com`) =>
  Effect.gen(function*() {
    const workspaceId = uuid()
    yield* (yield* WorkspaceStore).insert({
      id: workspaceId,
      name: "Sessions",
      billing: defaultBilling,
      ...defaultTexting,
      createdAt: ts(0)
    })
    const member: MemberRecord = {
      id: uuid(),
      workspaceId,
      email,
      name: "Ada",
      role: "owner",
      phone: null,
      createdAt: ts(1)
    }
    assert.isTrue(yield* (yield* MemberStore).insert(member))
    return member
  })

const linkOf = (email: string, patch: Partial<SignInLink> = {}): SignInLink => ({
  hash: uuid(),
  email,
  createdAt: ts(10),
  expiresAt: ts(20),
  usedAt: null,
  ...patch
})

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("a link is redeemed once, before its expiry only", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const email = `l-${uuid()}@example.com`
        const link = linkOf(email)
        yield* store.insertLink(link)
        assert.isTrue(Option.isNone(yield* store.redeemLink(link.hash, ts(20))))
        assert.deepStrictEqual(Option.getOrNull(yield* store.redeemLink(link.hash, ts(15))), {
          ...link,
          usedAt: ts(15)
        })
        assert.isTrue(Option.isNone(yield* store.redeemLink(link.hash, ts(16))))
        assert.isTrue(Option.isNone(yield* store.redeemLink(uuid(), ts(11))))
      }))

    it.effect("links are counted per email from a time", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const email = `c-${uuid()}@example.com`
        yield* store.insertLink(linkOf(email, { createdAt: ts(10) }))
        yield* store.insertLink(linkOf(email, { createdAt: ts(12) }))
        yield* store.insertLink(linkOf(`other-${email}`, { createdAt: ts(12) }))
        assert.strictEqual(yield* store.countLinksSince(email, ts(10)), 2)
        assert.strictEqual(yield* store.countLinksSince(email, ts(11)), 1)
        assert.strictEqual(yield* store.countLinksSince(email, ts(13)), 0)
      }))

    it.effect("a session reads back exactly, is touched, moved and removed", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const member = yield* newMember()
        const other = yield* newMember(`o-${uuid()}@example.com`)
        const session: SessionRecord = {
          hash: uuid(),
          email: member.email,
          memberId: member.id,
          createdAt: ts(30),
          lastUsedAt: ts(30)
        }
        yield* store.insertSession(session)
        assert.deepStrictEqual(Option.getOrNull(yield* store.findSession(session.hash)), session)
        yield* store.touchSession(session.hash, ts(40))
        yield* store.setSessionMember(session.hash, other.id)
        assert.deepStrictEqual(Option.getOrNull(yield* store.findSession(session.hash)), {
          ...session,
          memberId: other.id,
          lastUsedAt: ts(40)
        })
        assert.isTrue(yield* store.removeSession(session.hash))
        assert.isFalse(yield* store.removeSession(session.hash))
        assert.isTrue(Option.isNone(yield* store.findSession(session.hash)))
      }))

    it.effect("a removed member's sessions are gone", () =>
      Effect.gen(function*() {
        const store = yield* SessionStore
        const member = yield* newMember()
        const hash = uuid()
        yield* store.insertSession({
          hash,
          email: member.email,
          memberId: member.id,
          createdAt: ts(30),
          lastUsedAt: ts(30)
        })
        assert.isTrue(yield* (yield* MemberStore).remove(member.id))
        assert.isTrue(Option.isNone(yield* store.findSession(hash)))
      }))
  })

contract("SessionStore: memory", MemoryStores.layer)

sqlContract({
  name: (db) => `SessionStore: ${db}`,
  adapter: (client) => sqlStores(client),
  suite: contract,
  database: "sessions"
})
