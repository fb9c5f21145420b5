/** Row decoding helpers shared by the SQL stores (pg returns Dates and parsed jsonb; PGlite too). */
export const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString()
export const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v))
export const json = <A>(v: unknown): A => (typeof v === "string" ? JSON.parse(v) : v) as A

/** Postgres unique violation. */
export const isUniqueViolation = (e: unknown): boolean => {
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause
  return cause?.code === "23505"
}

/** Escapes LIKE metacharacters so user text matches literally. */
export const likeContains = (s: string): string => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
