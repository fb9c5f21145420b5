/**
 * The store-port contract (stores.contract.ts) against every adapter: memory, PGlite (in-memory,
 * migrated) and a real Postgres (a fresh database per run, migrated; see support/sqlContract.ts).
 */
import { SqlClient } from "@effect/sql"
import { assert, type Vitest } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"
import { layerCursorCodec, makeCursorCodec } from "../../core/kernel/pagination.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores, TEST_SECRETS_KEY } from "../support/sqlStores.ts"
import { type StorePorts, storesContract } from "./stores.contract.ts"

/** SQL stores over a client: migrated first, cursor secret from the database. */
const sqlAdapter = (client: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  SqlStores.CursorCodecLive.pipe(Layer.provideMerge(sqlStores(client)))

/** Checks only SQL adapters have: migrations are re-runnable and the cursor secret is stable across processes. */
const sqlExtras = (it: Vitest.MethodsNonLive<StorePorts | SqlClient.SqlClient | SqlStores.ServerSecrets, true>) => {
  it.effect("SQL: migrations are applied once; the cursor secret is made once and kept", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Migrate.run, [])
      const a = (yield* SqlStores.ServerSecrets).cursor
      // another process booting on the database opens the same secret
      const b = Context.get(
        yield* Effect.scoped(Layer.build(SqlStores.Secrets.layer(TEST_SECRETS_KEY))),
        SqlStores.ServerSecrets
      ).cursor
      assert.strictEqual(a.length, 32)
      assert.deepStrictEqual(a, b)
      // a cursor made by one process decodes in another sharing the database
      const one = yield* makeCursorCodec(a)
      const two = yield* makeCursorCodec(b)
      assert.deepStrictEqual(yield* two.decode("s", yield* one.encode("s", ["p", 1])), ["p", 1])
    }))
}

storesContract(
  "memory stores",
  Layer.merge(MemoryStores.layer, layerCursorCodec(crypto.getRandomValues(new Uint8Array(32))))
)

sqlContract({
  name: (db) => `${db} stores`,
  adapter: sqlAdapter,
  suite: (name, adapter) => storesContract(name, adapter, { extra: sqlExtras }),
  database: "stores"
})
