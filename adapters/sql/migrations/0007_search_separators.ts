import { Effect } from "effect"
import { SqlClient } from "@effect/sql"
import { SEARCH_SEPARATOR_LETTERS, SEARCH_SEPARATORS } from "../../../core/contacts/rules.ts"

/**
 * Contact search text with its separators spelled as upper-case letters (core/contacts/rules.ts
 * `searchText`), so trigrams span them. `translate` applies the same one-to-one map to the stored
 * (already lower-cased) text.
 *
 * `contacts_recent` now carries the search columns: a common term is answered by walking the newest
 * rows in index order, and reading the columns from the index skips a heap visit per row.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE contacts SET search_text = translate(search_text, ${SEARCH_SEPARATORS}, ${SEARCH_SEPARATOR_LETTERS})`
  yield* sql`DROP INDEX contacts_recent`
  yield* sql`CREATE INDEX contacts_recent ON contacts (workspace_id, created_at DESC, id DESC) INCLUDE (search_text, search_digits)`
  yield* sql`ANALYZE contacts`
})
