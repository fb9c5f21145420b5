/**
 * The contract of the opt-out store, run unchanged against memory, PGlite and a real Postgres: an
 * opt-out reads back exactly (nulls, timestamps to the millisecond), a second insert for the phone
 * is refused and changes nothing, remove answers whether there was one, the list is newest first
 * (then phone, descending) with `after` paging and a `phone` filter, workspaces do not see each
 * other's opt-outs, and a rolled-back transaction leaves none.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import type { OptOutRecord } from "../../core/optouts/model.ts"
import { OptOutStore } from "../../core/optouts/store.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { ts, uuid } from "./stores.contract.ts"

type Ports = OptOutStore | WorkspaceStore | Transactor

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({
    id,
    name: "Opt-outs",
    billing: defaultBilling,
    ...defaultTexting,
    createdAt: ts(0)
  })
  return id
})

const optOutOf = (workspaceId: string, phone: string, patch: Partial<OptOutRecord> = {}): OptOutRecord => ({
  workspaceId,
  phone,
  source: "keyword",
  keyword: "STOP",
  note: null,
  createdAt: ts(10),
  ...patch
})

const phones = (rs: ReadonlyArray<OptOutRecord>) => rs.map((r) => r.phone)

const contract = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("an opt-out reads back exactly; a second insert for the phone is refused and changes nothing", () =>
      Effect.gen(function*() {
        const store = yield* OptOutStore
        const ws = yield* newWorkspace
        const keyword = optOutOf(ws, "+14155550101", { keyword: "OPT OUT" })
        assert.isTrue(Option.isNone(yield* store.get(ws, keyword.phone)))
        assert.isTrue(yield* store.insert(keyword))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ws, keyword.phone)), keyword)

        assert.isFalse(
          yield* store.insert({ ...keyword, source: "api", keyword: null, note: "Called in", createdAt: ts(99) })
        )
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ws, keyword.phone)), keyword)

        const carrier = optOutOf(ws, "+14155550102", {
          source: "carrier",
          keyword: null,
          note: "Telnyx 40300: \"opted out\" ✓",
          createdAt: ts(11)
        })
        const api = optOutOf(ws, "+14155550103", { source: "api", keyword: null, note: null, createdAt: ts(12) })
        assert.isTrue(yield* store.insert(carrier))
        assert.isTrue(yield* store.insert(api))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ws, carrier.phone)), carrier)
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ws, api.phone)), api)
        assert.deepStrictEqual(
          yield* store.list({ workspaceId: ws, phone: null, limit: 10, after: null }),
          [api, carrier, keyword]
        )
      }))

    it.effect("remove answers whether there was one; the phone can then opt out again", () =>
      Effect.gen(function*() {
        const store = yield* OptOutStore
        const ws = yield* newWorkspace
        const first = optOutOf(ws, "+14155550111")
        const other = optOutOf(ws, "+14155550112")
        assert.isTrue(yield* store.insert(first))
        assert.isTrue(yield* store.insert(other))
        assert.isTrue(yield* store.remove(ws, first.phone))
        assert.isTrue(Option.isNone(yield* store.get(ws, first.phone)))
        assert.isFalse(yield* store.remove(ws, first.phone))
        assert.isFalse(yield* store.remove(ws, "+14155550199"))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ws, other.phone)), other)

        const again = { ...first, keyword: "REVOKE", createdAt: ts(20) }
        assert.isTrue(yield* store.insert(again))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ws, first.phone)), again)
      }))

    it.effect("list: newest first, then phone descending; `after` pages without gaps or repeats; `phone` filters", () =>
      Effect.gen(function*() {
        const store = yield* OptOutStore
        const ws = yield* newWorkspace
        // Three at one instant (ordered by phone, descending), others before and after, inserted out of order.
        const records = [
          optOutOf(ws, "+14155550121", { createdAt: ts(30) }),
          optOutOf(ws, "+14155550125", { createdAt: ts(31) }),
          optOutOf(ws, "+14155550122", { createdAt: ts(31) }),
          optOutOf(ws, "+14155550124", { createdAt: ts(31) }),
          optOutOf(ws, "+14155550123", { createdAt: ts(32), source: "carrier", keyword: null }),
          optOutOf(ws, "+14155550120", { createdAt: ts(29) })
        ]
        for (const r of records) assert.isTrue(yield* store.insert(r))
        const expected = [
          "+14155550123",
          "+14155550125",
          "+14155550124",
          "+14155550122",
          "+14155550121",
          "+14155550120"
        ]

        assert.deepStrictEqual(
          phones(yield* store.list({ workspaceId: ws, phone: null, limit: 50, after: null })),
          expected
        )
        assert.deepStrictEqual(
          phones(yield* store.list({ workspaceId: ws, phone: null, limit: 2, after: null })),
          expected.slice(0, 2)
        )

        for (const size of [1, 2, 4]) {
          const seen: Array<string> = []
          let after: { createdAt: string; phone: string } | null = null
          for (;;) {
            const page: ReadonlyArray<OptOutRecord> = yield* store.list({
              workspaceId: ws,
              phone: null,
              limit: size,
              after
            })
            assert.isAtMost(page.length, size)
            seen.push(...phones(page))
            const last = page[page.length - 1]
            if (page.length < size || last === undefined) break
            after = { createdAt: last.createdAt, phone: last.phone }
          }
          assert.deepStrictEqual(seen, expected, `pages of ${size}`)
        }

        // `after` inside the tie at ts(31): the rest of the tie, then the older ones.
        assert.deepStrictEqual(
          phones(
            yield* store.list({
              workspaceId: ws,
              phone: null,
              limit: 50,
              after: { createdAt: ts(31), phone: "+14155550124" }
            })
          ),
          ["+14155550122", "+14155550121", "+14155550120"]
        )

        const one = records[3]!
        assert.deepStrictEqual(yield* store.list({ workspaceId: ws, phone: one.phone, limit: 50, after: null }), [one])
        assert.deepStrictEqual(
          yield* store.list({
            workspaceId: ws,
            phone: one.phone,
            limit: 50,
            after: { createdAt: one.createdAt, phone: one.phone }
          }),
          []
        )
        assert.deepStrictEqual(
          yield* store.list({ workspaceId: ws, phone: "+14155550199", limit: 50, after: null }),
          []
        )
      }))

    it.effect("workspaces are isolated: the same phone opts out of each separately", () =>
      Effect.gen(function*() {
        const store = yield* OptOutStore
        const a = yield* newWorkspace
        const b = yield* newWorkspace
        const phone = "+14155550131"
        const inA = optOutOf(a, phone)
        assert.isTrue(yield* store.insert(inA))
        assert.isTrue(Option.isNone(yield* store.get(b, phone)))
        assert.deepStrictEqual(yield* store.list({ workspaceId: b, phone: null, limit: 50, after: null }), [])
        assert.deepStrictEqual(yield* store.list({ workspaceId: b, phone, limit: 50, after: null }), [])
        assert.isFalse(yield* store.remove(b, phone))

        const inB = optOutOf(b, phone, { source: "api", keyword: null, note: "By email", createdAt: ts(40) })
        assert.isTrue(yield* store.insert(inB))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(a, phone)), inA)
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(b, phone)), inB)
        assert.isTrue(yield* store.remove(a, phone))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(b, phone)), inB)
        assert.deepStrictEqual(yield* store.list({ workspaceId: a, phone: null, limit: 50, after: null }), [])
        assert.deepStrictEqual(yield* store.list({ workspaceId: b, phone: null, limit: 50, after: null }), [inB])
      }))

    it.effect("a rolled-back transaction leaves nothing: no insert, no removal", () =>
      Effect.gen(function*() {
        const store = yield* OptOutStore
        const tx = yield* Transactor
        const ws = yield* newWorkspace
        const kept = optOutOf(ws, "+14155550141")
        assert.isTrue(yield* store.insert(kept))
        const added = optOutOf(ws, "+14155550142")
        const rolledBack = yield* Effect.exit(
          tx.withTransaction(
            Effect.gen(function*() {
              assert.isTrue(yield* store.insert(added))
              assert.isTrue(yield* store.remove(ws, kept.phone))
              return yield* Effect.fail("boom")
            })
          )
        )
        assert.isTrue(rolledBack._tag === "Failure")
        assert.isTrue(Option.isNone(yield* store.get(ws, added.phone)))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(ws, kept.phone)), kept)
        assert.deepStrictEqual(yield* store.list({ workspaceId: ws, phone: null, limit: 50, after: null }), [kept])
      }))
  })

contract("OptOutStore: memory", MemoryStores.layer)

sqlContract({
  name: (db) => `OptOutStore: ${db}`,
  adapter: (client) => sqlStores(client),
  suite: contract,
  database: "opt_outs"
})
