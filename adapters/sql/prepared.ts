/**
 * Prepared statements on Postgres. @effect/sql-pg sends every statement unnamed, so Postgres parses
 * and plans it anew on every call, on every request (docs/architecture.md, "Prepared statements"). A
 * statement whose text starts with PREPARED is sent by the Postgres client (adapters/postgres) under
 * a name instead, parsed once per connection, and once a generic plan costs no more than the custom
 * ones (after five calls) planned once too. The embedded client (adapters/pglite/prepared.ts) names
 * it too, and then runs it with one call into PGlite instead of six.
 *
 * Mark only a statement of a hot path that
 * - names its columns (no `SELECT *`, `RETURNING *`, `t.*`): a prepared statement whose result gains
 *   a column, as when a newer process's migration adds one, fails with "cached plan must not change
 *   result type"; one that names its columns is planned again and goes on. The client refuses a
 *   marked statement with a `*` projection (`unprepared`);
 * - has one text (no list of varying length): each distinct text is kept on every connection;
 * - has a plan that does not depend on its parameters (never a search or a caller's LIMIT): the
 *   generic plan serves every value.
 *
 * On Postgres a marked `SELECT` run outside a transaction is pipelined (adapters/postgres/pipeline.ts):
 * it waits for the marked reads sent before it on its connection, so it must also be quick and
 * touch nothing but rows (no advisory lock, no `pg_sleep`, no function that writes or waits).
 */

/** The marker: `sql\`${sql.literal(PREPARED)} SELECT ...\``. */
export const PREPARED = "/* prepared */"

/** A projection of every column (`SELECT *`, `SELECT DISTINCT *`, `RETURNING id, *`, `t.*`, `"t".*`). */
const STAR = /(?:\bSELECT(?:\s+(?:DISTINCT|ALL))?|\bRETURNING|,)\s*\*|[\w"]\.\*/i

/** Why a marked text cannot be prepared, or undefined when it can. */
export const unprepared = (text: string): string | undefined =>
  STAR.test(text) ? `A prepared statement must name its columns (no *): ${text.slice(0, 200)}` : undefined

/** Distinct prepared texts a client names; past this, marked statements run unnamed. */
export const MAX_PREPARED = 100

/**
 * A client's names for its marked statements, one per distinct text: the name of `text`, undefined
 * when it runs unnamed (not marked, or past MAX_PREPARED), or an Error when it is refused (`*`).
 */
export const statementNames = () => {
  const names = new Map<string, string>()
  const nameOf = (text: string): string | Error | undefined => {
    if (!text.startsWith(PREPARED)) return undefined
    const known = names.get(text)
    if (known !== undefined) return known
    const refused = unprepared(text)
    if (refused !== undefined) return new Error(refused)
    if (names.size >= MAX_PREPARED) return undefined
    const name = `switchboard_${names.size}`
    names.set(text, name)
    return name
  }
  return nameOf
}
