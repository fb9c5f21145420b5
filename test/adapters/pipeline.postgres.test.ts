/**
 * Pipelined hot reads on Postgres (adapters/postgres/pipeline.ts): the marked statements that only
 * read, run outside a transaction, go to pipelined connections instead of the pool. They answer
 * their own rows under concurrency, need no pool connection, leave in one write per turn, fail one
 * by one, see a transaction's writes only inside it, survive a lost connection, give a table lock's
 * wait to the pool, and close with the layer. Switched off, they wait for the pool like any statement.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Either, Exit, Fiber, Layer, Option, Redacted, Schedule, Scope } from "effect"
import pg from "pg"
import { inject } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { pipelinable, PIPELINE_NAME, pipelined, pipelineSettings } from "../../adapters/postgres/pipeline.ts"
import { PREPARED } from "../../adapters/sql/prepared.ts"
import { freshDatabase } from "../support/postgres.ts"

const url = inject("postgresUrl")
const skip = url === null && process.env["CI"] !== "true"

const ROWS = 200

/** A fresh database with `items` (1..ROWS), and the client over it: a pool of one connection. */
const withDatabase = <A, E>(
  pipeline: boolean | undefined,
  body: (dbUrl: string) => Effect.Effect<A, E, SqlClient.SqlClient>
) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const db = await freshDatabase(url!, "pipeline")
      const setup = new pg.Client({ connectionString: db.url })
      await setup.connect()
      await setup.query("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)")
      await setup.query("INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, $1::int) i", [ROWS])
      await setup.end()
      return db
    }),
    // Statements take the lean path (adapters/sql/leanStatements.ts), which pipelining is part of, while tracing is off: as the server runs without an OTLP endpoint.
    (db) =>
      body(db.url).pipe(
        Effect.provide(Postgres.layer({ url: Redacted.make(db.url), maxConnections: 1, pipeline })),
        Effect.withTracerEnabled(false)
      ),
    (db) => Effect.promise(() => db.drop())
  )

/** A marked read of one item's name. */
const nameOf = (id: number | string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ name: string }>`${sql.literal(PREPARED)} SELECT name FROM items WHERE id = ${id}`
  )

const ids = Array.from({ length: ROWS }, (_, i) => i + 1)

/** Every item read at once; each must answer its own row. */
const readAll = Effect.forEach(
  ids,
  (id) => Effect.map(nameOf(id), (rows) => assert.deepStrictEqual(rows, [{ name: `item ${id}` }])),
  {
    concurrency: "unbounded",
    discard: true
  }
)

/** Waits until the process's pipelined connections are up: each marked read before that goes through the pool. */
const settle = Effect.zipRight(nameOf(1), Effect.sleep(Duration.millis(300)))

/** Runs `body` while the pool's only connection is held by an open transaction. */
const whilePoolHeld = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const held = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.fork(
      sql.withTransaction(
        Effect.zipRight(Effect.zipRight(sql`SELECT 1`, Deferred.succeed(held, undefined)), Deferred.await(release))
      )
    )
    yield* Deferred.await(held)
    const result = yield* Effect.exit(body)
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)
    return yield* result
  })

describe("which statements are pipelined", () => {
  it("a marked SELECT without a locking clause; nothing else", () => {
    assert.isTrue(pipelinable(`${PREPARED} SELECT name FROM items WHERE id = $1`))
    assert.isTrue(pipelinable(`${PREPARED}\n  select name FROM items WHERE id = $1`))
    for (
      const text of [
        "SELECT name FROM items WHERE id = $1",
        `${PREPARED} WITH x AS (UPDATE items SET name = 'y' RETURNING id) SELECT id FROM x`,
        `${PREPARED} INSERT INTO items VALUES ($1, $2)`,
        `${PREPARED} UPDATE items SET name = $1`,
        `${PREPARED} SELECT name FROM items WHERE id = $1 FOR UPDATE`,
        `${PREPARED} SELECT name FROM items WHERE id = $1 for no key update`,
        `${PREPARED} SELECT name FROM items WHERE id = $1 FOR SHARE`,
        `${PREPARED} SELECT name FROM items WHERE id = $1 FOR KEY SHARE`
      ]
    ) assert.isFalse(pipelinable(text), text)
  })
})

