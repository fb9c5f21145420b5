/** SPEC "Authentication" (key kinds by prefix, scopes, 403 naming the scope) and "Errors" (status table). */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Option } from "effect"
import { createHash } from "node:crypto"
import { generateToken, hashToken, parseToken } from "../../core/auth/apiKey.ts"
import { type KeyKind, type Principal, requireScope } from "../../core/auth/principal.ts"
import { allScopes, type Scope } from "../../core/auth/scopes.ts"
import {
  errorStatus,
  FailedPrecondition,
  Internal,
  InvalidArgument,
  isDomainError,
  NotFound,
  PermissionDenied,
  ResourceExhausted,
  Unauthenticated
} from "../../core/kernel/errors.ts"

const kind = fc.constantFrom<KeyKind>("live", "test")
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const secret = (n: number) =>
  fc.array(fc.constantFrom(...BASE62), { minLength: n, maxLength: n }).map((cs) => cs.join(""))
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex")

describe("API keys", () => {
  it.prop("generated tokens are well formed and parse with their kind", [kind], ([k]) => {
    const token = generateToken(k)
    assert.match(token, new RegExp(`^svc_${k}_[0-9A-Za-z]{40}$`))
    assert.deepStrictEqual(parseToken(token), Option.some({ kind: k, token }))
  })

  it("generated tokens do not repeat", () => {
    const tokens = new Set(Array.from({ length: 2000 }, () => generateToken("live")))
    assert.strictEqual(tokens.size, 2000)
  })

  it("every base62 character shows up in generated secrets", () => {
    const seen = new Set(Array.from({ length: 300 }, () => generateToken("test").slice("svc_test_".length)).join(""))
    assert.strictEqual(seen.size, 62)
  })

  it.prop("well-formed tokens parse whatever the secret", [kind, secret(40)], ([k, s]) => {
    assert.deepStrictEqual(parseToken(`svc_${k}_${s}`), Option.some({ kind: k, token: `svc_${k}_${s}` }))
  })

  it.prop(
    "a wrong prefix is rejected",
    [
      fc.constantFrom(
        "svc_prod_",
        "svc_Live_",
        "SVC_live_",
        "sk_live_",
        "svc-live-",
        "svc__",
        "svc_live",
        "svc_test__",
        "live_",
        ""
      ),
      secret(40)
    ],
    ([prefix, s]) => assert.isTrue(Option.isNone(parseToken(prefix + s)), prefix + s)
  )

  it.prop(
    "a secret of the wrong length is rejected",
    [kind, fc.integer({ min: 0, max: 80 }).filter((n) => n !== 40)],
    ([k, n]) => {
      const s = BASE62.repeat(2).slice(0, n)
      assert.isTrue(Option.isNone(parseToken(`svc_${k}_${s}`)))
    }
  )

  it.prop(
    "a non-base62 character anywhere in the secret is rejected",
    [kind, secret(40), fc.nat({ max: 39 }), fc.constantFrom("-", "_", " ", "+", "/", "=", ".", "é", "\n", "\u0000")],
    ([k, s, i, bad]) => assert.isTrue(Option.isNone(parseToken(`svc_${k}_${s.slice(0, i)}${bad}${s.slice(i + 1)}`)))
  )

  it("surrounding whitespace or a Bearer prefix is not stripped here", () => {
    const token = generateToken("live")
    for (const t of [` ${token}`, `${token} `, `Bearer ${token}`, `${token}\n`]) {
      assert.isTrue(Option.isNone(parseToken(t)))
    }
  })

  it.effect("the hash is the lower-case hex SHA-256 of the whole token, and stable", () =>
    Effect.gen(function*() {
      for (const k of ["live", "test"] as const) {
        const token = generateToken(k)
        const h = yield* hashToken(token)
        assert.match(h, /^[0-9a-f]{64}$/)
        assert.strictEqual(h, sha256(token))
        assert.strictEqual(yield* hashToken(token), h)
      }
      assert.strictEqual(yield* hashToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }))

  it.effect("different tokens hash differently (the kind is part of the hash)", () =>
    Effect.gen(function*() {
      const live = generateToken("live")
      const asTest = live.replace("svc_live_", "svc_test_")
      assert.notStrictEqual(yield* hashToken(live), yield* hashToken(asTest))
    }))
})

const principal = (scopes: ReadonlyArray<Scope>): Principal => ({
  workspaceId: "00000000-0000-4000-8000-000000000001",
  keyId: "00000000-0000-4000-8000-000000000002",
  kind: "test",
  scopes: new Set(scopes)
})

describe("scopes", () => {
  it("the scope list is exactly SPEC's ten", () => {
    assert.deepStrictEqual([...allScopes].sort(), [
      "agent:manage",
      "calls:place",
      "contacts:read",
      "contacts:write",
      "conversations:read",
      "conversations:write",
      "messages:send",
      "numbers:manage",
      "numbers:read",
      "webhooks:manage"
    ])
  })

  it.prop("requireScope passes with the scope and fails naming it without", [
    fc.subarray([...allScopes]),
    fc.constantFrom(...allScopes)
  ], ([held, wanted]) => {
    const result = Effect.runSync(Effect.either(requireScope(principal(held), wanted)))
    if (held.includes(wanted)) {
      assert.isTrue(Either.isRight(result))
    } else {
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.instanceOf(result.left, PermissionDenied)
        assert.include(result.left.message, wanted)
      }
    }
  })
})

describe("errors", () => {
  it("each error kind maps to SPEC's status and code", () => {
    const table = [
      [new InvalidArgument({ message: "m" }), 400, "invalid_argument"],
      [new Unauthenticated({ message: "m" }), 401, "unauthenticated"],
      [new PermissionDenied({ message: "m" }), 403, "permission_denied"],
      [new NotFound({ message: "m" }), 404, "not_found"],
      [new FailedPrecondition({ message: "m" }), 409, "failed_precondition"],
      [new ResourceExhausted({ message: "m", retryAfterSeconds: 3 }), 429, "resource_exhausted"],
      [new Internal({ message: "m" }), 500, "internal"]
    ] as const
    assert.strictEqual(Object.keys(errorStatus).length, table.length)
    for (const [error, status, code] of table) {
      assert.isTrue(isDomainError(error))
      assert.deepStrictEqual(errorStatus[error._tag], { status, code })
    }
  })

  it("isDomainError rejects look-alikes", () => {
    for (
      const u of [null, undefined, "NotFound", { _tag: "Boom" }, { _tag: 404 }, new Error("x"), { _tag: "toString" }, {
        _tag: "constructor"
      }, { _tag: "__proto__" }]
    ) {
      assert.isFalse(isDomainError(u), String(u))
    }
  })
})
