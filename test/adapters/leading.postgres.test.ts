/**
 * A transaction's BEGIN and lock travel with its first statement on Postgres (adapters/sql/leading.ts,
 * adapters/postgres/PgClient.ts, adapters/sql/transactor.ts): one round trip less, and nothing else
 * a caller can tell. The lock holds before the first statement runs, a failure in the write (the
 * lock's or the statement's) rolls back and leaves the connection usable, a transaction that ran no
 * statement leaves the connection outside any transaction, and a first statement only the simple
 * protocol takes (several commands) still runs inside the transaction.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, Fiber, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { afterEach, inject, vi } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { PREPARED } from "../../adapters/sql/prepared.ts"
import * as SqlTransactor from "../../adapters/sql/transactor.ts"
import * as Signal from "../../core/events/signal.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { freshDatabase } from "../support/postgres.ts"

const url = inject("postgresUrl")
const skip = url === null && process.env["CI"] !== "true"

/** The test's own database with one table, the service's client (one connection) and transactor over it; tracing off, as the server runs. */
const withDatabase = <A, E>(
  body: (dbUrl: string) => Effect.Effect<A, E, SqlClient.SqlClient | Transactor>,
  options = "",
  preparedStatements?: boolean
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => freshDatabase(url!, "leading")),
    (db) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)`
        return yield* body(db.url)
      }).pipe(
        Effect.provide(
          SqlTransactor.layer.pipe(
            Layer.provide(Signal.layer),
            Layer.provideMerge(
              Postgres.layer({ url: Redacted.make(db.url + options), maxConnections: 1, preparedStatements })
            )
          )
        ),
        Effect.withTracerEnabled(false)
      ),
    (db) => Effect.promise(() => db.drop())
  )

/** Round trips the client starts: each Sync (extended protocol) or simple query is answered once. */
const roundTrips = () => {
  const sync = vi.spyOn(pg.Connection.prototype as unknown as { sync: () => void }, "sync")
  const query = vi.spyOn(pg.Connection.prototype as unknown as { query: (text: string) => void }, "query")
  return {
    count: () => sync.mock.calls.length + query.mock.calls.length,
    texts: () => query.mock.calls.map(([text]) => text)
  }
}
afterEach(() => {
  vi.restoreAllMocks()
})

/** Rows as another session sees them (committed only). */
const committed = (dbUrl: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: dbUrl })
    await client.connect()
    try {
      return (await client.query("SELECT id FROM items ORDER BY id")).rows.map((r) => r.id as number)
    } finally {
      await client.end()
    }
  })

/** Another session holding the transaction lock `key` (as the transactor takes it) until the returned effect. */
const holdLock = (dbUrl: string, key: string) =>
  Effect.promise(async () => {
    const holder = new pg.Client({ connectionString: dbUrl })
    await holder.connect()
    await holder.query("BEGIN")
    await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [key])
    return Effect.promise(async () => {
      await holder.query("COMMIT")
      await holder.end()
    })
  })

/** The Postgres error code a transaction died with (the Transactor turns a SqlError into a defect). */
const diedWithCode = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(self), (exit) => {
    assert.isTrue(Exit.isFailure(exit))
    const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
    return Option.getOrUndefined(Option.map(defect, (e) => ((e as { cause?: { code?: string } }).cause?.code)))
  })

const insert = (id: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO items VALUES (${id}, ${`item ${id}`})`)

