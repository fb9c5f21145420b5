/**
 * Marked statements on the embedded database (adapters/pglite/prepared.ts): a statement marked
 * PREPARED is parsed once under a name and others are not; its parameters and rows come out as the
 * unnamed path gives them, type by type; a marked `*` projection is refused; an error inside a
 * transaction rolls back and the connection goes on; a statement PGlite dropped fails once and is
 * parsed again.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { PREPARED } from "../../adapters/sql/prepared.ts"
import { freshPglite } from "../support/pglite.ts"
import { recoversFromDeallocate } from "../support/prepared.ts"

const Db = Layer.merge(freshPglite("empty"), Layer.setTracerEnabled(false))

const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, tags jsonb, at timestamptz, big bigint, amount numeric, flags int[], ok boolean, ref uuid)`
  yield* sql`INSERT INTO items VALUES (1, 'one', '{"a":[1,2]}', '2026-11-25T01:02:03.456Z', 9007199254740993, 12.50, '{1,2}', true, '0193a1b2-0000-7000-8000-000000000001'), (2, 'two', NULL, NULL, NULL, NULL, NULL, NULL, NULL)`
  return sql
})

const preparedHere = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`
)

describe("marked statements (PGlite)", () => {
  it.effect("a marked statement is parsed once under a name; others run unnamed", () =>
    Effect.gen(function*() {
      const sql = yield* setup
      for (const id of [1, 2, 1]) {
        const rows = yield* sql<{ name: string }>`${sql.literal(PREPARED)} SELECT name FROM items WHERE id = ${id}`
        assert.deepStrictEqual(rows, [{ name: id === 1 ? "one" : "two" }])
      }
      yield* sql`SELECT name FROM items WHERE id = ${1}`
      const prepared = yield* preparedHere
      assert.deepStrictEqual(prepared.map((p) => p.name), ["switchboard_0"])
      assert.strictEqual(prepared[0]!.statement, `${PREPARED} SELECT name FROM items WHERE id = $1`)
    }).pipe(Effect.provide(Db)))

  it.effect("parameters and rows as the unnamed path gives them, type by type, objects and arrays too", () =>
    Effect.gen(function*() {
      const sql = yield* setup
      const columns = sql.literal("id, name, tags, at, big, amount, flags, ok, ref")
      for (const id of [1, 2]) {
        const named = yield* sql`${sql.literal(PREPARED)} SELECT ${columns} FROM items WHERE id = ${id}`
        const unnamed = yield* sql`SELECT ${columns} FROM items WHERE id = ${id}`
        assert.deepStrictEqual(named, unnamed)
        const namedValues = yield* sql`${sql.literal(PREPARED)} SELECT ${columns} FROM items WHERE id = ${id}`.values
        assert.deepStrictEqual(namedValues, yield* sql`SELECT ${columns} FROM items WHERE id = ${id}`.values)
      }
      const row =
        (yield* sql<{ at: Date; big: string; tags: unknown }>`${
          sql.literal(PREPARED)
        } SELECT at, big, tags FROM items WHERE id = ${1}`)[0]!
      assert.instanceOf(row.at, Date)
      assert.strictEqual(row.big, "9007199254740993")
      assert.deepStrictEqual(row.tags, { a: [1, 2] })
      // Parameters: an object for jsonb, a Date and an ISO string for timestamptz, null, a bigint as a string.
      const written = yield* sql<{ id: number }>`${
        sql.literal(PREPARED)
      } INSERT INTO items (id, name, tags, at, big, ok) VALUES (${3}, ${"three"}, ${
        JSON.stringify({ b: "c'd" })
      }::jsonb, ${new Date("2026-01-02T03:04:05.000Z")}, ${"12345678901234567"}, ${null}) RETURNING id`
      assert.deepStrictEqual(written, [{ id: 3 }])
      const back = yield* sql`SELECT tags, at, big, ok FROM items WHERE id = 3`
      assert.deepStrictEqual(back, [{
        tags: { b: "c'd" },
        at: new Date("2026-01-02T03:04:05.000Z"),
        big: "12345678901234567",
        ok: null
      }])
      const byIso = yield* sql<{ id: number }>`${
        sql.literal(PREPARED)
      } SELECT id FROM items WHERE at = ${"2026-01-02T03:04:05.000Z"}::timestamptz`
      assert.deepStrictEqual(byIso, [{ id: 3 }])
    }).pipe(Effect.provide(Db)))

  it.effect("a marked * projection is refused and writes nothing", () =>
    Effect.gen(function*() {
      const sql = yield* setup
      for (
        const statement of [
          sql`${sql.literal(PREPARED)} SELECT * FROM items WHERE id = ${1}`,
          sql`${sql.literal(PREPARED)} UPDATE items SET name = ${"x"} WHERE id = ${1} RETURNING *`
        ]
      ) {
        const result = yield* Effect.either(statement)
        assert.include(String(Either.isLeft(result) ? result.left.cause : ""), "must name its columns")
      }
      assert.deepStrictEqual(yield* sql`SELECT name FROM items ORDER BY id`, [{ name: "one" }, { name: "two" }])
    }).pipe(Effect.provide(Db)))

  it.effect("an error in a named statement inside a transaction rolls it back; the connection goes on", () =>
    Effect.gen(function*() {
      const sql = yield* setup
      const insert = (id: number, name: string) =>
        sql`${sql.literal(PREPARED)} INSERT INTO items (id, name) VALUES (${id}, ${name})`
      const failed = yield* Effect.either(
        sql.withTransaction(Effect.zipRight(insert(5, "five"), insert(1, "duplicate")))
      )
      assert.strictEqual(Either.isLeft(failed) ? (failed.left.cause as { code?: unknown }).code : undefined, "23505")
      assert.deepStrictEqual(yield* sql`SELECT id FROM items ORDER BY id`, [{ id: 1 }, { id: 2 }])
      yield* insert(6, "six")
      assert.deepStrictEqual(yield* sql`SELECT id FROM items ORDER BY id`, [{ id: 1 }, { id: 2 }, { id: 6 }])
    }).pipe(Effect.provide(Db)))

  it.effect("a statement PGlite dropped (DEALLOCATE ALL) fails once, then is parsed again", () =>
    Effect.zipRight(setup, recoversFromDeallocate).pipe(Effect.provide(Db)))
})
