import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The registry lease of a workspace's registration (core/registration/service.ts `leased`): one
 * process at a time talks to the registry about it, with no transaction open during the calls.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE texting_registrations ADD COLUMN registry_lease_until timestamptz`
})
