/**
 * The contract of the member store, run unchanged against memory, PGlite and a real Postgres: a
 * member reads back exactly (a null phone, timestamps to the millisecond); an email is a member of
 * a workspace at most once, on insert and on update, yet may be a member of several workspaces;
 * lists are oldest first (then id); findByEmail crosses workspaces; remove answers whether there
 * was one; and a rolled-back transaction leaves nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import type { MemberRecord } from "../../core/members/model.ts"
import { MemberStore } from "../../core/members/store.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = MemberStore | WorkspaceStore | Transactor

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({
    id,
    name: "Members",
    billing: defaultBilling,
    ...defaultTexting,
    createdAt: ts(0)
  })
  return id
})

const memberOf = (workspaceId: string, patch: Partial<MemberRecord> = {}): MemberRecord => ({
  id: uuid(),
  workspaceId,
  email: `m-${uuid()}@example.com`,
  name: "Ada Lovelace",
  role: "member",
  phone: null,
  createdAt: ts(10),
  ...patch
})

const ids = (rs: ReadonlyArray<MemberRecord>) => rs.map((r) => r.id)

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("a member reads back exactly; the same email again in the workspace is refused and changes nothing", () =>
      Effect.gen(function*() {
        const store = yield* MemberStore
        const ws = yield* newWorkspace
        const ada = memberOf(ws, { role: "owner", phone: "+14155550101", name: "Ada ✓ \"Countess\"" })
        const grace = memberOf(ws, { createdAt: ts(11) })
        assert.isTrue(Option.isNone(yield* store.get(ada.id)))
        assert.isTrue(yield* store.insert(ada))
        assert.isTrue(yield* store.insert(grace))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ada.id)), ada)
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(grace.id)), grace)

        const again = memberOf(ws, { email: ada.email, name: "Impostor", role: "admin", createdAt: ts(12) })
        assert.isFalse(yield* store.insert(again))
        assert.isTrue(Option.isNone(yield* store.get(again.id)))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ada.id)), ada)
        assert.deepStrictEqual(yield* store.list(ws), [ada, grace])
      }))

    it.effect("the same email is a member of two workspaces; findByEmail finds both, oldest first", () =>
      Effect.gen(function*() {
        const store = yield* MemberStore
        const a = yield* newWorkspace
        const b = yield* newWorkspace
        const email = `both-${uuid()}@example.com`
        const inB = memberOf(b, { email, role: "owner", createdAt: ts(20) })
        const inA = memberOf(a, { email, role: "member", createdAt: ts(21) })
        assert.isTrue(yield* store.insert(inB))
        assert.isTrue(yield* store.insert(inA))
        assert.deepStrictEqual(yield* store.findByEmail(email), [inB, inA])
        assert.deepStrictEqual(yield* store.list(a), [inA])
        assert.deepStrictEqual(yield* store.list(b), [inB])
        assert.deepStrictEqual(yield* store.findByEmail(`nobody-${uuid()}@example.com`), [])
        // Emails are stored lower-cased by the service; the store matches them exactly.
        assert.deepStrictEqual(yield* store.findByEmail(email.toUpperCase()), [])
      }))

    it.effect("lists are oldest first, then by id; other workspaces' members never show", () =>
      Effect.gen(function*() {
        const store = yield* MemberStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const [low, high] = [uuid(), uuid()].sort()
        const late = memberOf(ws, { createdAt: ts(33) })
        const tieHigh = memberOf(ws, { id: high!, createdAt: ts(31) })
        const tieLow = memberOf(ws, { id: low!, createdAt: ts(31) })
        const early = memberOf(ws, { createdAt: ts(30) })
        for (const m of [late, tieHigh, tieLow, early]) assert.isTrue(yield* store.insert(m))
        assert.isTrue(yield* store.insert(memberOf(other, { createdAt: ts(29) })))
        assert.deepStrictEqual(ids(yield* store.list(ws)), [early.id, tieLow.id, tieHigh.id, late.id])
        assert.deepStrictEqual(yield* store.list(yield* newWorkspace), [])
      }))

    it.effect("update rewrites the member, refused when the email is another member's in the workspace", () =>
      Effect.gen(function*() {
        const store = yield* MemberStore
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const ada = memberOf(ws, { role: "owner" })
        const grace = memberOf(ws, { createdAt: ts(11) })
        const elsewhere = memberOf(other)
        for (const m of [ada, grace, elsewhere]) assert.isTrue(yield* store.insert(m))

        const changed = { ...grace, name: "Grace Hopper", role: "admin" as const, phone: "+14155550102" }
        assert.isTrue(yield* store.update(changed))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(grace.id)), changed)

        // Ada's email is taken in this workspace: nothing changes.
        assert.isFalse(yield* store.update({ ...changed, email: ada.email, name: "Clash" }))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(grace.id)), changed)
        // Another workspace's member's email is free here; keeping one's own email is no clash.
        const moved = { ...changed, email: elsewhere.email, phone: null }
        assert.isTrue(yield* store.update(moved))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(grace.id)), moved)
        assert.deepStrictEqual(yield* store.findByEmail(elsewhere.email), [elsewhere, moved])
        assert.deepStrictEqual(yield* store.findByEmail(grace.email), [])
        // The email it left is free again.
        assert.isTrue(yield* store.insert(memberOf(ws, { email: grace.email, createdAt: ts(12) })))
        // An unknown member is not updated (and not created).
        const ghost = memberOf(ws)
        assert.isFalse(yield* store.update(ghost))
        assert.isTrue(Option.isNone(yield* store.get(ghost.id)))
      }))

    it.effect("remove answers whether there was one; the email is then free in that workspace", () =>
      Effect.gen(function*() {
        const store = yield* MemberStore
        const ws = yield* newWorkspace
        const ada = memberOf(ws)
        const kept = memberOf(ws, { createdAt: ts(11) })
        assert.isTrue(yield* store.insert(ada))
        assert.isTrue(yield* store.insert(kept))
        assert.isTrue(yield* store.remove(ada.id))
        assert.isFalse(yield* store.remove(ada.id))
        assert.isFalse(yield* store.remove(uuid()))
        assert.isTrue(Option.isNone(yield* store.get(ada.id)))
        assert.deepStrictEqual(yield* store.list(ws), [kept])
        assert.deepStrictEqual(yield* store.findByEmail(ada.email), [])
        const back = memberOf(ws, { email: ada.email, createdAt: ts(12) })
        assert.isTrue(yield* store.insert(back))
        assert.deepStrictEqual(yield* store.list(ws), [kept, back])
      }))

    it.effect("a rolled-back transaction leaves no insert, update or removal", () =>
      Effect.gen(function*() {
        const store = yield* MemberStore
        const tx = yield* Transactor
        const ws = yield* newWorkspace
        const kept = memberOf(ws)
        const renamed = memberOf(ws, { createdAt: ts(11) })
        assert.isTrue(yield* store.insert(kept))
        assert.isTrue(yield* store.insert(renamed))
        const added = memberOf(ws, { createdAt: ts(12) })
        const rolledBack = yield* Effect.exit(
          tx.withTransaction(
            Effect.gen(function*() {
              assert.isTrue(yield* store.insert(added))
              assert.isTrue(yield* store.update({ ...renamed, name: "Renamed" }))
              assert.isTrue(yield* store.remove(kept.id))
              return yield* Effect.fail("boom")
            })
          )
        )
        assert.isTrue(rolledBack._tag === "Failure")
        assert.deepStrictEqual(yield* store.list(ws), [kept, renamed])
      }))
  })

contract("MemberStore: memory", MemoryStores.layer)

sqlContract({
  name: (db) => `MemberStore: ${db}`,
  adapter: (client) => sqlStores(client),
  suite: contract,
  database: "members"
})