describe.skipIf(skip)("pipelined reads (Postgres)", () => {
  it.live(
    "answer their own rows under concurrency, without a pool connection; switched off, they wait for the pool",
    () =>
      Effect.gen(function*() {
        yield* withDatabase(undefined, () =>
          Effect.gen(function*() {
            yield* settle
            const sql = yield* SqlClient.SqlClient
            yield* whilePoolHeld(
              Effect.gen(function*() {
                yield* Effect.timeoutFail(readAll, {
                  duration: Duration.seconds(5),
                  onTimeout: () => "marked reads waited for the pool"
                })
                // An unmarked statement needs the pool's connection, which the transaction holds.
                const unmarked = yield* Effect.timeout(
                  sql`SELECT name FROM items WHERE id = ${1}`,
                  Duration.millis(300)
                ).pipe(Effect.either)
                assert.isTrue(Either.isLeft(unmarked))
              })
            )
          }))
        yield* withDatabase(false, () =>
          Effect.gen(function*() {
            yield* settle
            const waited = yield* whilePoolHeld(Effect.timeout(nameOf(1), Duration.millis(300)).pipe(Effect.either))
            assert.isTrue(Either.isLeft(waited))
          }))
      }),
    30_000
  )

  it.live("the statements of one turn leave in one write", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => freshDatabase(url!, "pipeline")),
      (db) =>
        Effect.gen(function*() {
          let writes = 0
          const open = () => {
            const client = new pg.Client({ connectionString: db.url, ...pipelineSettings } as pg.ClientConfig)
            const stream = (client as unknown as {
              connection: {
                stream: {
                  _write: (...args: Array<unknown>) => unknown
                  _writev: (...args: Array<unknown>) => unknown
                }
              }
            }).connection.stream
            const [write, writev] = [stream._write.bind(stream), stream._writev.bind(stream)]
            stream._write = (...args: Array<unknown>) => (writes++, write(...args))
            stream._writev = (...args: Array<unknown>) => (writes++, writev(...args))
            return client
          }
          const fallback = { execute: () => Effect.die("not through the pool") }
          const reads = pipelined(open, fallback, 1)
          const statement = `${PREPARED} SELECT $1::int AS n`
          // The first statement goes to the pool while the connection opens.
          assert.isTrue(Exit.isFailure(yield* Effect.exit(reads.connection.execute(statement, [0], undefined))))
          yield* Effect.sleep(Duration.millis(300))
          writes = 0
          const answers = yield* Effect.forEach(ids, (n) => reads.connection.execute(statement, [n], undefined), {
            concurrency: "unbounded"
          })
          assert.deepStrictEqual(answers, ids.map((n) => [{ n }]))
          assert.isAtMost(writes, 2, `${ROWS} statements took ${writes} writes`)
          yield* Effect.promise(reads.close)
        }),
      (db) => Effect.promise(() => db.drop())
    ), 30_000)

  it.live("a failing statement fails alone", () =>
    withDatabase(undefined, () =>
      Effect.gen(function*() {
        yield* settle
        // With the pool held: these are the pipeline's, not the pool's.
        const results = yield* whilePoolHeld(
          Effect.forEach([1, 2, "not a number", 3, 4], (id) => Effect.either(nameOf(id)), { concurrency: "unbounded" })
        )
        assert.deepStrictEqual(results.map((r) => Either.isRight(r)), [true, true, false, true, true])
        assert.deepStrictEqual(Either.getOrThrow(results[4]!), [{ name: "item 4" }])
        const failure = Either.getLeft(results[2]!).pipe(Option.getOrThrow)
        assert.strictEqual((failure as { _tag?: string })._tag, "SqlError")
      })), 30_000)

  it.live(
    "inside a transaction a marked read is the transaction's: it sees its uncommitted write, which others do not",
    () =>
      withDatabase(undefined, () =>
        Effect.gen(function*() {
          yield* settle
          const sql = yield* SqlClient.SqlClient
          const written = yield* Deferred.make<void>()
          const done = yield* Deferred.make<void>()
          const writer = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function*() {
                yield* sql`UPDATE items SET name = 'renamed' WHERE id = 7`
                assert.deepStrictEqual(yield* nameOf(7), [{ name: "renamed" }])
                yield* Deferred.succeed(written, undefined)
                yield* Deferred.await(done)
              })
            )
          )
          yield* Deferred.await(written)
          assert.deepStrictEqual(yield* nameOf(7), [{ name: "item 7" }])
          yield* Deferred.succeed(done, undefined)
          yield* Fiber.join(writer)
          assert.deepStrictEqual(yield* nameOf(7), [{ name: "renamed" }])
        })),
    30_000
  )

  it.live(
    "a lost connection fails what it had in flight as statements; later reads are answered, and the pipeline opens again",
    () =>
      withDatabase(undefined, (dbUrl) =>
        Effect.gen(function*() {
          yield* settle
          const sql = yield* SqlClient.SqlClient
          const admin = new pg.Client({ connectionString: dbUrl })
          admin.on("error", () => {})
          yield* Effect.promise(() => admin.connect())
          // Reads that take 0.2 s each: five queue on each pipelined connection, in flight when it is lost.
          const slow = (id: number) =>
            sql`${sql.literal(PREPARED)} SELECT name, pg_sleep(0.2)::text AS slept FROM items WHERE id = ${id}`
          const inFlight = yield* Effect.fork(
            whilePoolHeld(
              Effect.forEach(ids.slice(0, 10), (id) => Effect.either(slow(id)), { concurrency: "unbounded" })
            )
          )
          yield* Effect.sleep(Duration.millis(100))
          const killed = yield* Effect.promise(() =>
            admin.query(
              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
              [PIPELINE_NAME]
            )
          )
          assert.strictEqual(killed.rowCount, 2)
          const results = yield* Fiber.join(inFlight)
          const failed = results.filter(Either.isLeft).map((r) => r.left)
          assert.isAtLeast(failed.length, 8)
          for (const error of failed) assert.strictEqual((error as { _tag?: string })._tag, "SqlError")
          // Later reads are answered (through the pool while the pipeline is down) ...
          yield* readAll
          // ... and then the pipeline is back: answered with the pool held. It reconnects about a
          // second later; tried until it answers, for the time a loaded machine may take.
          yield* whilePoolHeld(
            Effect.timeoutFail(readAll, { duration: Duration.seconds(2), onTimeout: () => "not yet" })
          ).pipe(
            Effect.retry(Schedule.spaced(Duration.millis(500)).pipe(Schedule.upTo(Duration.seconds(60)))),
            Effect.mapError(() => "the pipeline did not come back within 60 s")
          )
          yield* Effect.promise(() => admin.end())
        })),
    120_000
  )

  it.live(
    "a read waiting for a table lock goes to the pool after LOCK_WAIT_MS, and holds up no read behind it",
    () =>
      withDatabase(undefined, (dbUrl) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const admin = new pg.Client({ connectionString: dbUrl })
          admin.on("error", () => {})
          yield* Effect.promise(async () => {
            await admin.connect()
            await admin.query(
              "CREATE TABLE others (id int PRIMARY KEY, name text NOT NULL); INSERT INTO others VALUES (1, 'other')"
            )
          })
          yield* settle
          const other = sql<{ name: string }>`${sql.literal(PREPARED)} SELECT name FROM others WHERE id = ${1}`
          yield* other
          // A migration's lock on items: reads of items wait for it, on each pipelined connection (the
          // first one's Parse too: the text is new to these connections, so the others' Binds fail behind it).
          yield* Effect.promise(() => admin.query("BEGIN; LOCK TABLE items IN ACCESS EXCLUSIVE MODE"))
          const blocked = yield* Effect.fork(
            Effect.forEach([1, 2, 3, 4], (id) => nameOf(id), { concurrency: "unbounded" })
          )
          yield* Effect.sleep(Duration.millis(50))
          const behind = yield* Effect.timeoutFail(other, {
            duration: Duration.seconds(2),
            onTimeout: () => "a read of another table waited for the lock"
          })
          assert.deepStrictEqual(behind, [{ name: "other" }])
          yield* Effect.sleep(Duration.millis(300))
          const early = yield* Fiber.poll(blocked)
          assert.isTrue(Option.isNone(early), `the blocked reads waited for the lock: ${JSON.stringify(early)}`)
          yield* Effect.promise(() => admin.query("COMMIT"))
          assert.deepStrictEqual(yield* Fiber.join(blocked), [1, 2, 3, 4].map((id) => [{ name: `item ${id}` }]))
          yield* Effect.promise(() => admin.end())
        })),
    30_000
  )

  it.live("closing the client closes its pipelined connections", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => freshDatabase(url!, "pipeline")),
      (db) =>
        Effect.gen(function*() {
          const setup = new pg.Client({ connectionString: db.url })
          yield* Effect.promise(async () => {
            await setup.connect()
            await setup.query("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)")
            await setup.query("INSERT INTO items VALUES (2, 'item 2')")
            await setup.end()
          })
          const scope = yield* Scope.make()
          const context = yield* Layer.buildWithScope(
            Postgres.layer({ url: Redacted.make(db.url), maxConnections: 1 }),
            scope
          ).pipe(Effect.orDie)
          const admin = new pg.Client({ connectionString: db.url })
          yield* Effect.promise(() => admin.connect())
          const count = Effect.promise(() =>
            admin.query<{ n: string }>(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
          ).pipe(Effect.map((r) => Number(r.rows[0]!.n)))
          yield* Effect.provide(Effect.zipRight(settle, nameOf(2)), context).pipe(Effect.withTracerEnabled(false))
          // The pool's connection and the two pipelined ones.
          assert.strictEqual(yield* count, 3)
          yield* Scope.close(scope, Exit.void)
          yield* Effect.sleep(Duration.millis(200))
          assert.strictEqual(yield* count, 0)
          yield* Effect.promise(() => admin.end())
        }),
      (db) => Effect.promise(() => db.drop())
    ), 30_000)
})
