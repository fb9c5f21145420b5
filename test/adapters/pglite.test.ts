import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { assert, describe, it, layer } from "@effect/vitest"
import { Cause, Chunk, Deferred, Effect, Exit, Fiber, Layer, Option, Stream, String as Str } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PgliteClient from "../../adapters/pglite/PgliteClient.ts"

/** The client as the server runs it: tracing off, so statements take the lean path (adapters/sql/leanStatements.ts). */
const served = (options: PgliteClient.PgliteClientConfig = {}) =>
  Layer.merge(PgliteClient.layer(options), Layer.setTracerEnabled(false))

class Boom {
  readonly _tag = "Boom"
}

const names = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ name: string }>`SELECT name FROM ${sql(table)} ORDER BY name`.pipe(
      Effect.map((rows) => rows.map((r) => r.name))
    ))

const createNamesTable = (table: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`CREATE TABLE ${sql(table)} (id serial PRIMARY KEY, name text NOT NULL UNIQUE)`
  )

layer(served(), { timeout: "60 seconds" })("PgliteClient", (it) => {
  it.effect("select / insert round trip with parameters", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL, qty int NOT NULL)`
      const inserted = yield* sql<{ id: number; name: string; qty: number }>`
        INSERT INTO items (name, qty) VALUES (${"apple"}, ${3}) RETURNING *`
      assert.deepStrictEqual(inserted, [{ id: 1, name: "apple", qty: 3 }])
      const rows = yield* sql<{ name: string; qty: number }>`SELECT name, qty FROM items WHERE qty > ${1}`
      assert.deepStrictEqual(rows, [{ name: "apple", qty: 3 }])
      const [compiled, params] = sql`SELECT * FROM items WHERE name = ${"x"} AND qty = ${2}`.compile()
      assert.strictEqual(compiled, "SELECT * FROM items WHERE name = $1 AND qty = $2")
      assert.deepStrictEqual(params, ["x", 2])
    }))

  it.effect("sql.insert, sql.in, sql.unsafe, values, stream, multi-statement", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE fruits (id int PRIMARY KEY, name text NOT NULL)`
      yield* sql`INSERT INTO fruits ${
        sql.insert([{ id: 1, name: "apple" }, { id: 2, name: "pear" }, { id: 3, name: "fig" }])
      }`
      const some = yield* sql<{ id: number }>`SELECT id FROM fruits WHERE ${
        sql.in("name", ["apple", "fig"])
      } ORDER BY id`
      assert.deepStrictEqual(some.map((r) => r.id), [1, 3])
      const unsafe = yield* sql.unsafe<{ name: string }>("SELECT name FROM fruits WHERE id = $1", [2])
      assert.deepStrictEqual(unsafe, [{ name: "pear" }])
      const values = yield* sql`SELECT id, name FROM fruits ORDER BY id`.values
      assert.deepStrictEqual(values, [[1, "apple"], [2, "pear"], [3, "fig"]])
      const streamed = yield* Stream.runCollect(sql<{ id: number }>`SELECT id FROM fruits ORDER BY id`.stream)
      assert.deepStrictEqual(Chunk.toReadonlyArray(streamed).map((r) => r.id), [1, 2, 3])
      // statements without parameters use the simple protocol, like pg: several per call
      yield* sql.unsafe("CREATE TABLE multi_a (x int); CREATE TABLE multi_b (y int); INSERT INTO multi_a VALUES (1)")
      assert.deepStrictEqual(yield* sql`SELECT x FROM multi_a`, [{ x: 1 }])
    }))

  it.effect("a unique violation is a SqlError whose cause has code 23505", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* createNamesTable("uniq")
      yield* sql`INSERT INTO uniq ${sql.insert({ name: "a" })}`
      const error = yield* Effect.flip(sql`INSERT INTO uniq ${sql.insert({ name: "a" })}`)
      assert.instanceOf(error, SqlError)
      assert.strictEqual(error._tag, "SqlError")
      const cause = error.cause as { code?: string; constraint?: string }
      assert.strictEqual(cause.code, "23505")
      assert.strictEqual(cause.constraint, "uniq_name_key")
    }))

  it.effect("a failed withTransaction rolls back", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* createNamesTable("rollback_t")
      const exit = yield* Effect.exit(
        sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`INSERT INTO rollback_t ${sql.insert({ name: "lost" })}`
            return yield* Effect.fail(new Boom())
          })
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(yield* names("rollback_t"), [])
      // and the connection is usable afterwards, with a committing transaction
      yield* sql.withTransaction(sql`INSERT INTO rollback_t ${sql.insert({ name: "kept" })}`)
      assert.deepStrictEqual(yield* names("rollback_t"), ["kept"])
    }))

  it.effect("nested withTransaction rolls back only the inner savepoint", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* createNamesTable("nested_t")
      const insert = (name: string) => sql`INSERT INTO nested_t ${sql.insert({ name })}`
      yield* sql.withTransaction(
        Effect.gen(function*() {
          yield* insert("outer-1")
          const inner = yield* Effect.exit(
            sql.withTransaction(Effect.zipRight(insert("inner"), Effect.fail(new Boom())))
          )
          assert.isTrue(Exit.isFailure(inner))
          // the inner savepoint that succeeds is kept
          yield* sql.withTransaction(insert("inner-ok"))
          yield* insert("outer-2")
        })
      )
      assert.deepStrictEqual(yield* names("nested_t"), ["inner-ok", "outer-1", "outer-2"])
    }))

  it.effect("jsonb and timestamptz round trips (pg-compatible JS values)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE docs (id int PRIMARY KEY, body jsonb NOT NULL, at timestamptz NOT NULL, n int8 NOT NULL, d date)`
      const body = { a: 1, nested: { list: [1, "two", null], ok: true } }
      const at = new Date("2024-03-04T05:06:07.089Z")
      yield* sql`INSERT INTO docs ${sql.insert({ id: 1, body, at, n: 9007199254740993n, d: "2024-03-04" })}`
      const [row] = yield* sql<{ body: unknown; at: Date; n: string; d: Date }>`SELECT body, at, n, d FROM docs`
      assert.isDefined(row)
      assert.deepStrictEqual(row!.body, body)
      assert.instanceOf(row!.at, Date)
      assert.strictEqual(row!.at.getTime(), at.getTime())
      assert.strictEqual(row!.n, "9007199254740993") // int8 -> string, as node-postgres
      assert.instanceOf(row!.d, Date)
      const fromText = yield* sql<{ at: Date }>`SELECT '2024-01-02 03:04:05.123456+02'::timestamptz AS at`
      assert.strictEqual(fromText[0]!.at.toISOString(), "2024-01-02T01:04:05.123Z")
      const [count] = yield* sql<{ count: string }>`SELECT count(*) AS count FROM docs`
      assert.strictEqual(count!.count, "1")
      // a timestamptz parameter given as a Date compares as the same instant
      const found = yield* sql<{ id: number }>`SELECT id FROM docs WHERE at = ${at}`
      assert.deepStrictEqual(found, [{ id: 1 }])
    }))

  it.effect("CREATE EXTENSION pg_trgm and a gin_trgm_ops index", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
      yield* sql`CREATE TABLE people (id serial PRIMARY KEY, name text NOT NULL)`
      yield* sql`CREATE INDEX people_name_trgm ON people USING gin (name gin_trgm_ops)`
      yield* sql`INSERT INTO people ${sql.insert([{ name: "Alice Johnson" }, { name: "Bob Smith" }])}`
      const hits = yield* sql<{ name: string }>`SELECT name FROM people WHERE name ILIKE ${"%johns%"}`
      assert.deepStrictEqual(hits, [{ name: "Alice Johnson" }])
      const similar = yield* sql<{ name: string }>`SELECT name FROM people WHERE name % ${"Bob Smyth"}`
      assert.deepStrictEqual(similar, [{ name: "Bob Smith" }])
    }))

  it.effect("Migrator.make({}) with fromRecord applies, then skips, migrations", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const run = Migrator.make({})({
        loader: Migrator.fromRecord({
          "1_create_accounts": Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`CREATE TABLE accounts (id serial PRIMARY KEY, email text NOT NULL);
                CREATE UNIQUE INDEX accounts_email ON accounts (email)`),
          "2_add_name": Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`ALTER TABLE accounts ADD COLUMN name text`)
        })
      })
      assert.deepStrictEqual(yield* run, [[1, "create_accounts"], [2, "add_name"]])
      assert.deepStrictEqual(yield* run, [])
      yield* sql`INSERT INTO accounts ${sql.insert({ email: "a@example.com", name: "A" })}`
      const applied = yield* sql<{ migration_id: number }>`SELECT migration_id FROM effect_sql_migrations ORDER BY 1`
      assert.deepStrictEqual(
        applied.map((r) =>
          r.migration_id
        ),
        [1, 2]
      )
    }))
})

