/**
 * Prepared statements on Postgres. @effect/sql-pg sends every statement unnamed, so Postgres parses
 * and plans it anew on every call: about a third of its CPU per send (docs/performance.md). A
 * statement whose text starts with PREPARED is sent by the Postgres client (adapters/postgres) under
 * a name instead, parsed once per connection, and once a generic plan costs no more than the custom
 * ones (after five calls) planned once too. PGlite runs it as any other (the marker is a comment).
 *
 * Mark only a statement of a hot path that
 * - names its columns (no `SELECT *`, `RETURNING *`, `t.*`): a prepared statement whose result gains
 *   a column, as when a newer process's migration adds one, fails with "cached plan must not change
 *   result type"; one that names its columns is planned again and goes on. The client refuses a
 *   marked statement with a `*` projection (`unprepared`);
 * - has one text (no list of varying length): each distinct text is kept on every connection;
 * - has a plan that does not depend on its parameters (never a search or a caller's LIMIT): the
 *   generic plan serves every value.
 */

/** The marker: `sql\`${sql.literal(PREPARED)} SELECT ...\``. */
export const PREPARED = "/* prepared */"

/** A projection of every column (`SELECT *`, `SELECT DISTINCT *`, `RETURNING id, *`, `t.*`, `"t".*`). */
const STAR = /(?:\bSELECT(?:\s+(?:DISTINCT|ALL))?|\bRETURNING|,)\s*\*|[\w"]\.\*/i

/** Why a marked text cannot be prepared, or undefined when it can. */
export const unprepared = (text: string): string | undefined =>
  STAR.test(text) ? `A prepared statement must name its columns (no *): ${text.slice(0, 200)}` : undefined
