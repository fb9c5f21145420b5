import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Search by 30-day bucket, newest first (adapters/sql/searchWindows.ts).
 * - `search_bucket`: a row's bucket, by epoch, so it is the same in every time zone (immutable).
 * - Contacts: the trigram index again, with the bucket beside it (btree_gin), so a name's matches
 *   can be asked for one bucket at a time. The plain trigram index stays: measured at 10M rows,
 *   Postgres plans a phone search from it better than from this one.
 * - Activities: the words, each word's first 2, 3 and 4 letters marked `~` (a prefix as one key,
 *   not every word it begins), and the bucket as `#<n>`, in one expression index. Neither mark
 *   can be a word, which are letters and digits only, so a search's own words never meet them.
 * On a large table the two builds take minutes, during which writes to the table wait.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE EXTENSION IF NOT EXISTS btree_gin`
  yield* sql`CREATE OR REPLACE FUNCTION search_bucket(timestamptz) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT floor(extract(epoch FROM $1) / 2592000)::integer $$`
  yield* sql`CREATE OR REPLACE FUNCTION search_document(tsvector, timestamptz) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT $1 || array_to_tsvector(ARRAY(
        SELECT left(l, k) || '~' FROM unnest(tsvector_to_array($1)) l, generate_series(2, least(4, length(l) - 1)) k
      ) || ('#' || floor(extract(epoch FROM $2) / 2592000)::integer))
    $$`
  yield* sql`CREATE INDEX IF NOT EXISTS contacts_search_recent
    ON contacts USING gin (search_bucket(created_at), search_text gin_trgm_ops)`
  yield* sql`CREATE INDEX IF NOT EXISTS activities_search_document ON activities USING gin (search_document(search, created_at))`
  // As for the other search columns (migration 0003): the planner's estimates come from this sample.
  yield* sql`ALTER INDEX activities_search_document ALTER COLUMN 1 SET STATISTICS 1000`
})
