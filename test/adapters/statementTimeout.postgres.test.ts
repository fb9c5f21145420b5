/**
 * Statement time is bounded on Postgres (issue 38, item 1): a statement past the pool's
 * `statement_timeout` (lock waits included) is cancelled and its request answers 503 with
 * Retry-After, not a connection held without end; migrations are not bound by it.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import { unbounded } from "../../adapters/sql/migrate.ts"
import { makeTestApp } from "../support/app.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"

const url = inject("postgresUrl")
const LIMIT_MS = 400

describe.skipIf(url === null)("statement time on Postgres", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>
  beforeAll(async () => {
    db = await freshDatabase(url!, "statement_timeout")
  })
  afterAll(() => db?.drop())

  const client = () => Postgres.layer({ url: Redacted.make(db.url), statementTimeoutMs: LIMIT_MS })

  it("a request whose statement waits past the limit answers 503 with Retry-After; the next one succeeds", async () => {
    const app = await makeTestApp({ stores: sqlStores(client()) })
    const holder = new pg.Client({ connectionString: db.url })
    await holder.connect()
    try {
      const auth = { authorization: `Bearer ${app.testKey}`, "content-type": "application/json" }
      const created = await app.fetch("/v1/api/contacts", {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ firstName: "Ada" })
      })
      expect(created.status).toBe(201)
      const { contact } = (await created.json()) as { contact: { id: string } }
      // Another session holds the contact's row: the update waits for it, and the wait is a statement's time.
      await holder.query("BEGIN")
      await holder.query("SELECT id FROM contacts WHERE id = $1 FOR UPDATE", [contact.id])
      const patch = () =>
        app.fetch(`/v1/api/contacts/${contact.id}`, {
          method: "PATCH",
          headers: auth,
          body: JSON.stringify({ lastName: "Lovelace" })
        })
      // Answered while the row is still held (the holder lets go only after): without the limit it would wait for ever.
      const held = await patch()
      expect(held.status).toBe(503)
      expect(held.headers.get("retry-after")).toMatch(/^\d+$/)
      expect(((await held.json()) as { error: { code: string } }).error.code).toBe("unavailable")
      await holder.query("ROLLBACK")
      const again = await patch()
      expect(again.status).toBe(200)
      expect(((await again.json()) as { contact: { lastName: string } }).contact.lastName).toBe("Lovelace")
    } finally {
      await holder.end()
      await app.close()
    }
  })

  it("migrating leaves the pool's connections bound; 0 sends no limit", async () => {
    // Both pool connections at once (each query holds its own for 0.1 s): the one the migrations' lock lifted the limit on is one of them.
    const show = Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all(
        [1, 2].map(() =>
          Effect.map(
            sql<{ t: string }>`SELECT current_setting('statement_timeout') AS t, pg_sleep(0.1)::text`,
            (rows) => rows[0]!.t
          )
        ),
        { concurrency: 2 }
      ))
    const fresh = await freshDatabase(url!, "statement_timeout_migrate")
    try {
      const after = await Effect.runPromise(
        Effect.provide(
          show,
          Migrate.layer.pipe(
            Layer.provideMerge(
              Postgres.layer({ url: Redacted.make(fresh.url), statementTimeoutMs: LIMIT_MS, maxConnections: 2 })
            )
          )
        )
      )
      expect(after).toEqual([`${LIMIT_MS}ms`, `${LIMIT_MS}ms`])
      const none = await Effect.runPromise(
        Effect.provide(show, Postgres.layer({ url: Redacted.make(fresh.url), statementTimeoutMs: 0 }))
      )
      expect(none).toEqual(["0", "0"])
    } finally {
      await fresh.drop()
    }
  })

  it("a migration may run longer than the limit; a statement outside one may not", async () => {
    const slow = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_sleep(${(LIMIT_MS * 2) / 1000})`)
    const migrate = (migration: Effect.Effect<unknown, unknown, SqlClient.SqlClient>) =>
      Migrator.make({})({
        loader: Migrator.fromRecord({ "1_slow": Effect.asVoid(migration) }),
        table: `migrations_${Math.random().toString(36).slice(2)}`
      })
    const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      Effect.runPromiseExit(Effect.provide(effect, client()))
    const bounded = await run(migrate(slow))
    expect(bounded._tag, "the same migration without unbounded is cancelled").toBe("Failure")
    expect(String(JSON.stringify(bounded))).toMatch(/57014|statement timeout/)
    const lifted = await run(migrate(unbounded(Effect.asVoid(slow))))
    expect(lifted._tag).toBe("Success")
  })
})
