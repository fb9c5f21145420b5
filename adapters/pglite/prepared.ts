/**
 * Statements marked PREPARED (adapters/sql/prepared.ts) on PGlite: parsed once under a name, then
 * each run is one call into PGlite (Bind, Describe, Execute, Sync), where `db.query` makes six
 * (Parse, Describe, Bind, Describe, Execute, Sync) and Postgres parses and plans the text every time.
 * Parameters are serialised and rows parsed as `db.query` does: PGlite's serializers by the parameter
 * types Postgres reports for the statement, and its parsers (the client's, see PgliteClient.ts).
 *
 * The same naming as the Postgres client: one name per distinct marked text, at most MAX_PREPARED,
 * a marked `*` projection refused. A statement PGlite no longer has (DEALLOCATE, DISCARD ALL) fails
 * once with 26000 and is parsed again on the next call.
 *
 * No `node:*` imports: this file also runs under Deno.
 */
import { parse, type PGlite, protocol, type Results, type RowMode } from "@electric-sql/pglite"
import { statementNames } from "../sql/prepared.ts"

const { serialize } = protocol

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** A value as `db.query` sends it: PGlite's serializer for the parameter's type, else its string. */
const serialized = (db: PGlite, value: unknown, type: number | undefined): string | null => {
  if (value === null || value === undefined) return null
  const serializer = type === undefined ? undefined : db.serializers[type]
  return serializer ? serializer(value) : String(value)
}

/** `body` as `db.query` runs its work: PGlite ready, its transaction and query mutexes held. */
const run = async <A>(db: PGlite, body: () => Promise<A>): Promise<A> => {
  await db._checkReady()
  return db._runExclusiveTransaction(() => db._runExclusiveQuery(body))
}

/**
 * Runs marked statements named on `db`: the answer, or undefined for a statement to run with
 * `db.query` (not marked, or past MAX_PREPARED). Call it only where `db.query` could run (the client
 * holds PGlite's one connection for it).
 */
export const preparedStatements = (db: PGlite) => {
  const nameOf = statementNames()
  /** The parameter types of each name parsed on the backend. */
  const parsed = new Map<string, ReadonlyArray<number>>()
  return (text: string, params: ReadonlyArray<unknown>, rowMode: RowMode): Promise<Results> | undefined => {
    const name = nameOf(text)
    if (name === undefined) return undefined
    if (name instanceof Error) return Promise.reject(name)
    // The checks and locks `db.query` takes, in its order: a statement issued while PGlite closes
    // fails with PGlite's own "closing" error instead of reaching a torn-down module.
    return run(db, async () => {
      let types = parsed.get(name)
      if (types === undefined) {
        const described = await db.execProtocol(
          concat([serialize.parse({ name, text }), serialize.describe({ type: "S", name }), serialize.sync()]),
          { syncToFs: false }
        )
        types = parse.parseDescribeStatementResults(described.messages)
        parsed.set(name, types)
      }
      const values = params.map((value, i) => serialized(db, value, types[i]))
      try {
        const { messages } = await db.execProtocol(
          concat([
            serialize.bind({ statement: name, values }),
            serialize.describe({ type: "P" }),
            serialize.execute({}),
            serialize.sync()
          ])
        )
        return parse.parseResults(messages, db.parsers, { rowMode })[0]!
      } catch (error) {
        if ((error as { code?: unknown }).code === "26000") parsed.delete(name)
        throw error
      }
    })
  }
}
