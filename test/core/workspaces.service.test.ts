/** Workspaces, keys and numbers (CONTRACT "Admin API", first boot; SPEC "Authentication") over memory. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { createHash } from "node:crypto"
import { MemoryDb } from "../../adapters/memory/db.ts"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { parseToken } from "../../core/auth/apiKey.ts"
import { allScopes } from "../../core/auth/scopes.ts"
import { LedgerStore } from "../../core/billing/store.ts"
import type { DomainError } from "../../core/kernel/errors.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import { NumberStore, numberTypeOf } from "../../core/numbers/model.ts"
import { defaultBilling } from "../../core/workspaces/model.ts"
import * as Workspaces from "../../core/workspaces/service.ts"
import { ApiKeyStore } from "../../core/workspaces/store.ts"

const TestLayer = Workspaces.layer.pipe(Layer.provideMerge(MemoryStores.layer))
const run = <A, E>(self: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) => Effect.provide(self, TestLayer)

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex")

const failsWith = <R>(tag: DomainError["_tag"], self: Effect.Effect<unknown, DomainError, R>) =>
  Effect.gen(function*() {
    const result = yield* Effect.either(self)
    if (Either.isRight(result)) return assert.fail(`expected ${tag}, got success`)
    assert.strictEqual(result.left._tag, tag, result.left.message)
    return result.left
  })

describe("bootstrap", () => {
  it.effect("first boot creates one ready workspace and one all-scope test key, once", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const db = yield* MemoryDb
      const first = yield* ws.bootstrap()
      assert.isTrue(Option.isSome(first))
      const { key, workspace } = Option.getOrThrow(first)
      assert.strictEqual(workspace.name, "Default workspace")
      assert.deepStrictEqual(workspace.billing, { ...defaultBilling, identity: "verified", mobileVerified: true })
      assert.strictEqual(workspace.billing.plan, "standard")
      assert.isTrue(workspace.billing.trial)
      assert.strictEqual(key.kind, "test")
      assert.deepStrictEqual([...key.scopes].sort(), [...allScopes].sort())
      assert.deepStrictEqual(parseToken(key.token), Option.some({ kind: "test" as const, token: key.token }))
      assert.isTrue(Option.isNone(yield* ws.bootstrap()))
      assert.isTrue(Option.isNone(yield* ws.bootstrap()))
      assert.strictEqual(db.state.workspaces.size, 1)
      assert.strictEqual(db.state.keys.size, 1)
      // Its owner, whom the operator renames: the one member.
      const { owner } = Option.getOrThrow(first)
      assert.deepStrictEqual([...db.state.members.values()], [{ ...owner, workspaceId: workspace.id }])
      assert.deepStrictEqual({ ...owner, id: "", createdAt: "" }, {
        id: "",
        email: "owner@localhost",
        name: "Owner",
        role: "owner",
        phone: null,
        createdAt: ""
      })
      const principal = yield* ws.authenticate(key.token)
      assert.strictEqual(principal.workspaceId, workspace.id)
      assert.strictEqual(principal.kind, "test")
      assert.deepStrictEqual([...principal.scopes].sort(), [...allScopes].sort())
    })))

  it.effect("the key is announced before the workspace commits: an announcement that fails commits nothing, and the next boot announces a new key", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const db = yield* MemoryDb
      const announced: Array<string> = []
      const crashed = yield* Effect.flip(ws.bootstrap((first) => {
        announced.push(first.key.token)
        return Effect.fail("killed before the banner was out")
      }))
      assert.strictEqual(crashed, "killed before the banner was out")
      assert.strictEqual(db.state.workspaces.size, 0)
      assert.strictEqual(db.state.keys.size, 0)
      assert.strictEqual(db.state.members.size, 0)
      const first = Option.getOrThrow(yield* ws.bootstrap((f) => Effect.sync(() => announced.push(f.key.token))))
      assert.strictEqual(announced.length, 2)
      assert.strictEqual(announced[1], first.key.token)
      assert.notStrictEqual(announced[0], announced[1])
      assert.strictEqual((yield* ws.authenticate(first.key.token)).workspaceId, first.workspace.id)
      assert.strictEqual(db.state.workspaces.size, 1)
    })))

  it.effect("does nothing when a workspace already exists", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const db = yield* MemoryDb
      yield* ws.create({ name: "Existing" })
      assert.isTrue(Option.isNone(yield* ws.bootstrap()))
      assert.strictEqual(db.state.keys.size, 0)
      assert.strictEqual(db.state.members.size, 0)
    })))
})

describe("API keys", () => {
  it.effect("only the SHA-256 of a key is stored, never the token", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const db = yield* MemoryDb
      const w = yield* ws.create({ name: "W" })
      const created = yield* ws.createKey(w.id, { kind: "live", name: "server" })
      const stored = db.state.keys.get(created.id)!
      assert.isDefined(stored)
      assert.strictEqual(stored.hash, sha256(created.token))
      assert.notProperty(stored, "token")
      const secretPart = created.token.slice("svc_live_".length)
      const everything = JSON.stringify({
        keys: [...db.state.keys.values()],
        workspaces: [...db.state.workspaces.values()]
      })
      assert.notInclude(everything, secretPart)
      assert.deepStrictEqual(
        { ...stored },
        {
          id: created.id,
          workspaceId: w.id,
          kind: "live",
          scopes: [...allScopes],
          name: "server",
          hash: sha256(created.token),
          createdAt: created.createdAt,
          revokedAt: null
        }
      )
    })))

  it.effect("authenticate resolves a key to its workspace, kind and scopes", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const w = yield* ws.create({ name: "W" })
      const key = yield* ws.createKey(w.id, {
        kind: "live",
        scopes: ["contacts:read", "contacts:read", "numbers:read"]
      })
      assert.deepStrictEqual(key.scopes, ["contacts:read", "numbers:read"])
      assert.isNull(key.name)
      const p = yield* ws.authenticate(key.token)
      assert.deepStrictEqual({ ...p, scopes: [...p.scopes] }, {
        workspaceId: w.id,
        keyId: key.id,
        kind: "live",
        scopes: ["contacts:read", "numbers:read"]
      })
    })))

  it.effect("unknown, malformed and revoked keys are Unauthenticated", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const w = yield* ws.create({ name: "W" })
      const key = yield* ws.createKey(w.id, { kind: "test" })
      const unknown = `svc_test_${"A".repeat(40)}`
      for (
        const bad of [
          unknown,
          "",
          "svc_test_",
          "Bearer " + key.token,
          key.token + "x",
          key.token.replace("svc_test_", "svc_live_"),
          key.token.toUpperCase()
        ]
      ) {
        yield* failsWith("Unauthenticated", ws.authenticate(bad))
      }
      yield* ws.authenticate(key.token) // cached now
      yield* ws.revokeKey(key.id)
      yield* failsWith("Unauthenticated", ws.authenticate(key.token))
      yield* TestClock.adjust("1 hour")
      yield* failsWith("Unauthenticated", ws.authenticate(key.token))
    })))

  it.effect("a revocation by another process is honoured within KEY_CACHE_MS", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      // a second service instance over the same database, as another server process would be
      const elsewhere = yield* Workspaces.make
      const w = yield* ws.create({ name: "W" })
      const key = yield* ws.createKey(w.id, { kind: "live" })
      yield* ws.authenticate(key.token)
      yield* elsewhere.revokeKey(key.id)
      yield* TestClock.adjust(Workspaces.KEY_CACHE_MS)
      yield* failsWith("Unauthenticated", ws.authenticate(key.token))
    })))

  it.effect("revoking keeps the first revocation time; unknown or malformed ids are NotFound", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const keys = yield* ApiKeyStore
      const w = yield* ws.create({ name: "W" })
      const key = yield* ws.createKey(w.id, { kind: "live" })
      yield* TestClock.adjust("1 minute")
      const first = yield* ws.revokeKey(key.id)
      assert.strictEqual(first.revokedAt, "1970-01-01T00:01:00.000Z")
      yield* TestClock.adjust("1 minute")
      const second = yield* ws.revokeKey(key.id)
      assert.strictEqual(second.revokedAt, first.revokedAt)
      assert.strictEqual(Option.getOrThrow(yield* keys.findByHash(sha256(key.token))).revokedAt, first.revokedAt)
      yield* failsWith("NotFound", ws.revokeKey(crypto.randomUUID()))
      yield* failsWith("NotFound", ws.revokeKey("not-a-uuid"))
    })))

  it.effect("keys for an unknown or malformed workspace are NotFound", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const db = yield* MemoryDb
      yield* failsWith("NotFound", ws.createKey(crypto.randomUUID(), { kind: "live" }))
      yield* failsWith("NotFound", ws.createKey("nope", { kind: "live" }))
      assert.strictEqual(db.state.keys.size, 0)
    })))
})

describe("workspaces", () => {
  it.effect("create applies CONTRACT's default billing; update merges billing fields", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const w = yield* ws.create({ name: "Acme", billing: { plan: null } })
      assert.deepStrictEqual(w.billing, {
        plan: null,
        trial: true,
        subscription: "active",
        paymentMethod: false,
        identity: "none",
        mobileVerified: false,
        billedVia: "card",
        cardDeclines: false,
        ownerEmail: null
      })
      const u = yield* ws.update(w.id, { billing: { paymentMethod: true } })
      assert.deepStrictEqual(u, { ...w, billing: { ...w.billing, paymentMethod: true } })
      const renamed = yield* ws.update(w.id, { name: "Acme 2" })
      assert.deepStrictEqual(renamed, { ...u, name: "Acme 2" })
      assert.deepStrictEqual(yield* ws.get(w.id), renamed)
      yield* failsWith("NotFound", ws.get(crypto.randomUUID()))
      yield* failsWith("NotFound", ws.get("x"))
      yield* failsWith("NotFound", ws.update(crypto.randomUUID(), { name: "n" }))
    })))
})

describe("numbers", () => {
  it("a +1 8xx toll-free prefix decides the type", () => {
    for (
      const n of [
        "+18005550100",
        "+18335550100",
        "+18445550100",
        "+18555550100",
        "+18665550100",
        "+18775550100",
        "+18885550100"
      ]
    ) {
      assert.strictEqual(numberTypeOf(n), "toll_free", n)
    }
    for (const n of ["+18105550100", "+18995550100", "+14155550100", "+448005550100"]) {
      assert.strictEqual(numberTypeOf(n), "local", n)
    }
  })

  it.effect("addNumber normalizes, types, and refuses a taken number", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const numbers = yield* NumberStore
      const a = yield* ws.create({ name: "A" })
      const b = yield* ws.create({ name: "B" })
      const local = yield* ws.addNumber(a.id, { e164: "(415) 555-0100" })
      assert.deepStrictEqual(local, {
        e164: "+14155550100" as E164,
        type: "local",
        voiceMode: "app",
        agentId: null,
        forwardTo: null,
        assignedUserId: null,
        status: "active"
      })
      const tollFree = yield* ws.addNumber(a.id, { e164: "+18005550100", type: "local" })
      assert.strictEqual(tollFree.type, "toll_free")
      const e = yield* failsWith("FailedPrecondition", ws.addNumber(b.id, { e164: "+1 415 555 0100" }))
      assert.include(e.message, "+14155550100")
      yield* failsWith("FailedPrecondition", ws.addNumber(a.id, { e164: "+14155550100" }))
      yield* failsWith("InvalidArgument", ws.addNumber(a.id, { e164: "call me" }))
      yield* failsWith("NotFound", ws.addNumber(crypto.randomUUID(), { e164: "+14155550199" }))
      assert.deepStrictEqual((yield* numbers.list(a.id)).map((n) => n.e164), ["+14155550100", "+18005550100"])
      assert.deepStrictEqual(yield* numbers.list(b.id), [])
    })))

  it.effect("removeNumber takes a seeded number, normalized; refuses one with a ledger charge (bought), a foreign or unknown one", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const ledger = yield* LedgerStore
      const a = yield* ws.create({ name: "A" })
      const b = yield* ws.create({ name: "B" })
      const seeded = yield* ws.addNumber(a.id, { e164: "+14155550100" })
      const bought = yield* ws.addNumber(a.id, { e164: "+14155550101" })
      yield* ledger.append(a.id, [{
        kind: "local_number",
        description: "Local number +14155550101",
        amountCents: 500,
        numberE164: bought.e164
      }], new Date().toISOString())
      yield* failsWith("NotFound", ws.removeNumber(b.id, seeded.e164))
      yield* failsWith("NotFound", ws.removeNumber(a.id, "not a number"))
      yield* failsWith("NotFound", ws.removeNumber(crypto.randomUUID(), seeded.e164))
      const refused = yield* failsWith("FailedPrecondition", ws.removeNumber(a.id, bought.e164))
      assert.include(refused.message, "bought")
      assert.deepStrictEqual(yield* ws.removeNumber(a.id, "(415) 555-0100"), seeded)
      yield* failsWith("NotFound", ws.removeNumber(a.id, seeded.e164))
      assert.deepStrictEqual(yield* ws.listNumbers(a.id), [bought])
    })))

  it.effect("listKeys and getKey show a key without its hash; unknown workspaces and keys are NotFound", () =>
    run(Effect.gen(function*() {
      const ws = yield* Workspaces.Workspaces
      const a = yield* ws.create({ name: "A" })
      const created = yield* ws.createKey(a.id, { kind: "live", scopes: ["contacts:read"], name: "crm" })
      const view = {
        id: created.id,
        workspaceId: a.id,
        kind: "live" as const,
        scopes: ["contacts:read" as const],
        name: "crm",
        createdAt: created.createdAt,
        revokedAt: null
      }
      assert.deepStrictEqual(yield* ws.listKeys(a.id), [view])
      assert.deepStrictEqual(yield* ws.getKey(created.id), view)
      yield* failsWith("NotFound", ws.getKey(crypto.randomUUID()))
      yield* failsWith("NotFound", ws.getKey("nope"))
      yield* failsWith("NotFound", ws.listKeys(crypto.randomUUID()))
    })))
})