// Live clock: these tests hold a transaction open for real milliseconds.
layer(served(), { timeout: "60 seconds", excludeTestServices: true })(
  "PgliteClient serialisation",
  (it) => {
    it.effect("a concurrent plain insert waits for, and survives, a failing transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* createNamesTable("conc_fail")
        const insert = (name: string) => sql`INSERT INTO conc_fail ${sql.insert({ name })}`
        const inTx = yield* Deferred.make<void>()
        const tx = yield* Effect.fork(Effect.exit(sql.withTransaction(Effect.gen(function*() {
          yield* insert("tx")
          yield* Deferred.succeed(inTx, undefined)
          yield* Effect.sleep("150 millis") // the plain insert is issued meanwhile
          yield* insert("tx-2")
          return yield* Effect.fail(new Boom())
        }))))
        yield* Deferred.await(inTx)
        // from another fiber, outside the transaction
        const plain = yield* Effect.fork(insert("plain"))
        const txExit = yield* Fiber.join(tx)
        yield* Fiber.join(plain)
        assert.isTrue(Exit.isFailure(txExit))
        assert.deepStrictEqual(yield* names("conc_fail"), ["plain"])
      }))

    it.effect("a committing transaction and a concurrent plain insert both land", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* createNamesTable("conc_ok")
        const insert = (name: string) => sql`INSERT INTO conc_ok ${sql.insert({ name })}`
        const inTx = yield* Deferred.make<void>()
        const tx = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
          yield* insert("tx")
          yield* Deferred.succeed(inTx, undefined)
          yield* Effect.sleep("100 millis")
          // nested savepoint on the transaction's own connection: must not deadlock
          yield* sql.withTransaction(insert("tx-nested"))
        })))
        yield* Deferred.await(inTx)
        const plains = yield* Effect.fork(
          Effect.all([insert("plain-1"), insert("plain-2"), insert("plain-3")], { concurrency: "unbounded" })
        )
        yield* Fiber.join(tx)
        yield* Fiber.join(plains)
        assert.deepStrictEqual(yield* names("conc_ok"), ["plain-1", "plain-2", "plain-3", "tx", "tx-nested"])
      }))

    it.effect("a statement waiting behind a transaction can be interrupted (timeout)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const inTx = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const tx = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT 1`
          yield* Deferred.succeed(inTx, undefined)
          yield* Deferred.await(release)
        })))
        yield* Deferred.await(inTx)
        const timedOut = yield* Effect.timeoutOption(sql`SELECT 2 AS two`, "50 millis")
        assert.isTrue(Option.isNone(timedOut))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(tx)
        // the permit was not leaked by the interrupted waiter
        assert.deepStrictEqual(yield* sql`SELECT 2 AS two`, [{ two: 2 }])
      }))
  }
)

describe("PgliteClient options", () => {
  it.live("transformResultNames / transformQueryNames", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE camel (user_id int, display_name text)`
      yield* sql`INSERT INTO camel ${sql.insert({ userId: 1, displayName: "A" })}`
      assert.deepStrictEqual(yield* sql`SELECT * FROM camel`, [{ userId: 1, displayName: "A" }])
    }).pipe(
      Effect.provide(served({ transformQueryNames: Str.camelToSnake, transformResultNames: Str.snakeToCamel }))
    ))

  it.live("dataDir persists across instances", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-test-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const dataDir = join(dir, "db")
      const useDb = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
        Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(PgliteClient.layer({ dataDir })))
      yield* useDb((sql) => Effect.zipRight(sql`CREATE TABLE kept (v text)`, sql`INSERT INTO kept VALUES (${"hello"})`))
      const rows = yield* useDb((sql) => sql`SELECT v FROM kept`)
      assert.deepStrictEqual(rows, [{ v: "hello" }])
    }).pipe(Effect.scoped, Effect.catchAllCause((cause) => Effect.die(Cause.pretty(cause)))))
})
