/**
 * Prepared statements on Postgres (adapters/sql/prepared.ts, adapters/postgres/PgClient.ts): a
 * statement marked PREPARED is prepared once per connection under a name, the rest run unnamed; the
 * switch turns it off; a marked `*` projection is refused with an error, not a crash; and a prepared
 * statement that names its columns survives another process adding a column (a `SELECT *` does not:
 * the reason for the rule, shown on Postgres itself).
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Redacted } from "effect"
import pg from "pg"
import { inject } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { MAX_PREPARED, PREPARED } from "../../adapters/sql/prepared.ts"
import { freshDatabase } from "../support/postgres.ts"
import { recoversFromDeallocate } from "../support/prepared.ts"

const url = inject("postgresUrl")
const skip = url === null && process.env["CI"] !== "true"

/** The test's own database with one table, and the client over it (one connection: what one statement prepared, the next one finds). */
const withDatabase = <A, E>(
  preparedStatements: boolean | undefined,
  body: (dbUrl: string) => Effect.Effect<A, E, SqlClient.SqlClient>
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => freshDatabase(url!, "prepared")),
    (db) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)`
        yield* sql`INSERT INTO items VALUES (1, 'one'), (2, 'two')`
        return yield* body(db.url)
      }).pipe(Effect.provide(Postgres.layer({ url: Redacted.make(db.url), maxConnections: 1, preparedStatements }))),
    (db) => Effect.promise(() => db.drop())
  )

/** The statements prepared on the connection the caller's transaction holds. */
const preparedHere = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`
)

describe.skipIf(skip)("prepared statements (Postgres)", () => {
  it.live("a marked statement is prepared once per connection under a name; others run unnamed", () =>
    withDatabase(undefined, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prepared = yield* sql.withTransaction(
          Effect.gen(function*() {
            for (const id of [1, 2, 1]) {
              const rows = yield* sql<{ name: string }>`${
                sql.literal(PREPARED)
              } SELECT name FROM items WHERE id = ${id}`
              assert.deepStrictEqual(rows, [{ name: id === 1 ? "one" : "two" }])
            }
            yield* sql`SELECT name FROM items WHERE id = ${1}`
            return yield* preparedHere
          })
        )
        assert.strictEqual(prepared.length, 1)
        assert.match(prepared[0]!.name, /^switchboard_\d+$/)
        assert.strictEqual(prepared[0]!.statement, `${PREPARED} SELECT name FROM items WHERE id = $1`)
      })))

  it.live("DATABASE_PREPARED_STATEMENTS=false: nothing is prepared", () =>
    withDatabase(false, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prepared = yield* sql.withTransaction(
          Effect.zipRight(sql`${sql.literal(PREPARED)} SELECT name FROM items WHERE id = ${1}`, preparedHere)
        )
        assert.deepStrictEqual(prepared, [])
      })))

  it.live("a marked statement with a * projection fails with an error naming the rule, in or out of a transaction", () =>
    withDatabase(undefined, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (
          const statement of [
            sql`${sql.literal(PREPARED)} SELECT * FROM items WHERE id = ${1}`,
            sql`${sql.literal(PREPARED)} SELECT DISTINCT * FROM items WHERE id = ${1}`,
            sql`${sql.literal(PREPARED)} SELECT id, * FROM items WHERE id = ${1}`,
            sql`${sql.literal(PREPARED)} SELECT i.* FROM items i WHERE id = ${1}`,
            sql`${sql.literal(PREPARED)} SELECT "i".* FROM items "i" WHERE id = ${1}`,
            sql`${sql.literal(PREPARED)} UPDATE items SET name = ${"x"} WHERE id = ${1} RETURNING *`,
            sql`${sql.literal(PREPARED)} UPDATE items SET name = ${"x"} WHERE id = ${1} RETURNING id, *`
          ]
        ) {
          for (const run of [statement, sql.withTransaction(statement)]) {
            const result = yield* Effect.either(run)
            assert.isTrue(Either.isLeft(result))
            assert.include(String(Either.isLeft(result) ? result.left.cause : ""), "must name its columns")
          }
        }
        // A product is no projection: this one is prepared.
        const rows = yield* sql<{ n: number }>`${
          sql.literal(PREPARED)
        } SELECT id * ${2}::int AS n FROM items WHERE id = ${2}`
        assert.deepStrictEqual(rows, [{ n: 4 }])
        // Nothing was written by the refused UPDATE.
        assert.deepStrictEqual(yield* sql`SELECT name FROM items ORDER BY id`, [{ name: "one" }, { name: "two" }])
      })))

  it.live("a prepared statement naming its columns goes on after another process adds a column; a prepared SELECT * would fail", () =>
    withDatabase(undefined, (dbUrl) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const other = new pg.Client({ connectionString: dbUrl })
        yield* Effect.promise(() => other.connect())
        try {
          const star = { name: "star", text: "SELECT * FROM items WHERE id = $1" }
          yield* Effect.promise(() => other.query({ ...star, values: [1] }))
          const read = sql<{ id: number; name: string }>`${
            sql.literal(PREPARED)
          } SELECT id, name FROM items WHERE id = ${1}`
          assert.deepStrictEqual(yield* read, [{ id: 1, name: "one" }])
          // The migration of a newer process, while this one's connection holds the prepared plan.
          yield* Effect.promise(() => other.query("ALTER TABLE items ADD COLUMN note text"))
          for (let i = 0; i < 3; i++) assert.deepStrictEqual(yield* read, [{ id: 1, name: "one" }])
          const failed = yield* Effect.either(Effect.tryPromise(() => other.query({ ...star, values: [1] })))
          assert.include(
            String(Either.isLeft(failed) ? failed.left.error : ""),
            "cached plan must not change result type"
          )
        } finally {
          yield* Effect.promise(() => other.end())
        }
      })))

  it.live(`past ${MAX_PREPARED} distinct texts, marked statements run unnamed and still answer`, () =>
    withDatabase(undefined, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prepared = yield* sql.withTransaction(
          Effect.gen(function*() {
            for (let i = 0; i < MAX_PREPARED + 5; i++) {
              const rows = yield* sql<{ n: number }>`${sql.literal(PREPARED)} SELECT ${
                sql.literal(String(i))
              }::int + ${1}::int AS n`
              assert.deepStrictEqual(rows, [{ n: i + 1 }])
            }
            return yield* preparedHere
          })
        )
        assert.strictEqual(prepared.length, MAX_PREPARED)
        // Past the bound a marked * projection is still refused.
        const starred = yield* Effect.either(sql`${sql.literal(PREPARED)} SELECT * FROM items WHERE id = ${1}`)
        assert.include(String(Either.isLeft(starred) ? starred.left.cause : ""), "must name its columns")
      })))

  it.live("a statement the server dropped (DEALLOCATE ALL, DISCARD ALL) fails once, then is prepared again", () =>
    withDatabase(undefined, () => recoversFromDeallocate))
})
