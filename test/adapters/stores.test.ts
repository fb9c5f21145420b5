/**
 * The store-port contract (stores.contract.ts) against every adapter: memory, PGlite (in-memory,
 * migrated) and a real Postgres (a fresh database per run, migrated). With a Postgres URL from
 * globalSetup the Postgres suite always runs; without one it is skipped, except under CI=true,
 * where a missing Postgres is a failure.
 */
import { SqlClient } from "@effect/sql"
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, describe, it, type Vitest } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { inject } from "vitest"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as PgliteClient from "../../adapters/pglite/PgliteClient.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"
import { CursorCodec, layerCursorCodec, makeCursorCodec } from "../../core/pagination.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { type StorePorts, storesContract } from "./stores.contract.ts"

/** SQL stores over a client: migrated first, cursor secret from the database. */
const sqlAdapter = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  Layer.merge(sqlStores(client), Layer.effect(CursorCodec, Effect.flatMap(SqlStores.cursorSecret, (secret) => makeCursorCodec(secret))).pipe(Layer.provide(Migrate.layer), Layer.provide(client)))

/** Checks only SQL adapters have: migrations are re-runnable and the cursor secret is stable. */
const sqlExtras = (it: Vitest.MethodsNonLive<StorePorts | SqlClient.SqlClient, true>) => {
  it.effect("SQL: migrations are applied once; the cursor secret is made once and kept", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* Migrate.run, [])
      const a = yield* SqlStores.cursorSecret
      const b = yield* SqlStores.cursorSecret
      assert.strictEqual(a.length, 32)
      assert.deepStrictEqual(a, b)
      // a cursor made by one process decodes in another sharing the database
      const one = yield* makeCursorCodec(a)
      const two = yield* makeCursorCodec(b)
      assert.deepStrictEqual(yield* two.decode("s", yield* one.encode("s", ["p", 1])), ["p", 1])
    }))
}

storesContract("memory stores", Layer.merge(MemoryStores.layer, layerCursorCodec(crypto.getRandomValues(new Uint8Array(32)))))

storesContract("PGlite stores", sqlAdapter(PgliteClient.layer({})), { extra: sqlExtras })

const url = inject("postgresUrl")

if (url !== null) {
  const postgres = Layer.unwrapScoped(
    Effect.gen(function* () {
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => freshDatabase(url, "stores")),
        (db) => Effect.promise(() => db.drop())
      )
      return sqlAdapter(PgClient.layer({ url: Redacted.make(db.url) }))
    })
  )
  storesContract("Postgres stores", postgres, { extra: sqlExtras })
} else if (process.env["CI"] === "true") {
  describe("Postgres stores", () => {
    it("needs a Postgres under CI=true", () => {
      assert.fail("globalSetup provided no Postgres URL, and CI=true requires the Postgres contract to run")
    })
  })
} else {
  describe.skip("Postgres stores (no Postgres binaries and no TEST_DATABASE_URL)", () => {
    it("skipped", () => {})
  })
}
