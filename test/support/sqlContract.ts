/**
 * Runs a port's contract suite against the SQL adapter on PGlite (in memory) and on a real Postgres
 * (a fresh database for the file). With a Postgres URL from globalSetup the Postgres suite always
 * runs; without one it is skipped, except under CI=true, where a missing Postgres is a failure.
 * The memory adapter is the caller's one line beside this.
 */
import type { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { inject } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { freshPglite } from "./pglite.ts"
import { freshDatabase } from "./postgres.ts"

export interface SqlContractOptions<A> {
  /** The suite's name on each client, e.g. `(db) => \`ConversationStore: ${db}\``. */
  readonly name: (db: "PGlite" | "Postgres") => string
  /** The adapter under test over a client. */
  readonly adapter: (client: Layer.Layer<SqlClient.SqlClient, unknown>) => Layer.Layer<A, unknown>
  readonly suite: (name: string, adapter: Layer.Layer<A, unknown>) => void
  /** Prefix of the Postgres database's name. */
  readonly database: string
  /** Pool size on Postgres (the client's default otherwise). */
  readonly maxConnections?: number
  /** More suites that need the Postgres server itself (several pools, several databases). */
  readonly onPostgres?: (url: string) => void
}

/** Tracing off, as the server runs without an OTLP endpoint: statements take the server's (lean) path. */
const asServed = <A>(adapter: Layer.Layer<A, unknown>) => Layer.merge(adapter, Layer.setTracerEnabled(false))

export const sqlContract = <A>(options: SqlContractOptions<A>) => {
  // Empty, as the fresh Postgres database beside it.
  options.suite(options.name("PGlite"), asServed(options.adapter(freshPglite("empty"))))
  const url = inject("postgresUrl")
  if (url !== null) {
    const postgres = Layer.unwrapScoped(
      Effect.gen(function*() {
        const db = yield* Effect.acquireRelease(
          Effect.promise(() => freshDatabase(url, options.database)),
          (db) => Effect.promise(() => db.drop())
        )
        const pool = options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }
        return asServed(options.adapter(Postgres.layer({ url: Redacted.make(db.url), ...pool })))
      })
    )
    options.suite(options.name("Postgres"), postgres)
    options.onPostgres?.(url)
  } else if (process.env["CI"] === "true") {
    describe(options.name("Postgres"), () => {
      it("needs a Postgres under CI=true", () => {
        assert.fail("globalSetup provided no Postgres URL, and CI=true requires the Postgres contract to run")
      })
    })
  } else {
    describe.skip(`${options.name("Postgres")} (no Postgres binaries and no TEST_DATABASE_URL)`, () => {
      it("skipped", () => {})
    })
  }
}
