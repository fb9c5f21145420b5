/** Checks shared by the prepared-statement tests of both clients (Postgres and PGlite). */
import { SqlClient } from "@effect/sql"
import { assert } from "@effect/vitest"
import { Effect, Either } from "effect"
import { PREPARED } from "../../adapters/sql/prepared.ts"

/**
 * Over a table `items` holding (1, 'one'): a marked statement whose name the database dropped
 * (DEALLOCATE ALL) fails once with 26000, then is named again and answers.
 */
export const recoversFromDeallocate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const read = sql<{ name: string }>`${sql.literal(PREPARED)} SELECT name FROM items WHERE id = ${1}`
  assert.deepStrictEqual(yield* read, [{ name: "one" }])
  yield* sql`DEALLOCATE ALL`
  const failed = yield* Effect.either(read)
  assert.strictEqual(Either.isLeft(failed) ? (failed.left.cause as { code?: unknown }).code : undefined, "26000")
  assert.deepStrictEqual(yield* read, [{ name: "one" }])
  assert.deepStrictEqual(yield* read, [{ name: "one" }])
})
