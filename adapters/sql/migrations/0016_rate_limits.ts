import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Token buckets shared by every process on one database (adapters/sql/ratelimit.ts). A bucket is
 * an API key or a client address, not a workspace's row: it lives only as long as it is not full.
 * No index on `at_ms`: each decision rewrites it, and the once-a-minute sweep reads the few live rows.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE rate_limits (
    bucket text PRIMARY KEY,
    tokens double precision NOT NULL,
    at_ms bigint NOT NULL,
    allowed boolean NOT NULL
  )`
})
