/**
 * SPEC "Pagination" + CONTRACT "Cursors": opaque, integrity-protected, bound to the query that made
 * them; any change, a filter mismatch or a stale cursor is `400 invalid_argument`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, TestClock } from "effect"
import { makeCursorCodec, type Position } from "../../core/kernel/pagination.ts"

const SECRET = new Uint8Array(32).fill(7)
const codec = makeCursorCodec(SECRET)
// One codec for the property runs (it.effect.prop would rebuild the test environment per run).
const shared = await Effect.runPromise(codec)

/** Runs an effectful property `numRuns` times against the shared codec. */
const property = <T>(arb: fc.Arbitrary<T>, f: (t: T) => Effect.Effect<void, unknown>, numRuns = 200) =>
  fc.assert(fc.asyncProperty(arb, (t) => Effect.runPromise(f(t))), { numRuns })

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const position: fc.Arbitrary<Position> = fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.integer()), {
  minLength: 1,
  maxLength: 3
})
const scope = fc.string({ maxLength: 60 })

/** Fails the test unless `decode` rejected the cursor with InvalidArgument. */
const expectInvalid = (result: Either.Either<Position, { readonly _tag: string }>, cursor: string) => {
  assert.isTrue(Either.isLeft(result), `modified cursor was accepted: ${JSON.stringify(cursor)}`)
  if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "InvalidArgument")
}

type Mutation =
  | { readonly kind: "replace"; readonly at: number; readonly char: string }
  | { readonly kind: "flip"; readonly at: number; readonly bit: number }
  | { readonly kind: "truncate"; readonly keep: number }
  | { readonly kind: "append"; readonly suffix: string }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant("replace" as const),
    at: fc.nat(),
    char: fc.oneof(
      fc.constantFrom(...B64URL, ".", "=", "+", "/"),
      fc.string({ minLength: 1, maxLength: 1, unit: "grapheme" })
    )
  }),
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant("truncate" as const), keep: fc.nat() }),
  fc.record({ kind: fc.constant("append" as const), suffix: fc.string({ minLength: 1, maxLength: 8 }) })
)

/** Applies a mutation; returns null when it would leave the cursor unchanged. */
const mutate = (cursor: string, m: Mutation): string | null => {
  switch (m.kind) {
    case "replace": {
      const i = m.at % cursor.length
      return cursor[i] === m.char ? null : cursor.slice(0, i) + m.char + cursor.slice(i + 1)
    }
    case "flip": {
      const i = m.at % cursor.length
      return cursor.slice(0, i) + String.fromCharCode(cursor.charCodeAt(i) ^ (1 << m.bit)) + cursor.slice(i + 1)
    }
    case "truncate":
      return cursor.slice(0, m.keep % cursor.length)
    case "append":
      return cursor + m.suffix
  }
}

describe("cursor codec", () => {
  it("decodes what it encoded, under the same scope", () =>
    property(fc.record({ scope, position }), ({ position, scope }) =>
      Effect.gen(function*() {
        const c = shared
        const cursor = yield* c.encode(scope, position)
        assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
        assert.deepStrictEqual(yield* c.decode(scope, cursor), position)
      })))

  it("rejects any modification (replace, bit flip, truncate, append) with InvalidArgument", () =>
    property(
      fc.record({ scope, position, m: mutation }),
      ({ m, position, scope }) =>
        Effect.gen(function*() {
          const c = shared
          const cursor = yield* c.encode(scope, position)
          const modified = mutate(cursor, m)
          if (modified === null || modified === cursor) return
          expectInvalid(yield* Effect.either(c.decode(scope, modified)), modified)
        }),
      1000
    ))

  // Exhaustive over the last characters of each part, where base64 padding bits live: a random
  // position rarely lands there, and a lenient decoder accepts some of those edits.
  it.effect("rejects every base64url replacement of the characters at the ends of each part", () =>
    Effect.gen(function*() {
      const c = yield* codec
      const cursor = yield* c.encode("contacts:ws:q", [
        "2024-05-06T07:08:09.010Z",
        "2b5f7f0e-8a1d-4a57-9e3b-6e2f7a0c1d2e"
      ])
      const dot = cursor.indexOf(".")
      const near = (i: number) => i < 4 || Math.abs(i - dot) <= 4 || i >= cursor.length - 4
      for (let i = 0; i < cursor.length; i++) {
        if (!near(i)) continue
        for (const ch of B64URL + ".") {
          if (ch === cursor[i]) continue
          const modified = cursor.slice(0, i) + ch + cursor.slice(i + 1)
          expectInvalid(yield* Effect.either(c.decode("contacts:ws:q", modified)), modified)
        }
      }
    }))

  it("decodes only under its own scope", () =>
    property(fc.record({ a: scope, b: scope, position }), ({ a, b, position }) =>
      Effect.gen(function*() {
        if (a === b) return
        const cursor = yield* shared.encode(a, position)
        expectInvalid(yield* Effect.either(shared.decode(b, cursor)), cursor)
      })))

  it.effect("scopes differing only by case or a trailing space are different scopes", () =>
    Effect.gen(function*() {
      const c = yield* codec
      const cursor = yield* c.encode("contacts:w:ada", [1])
      for (const other of ["contacts:w:Ada", "contacts:w:ada ", "contacts:w:", "contacts:w:ad"]) {
        expectInvalid(yield* Effect.either(c.decode(other, cursor)), cursor)
      }
    }))

  it.effect("a cursor signed with another secret is rejected", () =>
    Effect.gen(function*() {
      const mine = yield* codec
      const theirs = yield* makeCursorCodec(new Uint8Array(32).fill(8))
      const cursor = yield* theirs.encode("s", ["x"])
      expectInvalid(yield* Effect.either(mine.decode("s", cursor)), cursor)
    }))

  it.effect("garbage is rejected, never a defect", () =>
    Effect.gen(function*() {
      const c = yield* codec
      for (const garbage of ["", ".", "..", "abc", "abc.def", "a.b.c", "eyJzIjoicyJ9.", "%%%.###", "x".repeat(5000)]) {
        expectInvalid(yield* Effect.either(c.decode("s", garbage)), garbage)
      }
    }))

  it("arbitrary strings are rejected", () =>
    property(fc.string({ maxLength: 200 }), (garbage) =>
      Effect.gen(function*() {
        expectInvalid(yield* Effect.either(shared.decode("s", garbage)), garbage)
      })))

  it.effect("an explicit maxAgeMs: valid up to the limit, expired one millisecond after", () =>
    Effect.gen(function*() {
      const c = yield* makeCursorCodec(SECRET, 1_000)
      const cursor = yield* c.encode("s", ["p"])
      yield* TestClock.adjust("1000 millis")
      assert.deepStrictEqual(yield* c.decode("s", cursor), ["p"])
      yield* TestClock.adjust("1 millis")
      expectInvalid(yield* Effect.either(c.decode("s", cursor)), cursor)
      // a cursor issued now is fine again
      const fresh = yield* c.encode("s", ["p"])
      assert.deepStrictEqual(yield* c.decode("s", fresh), ["p"])
    }))

  it.effect("the default lifetime is 24 hours", () =>
    Effect.gen(function*() {
      const c = yield* codec
      const cursor = yield* c.encode("s", ["p"])
      yield* TestClock.adjust("23 hours")
      assert.deepStrictEqual(yield* c.decode("s", cursor), ["p"])
      yield* TestClock.adjust("1 hours")
      yield* TestClock.adjust("1 millis")
      expectInvalid(yield* Effect.either(c.decode("s", cursor)), cursor)
    }))
})
