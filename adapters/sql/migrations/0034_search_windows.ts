import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Message search by 30-day bucket, newest first (adapters/sql/messageSearch.ts): one expression
 * index of each text's words, each word's first 2, 3 and 4 letters marked `~` (a prefix as one key,
 * not every word it begins), and its bucket of 30 days (by epoch, the same in every time zone) as
 * `#<n>`. Neither mark can be a word, which are letters and digits only, so a search's own words
 * never meet them. The function names nothing outside pg_catalog: Postgres 17 (PGlite) builds
 * indexes with only pg_catalog on the search path. On a large table the build takes minutes, during
 * which writes to activities wait.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE OR REPLACE FUNCTION search_document(tsvector, timestamptz) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT $1 || array_to_tsvector(ARRAY(
        SELECT left(l, k) || '~' FROM unnest(tsvector_to_array($1)) l, generate_series(2, least(4, length(l) - 1)) k
      ) || ('#' || floor(extract(epoch FROM $2) / 2592000)::integer))
    $$`
  yield* sql`CREATE INDEX IF NOT EXISTS activities_search_document ON activities USING gin (search_document(search, created_at))`
  // As for the other search columns (migration 0003): the planner's estimates come from this sample.
  yield* sql`ALTER INDEX activities_search_document ALTER COLUMN 1 SET STATISTICS 1000`
})
