/**
 * The SQL clients with one connection in one process (PGlite): a lock held across an outside call
 * is taken in the process there (transactor.ts `exclusive`), not with a transaction that would hold
 * the only connection.
 */
import type { SqlClient } from "@effect/sql"

const single = new WeakSet<SqlClient.SqlClient>()

export const registerSingleConnection = (client: SqlClient.SqlClient): void => void single.add(client)

export const isSingleConnection = (client: SqlClient.SqlClient): boolean => single.has(client)