describe.skipIf(skip)("a transaction's BEGIN and lock ride with its first statement (Postgres)", () => {
  it.live("two statements with a lock: 3 round trips (BEGIN and the lock in the first), and both commit", () =>
    withDatabase((dbUrl) =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const trips = roundTrips()
        yield* tx.withTransaction(Effect.zipRight(insert(1), insert(2)), "key:a")
        assert.strictEqual(trips.count(), 3)
        assert.deepStrictEqual(trips.texts(), ["COMMIT"])
        assert.deepStrictEqual(yield* committed(dbUrl), [1, 2])
      })
    ))

  it.live("a SELECT as the first statement answers its own rows, not the lead's", () =>
    withDatabase(() =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transactor
        yield* insert(1)
        const rows = yield* tx.withTransaction(
          sql<{ id: number; name: string }>`${sql.literal(PREPARED)} SELECT id, name FROM items WHERE id = ${1}`,
          "key:h"
        )
        assert.deepStrictEqual(rows, [{ id: 1, name: "item 1" }])
      })
    ))

  it.live("DATABASE_PREPARED_STATEMENTS=false (a pooler that keeps none): the lead prepares nothing either", () =>
    withDatabase(
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tx = yield* Transactor
          const prepared = yield* tx.withTransaction(
            Effect.zipRight(insert(1), sql<{ name: string }>`SELECT name FROM pg_prepared_statements`),
            "key:i"
          )
          assert.deepStrictEqual(prepared, [])
        }),
      "",
      false
    ))

  it.live("the lock is held before the first statement runs: a holder elsewhere keeps it waiting", () =>
    withDatabase((dbUrl) =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const release = yield* holdLock(dbUrl, "key:b")
        const waiting = yield* Effect.fork(tx.withTransaction(insert(1), "key:b"))
        yield* Effect.sleep("300 millis")
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)))
        assert.deepStrictEqual(yield* committed(dbUrl), [])
        yield* release
        yield* Fiber.join(waiting)
        assert.deepStrictEqual(yield* committed(dbUrl), [1])
      })
    ))

  it.live("a failing first statement rolls the transaction back; the connection goes on", () =>
    withDatabase((dbUrl) =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        yield* insert(1)
        assert.strictEqual(
          yield* diedWithCode(tx.withTransaction(Effect.zipRight(insert(1), insert(2)), "key:c")),
          "23505"
        )
        yield* tx.withTransaction(insert(3), "key:c")
        assert.deepStrictEqual(yield* committed(dbUrl), [1, 3])
      })
    ))

  it.live("a lock that fails (lock_timeout) is the transaction's error; the statement did not run, and runs named next time", () =>
    withDatabase(
      (dbUrl) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const tx = yield* Transactor
          // A marked statement the connection has not parsed yet: its Parse is skipped with the lock's failure.
          const named = (id: number) =>
            sql`${sql.literal(PREPARED)} INSERT INTO items (id, name) VALUES (${id}, ${"named"})`
          const release = yield* holdLock(dbUrl, "key:d")
          const code = yield* diedWithCode(tx.withTransaction(named(1), "key:d"))
          yield* release
          assert.strictEqual(code, "55P03")
          assert.deepStrictEqual(yield* committed(dbUrl), [])
          yield* tx.withTransaction(named(2), "key:d")
          yield* tx.withTransaction(named(3), "key:d")
          assert.deepStrictEqual(yield* committed(dbUrl), [2, 3])
        }),
      "?options=-c%20lock_timeout%3D200"
    ))

  it.live("a transaction that runs no statement sends nothing, and the next statement runs outside any transaction", () =>
    withDatabase((dbUrl) =>
      Effect.gen(function*() {
        const tx = yield* Transactor
        const trips = roundTrips()
        yield* tx.withTransaction(Effect.void, "key:e")
        yield* Effect.either(tx.withTransaction(Effect.fail("refused before any statement"), "key:e"))
        assert.strictEqual(trips.count(), 0)
        yield* insert(1)
        assert.deepStrictEqual(yield* committed(dbUrl), [1])
      })
    ))

  it.live("a first statement the client refuses (a marked SELECT *) leaves BEGIN for the next: what follows is still in the transaction", () =>
    withDatabase((dbUrl) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transactor
        const refused = sql`${sql.literal(PREPARED)} SELECT * FROM items WHERE id = ${1}`
        const failed = yield* Effect.either(
          tx.withTransaction(
            Effect.ignore(refused).pipe(Effect.zipRight(insert(1)), Effect.zipRight(Effect.fail("then refused"))),
            "key:g"
          )
        )
        assert.deepStrictEqual(failed, Either.left("then refused"))
        assert.deepStrictEqual(yield* committed(dbUrl), [])
      })
    ))

  it.live("a first statement of several commands (no parameters) still runs inside the transaction and rolls back with it", () =>
    withDatabase((dbUrl) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transactor
        const failed = yield* Effect.either(
          tx.withTransaction(
            Effect.zipRight(
              sql.unsafe("INSERT INTO items VALUES (1, 'a'); INSERT INTO items VALUES (2, 'b')"),
              Effect.fail("then refused")
            ),
            "key:f"
          )
        )
        assert.deepStrictEqual(failed, Either.left("then refused"))
        assert.deepStrictEqual(yield* committed(dbUrl), [])
        yield* tx.withTransaction(
          sql.unsafe("INSERT INTO items VALUES (3, 'c'); INSERT INTO items VALUES (4, 'd')"),
          "key:f"
        )
        assert.deepStrictEqual(yield* committed(dbUrl), [3, 4])
      })
    ))
})
