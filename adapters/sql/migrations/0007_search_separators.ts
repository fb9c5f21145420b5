import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Contact search text with its separators spelled as upper-case letters (core/contacts/rules.ts
 * `searchText`), so trigrams span them. `translate` applies the same one-to-one map to the stored,
 * already lower-cased text. The map is written out here, not imported: a migration that has run must
 * not change. test/adapters/contactSearch.test.ts holds it equal to the app's.
 */
export const SEPARATORS = " .@_-+'&,/()!#$%*=?^`{|}~;"
export const LETTERS = "QXZJKVWYFBGHPMCDULNORSTEAI"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE contacts SET search_text = translate(search_text, ${SEPARATORS}, ${LETTERS})`
  yield* sql`ANALYZE contacts`
})
