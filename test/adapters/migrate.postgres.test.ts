/**
 * Processes booting at once on an empty Postgres each run the migrations: they must take turns, not
 * race to create the migrations table (one of them failed its boot that way in CI).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, inject, it } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import * as Migrate from "../../adapters/sql/migrate.ts"
import { freshDatabase } from "../support/postgres.ts"

const url = inject("postgresUrl")
const drops: Array<() => Promise<void>> = []
afterAll(() => Promise.all(drops.map((drop) => drop())))

describe.runIf(url !== null)("migrations on Postgres", () => {
  it("run by eight processes at once on an empty database: all boot, each migration applied once", async () => {
    for (let round = 0; round < 3; round++) {
      const db = await freshDatabase(url!, "migrate")
      drops.push(db.drop)
      // One pool each, as separate processes have.
      const boot = () =>
        Effect.runPromise(
          Effect.scoped(Layer.build(Migrate.layer.pipe(Layer.provide(Postgres.layer({ url: Redacted.make(db.url) })))))
        )
      await Promise.all(Array.from({ length: 8 }, boot))
      const rows = await Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(
            PgClient.PgClient,
            (sql) =>
              sql<
                { n: number; distinct_ids: number }
              >`SELECT count(*)::int AS n, count(DISTINCT migration_id)::int AS distinct_ids FROM effect_sql_migrations`
          ).pipe(
            Effect.provide(Postgres.layer({ url: Redacted.make(db.url) }))
          )
        )
      )
      expect(rows[0]!.n).toBe(readdirSync(join(import.meta.dirname, "../../adapters/sql/migrations")).length)
      expect(rows[0]!.distinct_ids).toBe(rows[0]!.n)
    }
  }, 120_000)
})
