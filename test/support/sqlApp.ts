/**
 * The in-process test app on the SQL stores: a fresh database of the suite's Postgres when it has one
 * (CI always does), PGlite otherwise. Returns the app and a `close` that also drops the database.
 */
import { Redacted } from "effect"
import { inject } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { makeTestApp, type TestAppOptions } from "./app.ts"
import { freshPglite } from "./pglite.ts"
import { freshDatabase } from "./postgres.ts"
import { sqlStores } from "./sqlStores.ts"

export const makeSqlTestApp = async (name: string, options: Omit<TestAppOptions, "stores"> = {}) => {
  const url = inject("postgresUrl")
  if (url === null && process.env["CI"] === "true") throw new Error("CI=true needs the Postgres of globalSetup")
  if (url === null) {
    const app = await makeTestApp({ ...options, stores: sqlStores(freshPglite("migrated")) })
    return { app, close: () => app.close() }
  }
  const db = await freshDatabase(url, name)
  const app = await makeTestApp({ ...options, stores: sqlStores(Postgres.layer({ url: Redacted.make(db.url) })) })
  return {
    app,
    close: async () => {
      await app.close()
      await db.drop()
    }
  }
}
