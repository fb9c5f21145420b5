import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { inject } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { freshPglite } from "../support/pglite.ts"

const url = inject("postgresUrl")
const skip = url === null && process.env["CI"] !== "true"

const pgLayer = () => Postgres.layer({ url: Redacted.make(url ?? "postgres://invalid") })

// One query whose result types repository code depends on.
const typesQuery = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT
        '2024-01-02 03:04:05.123456+02'::timestamptz AS tstz,
        '2024-01-02 03:04:05.5'::timestamp AS ts,
        '2024-01-02'::date AS d,
        '{"a": [1, "x", null], "b": {"c": true}}'::jsonb AS j,
        '[1,2]'::json AS js,
        9007199254740993::int8 AS big,
        count(*) OVER () AS cnt,
        1.50::numeric AS num,
        42::int4 AS i4,
        1.25::float8 AS f8,
        true AS b,
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u,
        ARRAY[1, 2]::int4[] AS i4s,
        ARRAY[1, 2]::int8[] AS i8s,
        ARRAY['x', 'y']::text[] AS texts,
        NULL::text AS nothing,
        ${new Date("2024-05-06T07:08:09.010Z")}::timestamptz AS param_tstz,
        ${JSON.stringify({ k: [1] })}::jsonb AS param_json`)

describe.skipIf(skip)("test Postgres (globalSetup)", () => {
  it.live("answers select 1 through @effect/sql-pg", () =>
    Effect.gen(function*() {
      assert.isNotNull(url, "CI=true requires a Postgres (globalSetup provided null)")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ one: number }>`select 1 as one`
      assert.deepStrictEqual(rows, [{ one: 1 }])
    }).pipe(Effect.provide(pgLayer())))

  it.live("PGlite rows have the same JS values as node-postgres rows", () =>
    Effect.gen(function*() {
      const fromPg = yield* Effect.provide(typesQuery, pgLayer())
      const fromPglite = yield* Effect.provide(typesQuery, freshPglite("empty"))
      assert.deepStrictEqual(fromPglite, fromPg)
      const row = fromPg[0] as Record<string, unknown>
      assert.instanceOf(row["tstz"], Date)
      assert.strictEqual((row["tstz"] as Date).toISOString(), "2024-01-02T01:04:05.123Z")
      assert.strictEqual(row["big"], "9007199254740993")
    }))
})
