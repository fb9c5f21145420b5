/**
 * An Effect 3 `SqlClient` over embedded PGlite (Postgres compiled to WASM).
 *
 * - Same compiler as `@effect/sql-pg` (`$n` placeholders, `sql.insert`, `sql.in`,
 *   dialect "pg"), so statements behave as they do on a real Postgres.
 * - PGlite has exactly one backend/connection. A lock (./connectionLock.ts, urgent
 *   work first) serialises
 *   access: a plain statement holds the permit for its own duration only; a
 *   transaction (`withTransaction`, `reserve`) holds it from BEGIN until its scope
 *   closes, so no other fiber's statement can land inside someone else's
 *   transaction. Statements run inside a transaction use the transaction's
 *   connection (via `TransactionConnection`) and do not ask for the permit again,
 *   so nested `withTransaction` (savepoints) works. Do not call `sql.reserve`
 *   inside a transaction: it would wait for the permit the transaction holds.
 * - Row values follow node-postgres (`pg`, used by `@effect/sql-pg`) defaults, so
 *   repository code sees the same JS types on both drivers:
 *     timestamptz / timestamp / date -> `Date` (parsed like pg's postgres-date:
 *       timestamptz by its offset, timestamp and date as local time),
 *       `'infinity'` -> `Infinity`;
 *     int8 (bigint, count(*)) -> string; numeric -> string;
 *     int2/int4/oid/float4/float8 -> number; bool -> boolean;
 *     json/jsonb -> parsed value; arrays -> JS arrays of the element type.
 *   Known remaining differences: bytea is a `Uint8Array` (pg: `Buffer`), interval is
 *   a string (pg: a PostgresInterval object), arrays of types created after start
 *   (enums) come back as the raw `{a,b}` string (pg does the same).
 * - Parameters are serialised by PGlite from the parameter types Postgres
 *   reports: a JS object or array passed for a json/jsonb parameter becomes JSON
 *   (pg turns JS arrays into Postgres array literals instead, so pass
 *   `JSON.stringify(value)` for jsonb arrays to be portable).
 * - Statements without parameters go through the simple query protocol (like pg
 *   does), so multi-statement migrations work. Statements with parameters marked
 *   PREPARED (adapters/sql/prepared.ts) run named (./prepared.ts), as on Postgres.
 * - Named statements and lean statements (adapters/sql/leanStatements.ts) are the
 *   fast path (adapters/fastPath.ts); with it off every statement is `db.query` or
 *   `db.exec` on @effect/sql's own statement path.
 *
 * No `node:*` imports: this file also runs under Deno.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { PGlite, type PGliteOptions, type Results } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { FastPath } from "../fastPath.ts"
import * as LeanStatements from "../sql/leanStatements.ts"
import { registerSingleConnection } from "../sql/singleConnection.ts"
import { recordStatement } from "../telemetry/metrics.ts"
import { makeConnectionLock } from "./connectionLock.ts"
import { preparedStatements } from "./prepared.ts"

export interface PgliteClientConfig {
  /** Directory for the database files; `undefined` => in-memory database. */
  readonly dataDir?: string | undefined
  /**
   * Start from this dump (PGlite's `dumpDataDir` tarball, which `npm run admin -- db load` takes too)
   * rather than from an empty database: the tests' databases, made once for the run.
   */
  readonly loadDataDir?: Blob | undefined
  readonly transformQueryNames?: ((str: string) => string) | undefined
  readonly transformResultNames?: ((str: string) => string) | undefined
  /** Also apply the name transforms inside json values (default true, as in PgClient). */
  readonly transformJson?: boolean | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
}

/**
 * Postgres's memory sized for one embedded connection. Its default 128 MB of shared buffers is
 * touched as pages are read and stays resident in the WASM memory, idle or not; the
 * data files sit in the OS page cache anyway, so a page missed here is a read() away, not a disk seek.
 */
const MEMORY_SETTINGS = ["-c", "shared_buffers=16MB"]

type TransformRows = (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

const OID = {
  INT8: 20,
  DATE: 1082,
  TIMESTAMP: 1114,
  TIMESTAMPTZ: 1184
} as const

// --- date parsing, a port of postgres-date@1 (what pg-types@2 / node-postgres uses)

const DATE_TIME = /(\d{1,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,})?.*?( BC)?$/
const DATE = /^(\d{1,})-(\d{2})-(\d{2})( BC)?$/
const TIME_ZONE = /([Z+-])(\d{2})?:?(\d{2})?:?(\d{2})?/
const INFINITY = /^-?infinity$/

const bcYear = (year: number) => -(year - 1)

const parsePgDate = (value: string): Date | number | null => {
  if (INFINITY.test(value)) return value.startsWith("-") ? -Infinity : Infinity
  const m = DATE_TIME.exec(value)
  if (!m) {
    const d = DATE.exec(value)
    if (!d) return null
    let year = parseInt(d[1]!, 10)
    if (d[4]) year = bcYear(year)
    const date = new Date(year, parseInt(d[2]!, 10) - 1, parseInt(d[3]!, 10))
    if (year >= 0 && year <= 99) date.setFullYear(year)
    return date
  }
  let year = parseInt(m[1]!, 10)
  if (m[8]) year = bcYear(year)
  const month = parseInt(m[2]!, 10) - 1
  const day = parseInt(m[3]!, 10)
  const hour = parseInt(m[4]!, 10)
  const minute = parseInt(m[5]!, 10)
  const second = parseInt(m[6]!, 10)
  const ms = m[7] ? 1000 * parseFloat(m[7]) : 0
  const tz = TIME_ZONE.exec(value.split(" ")[1] ?? "")
  if (tz) {
    const date = new Date(Date.UTC(year, month, day, hour, minute, second, ms))
    if (year >= 0 && year <= 99) date.setUTCFullYear(year)
    if (tz[1] !== "Z") {
      const sign = tz[1] === "-" ? -1 : 1
      const offset = sign *
        (parseInt(tz[2] ?? "0", 10) * 3600 + parseInt(tz[3] ?? "0", 10) * 60 + parseInt(tz[4] ?? "0", 10)) * 1000
      if (offset !== 0) date.setTime(date.getTime() - offset)
    }
    return date
  }
  const date = new Date(year, month, day, hour, minute, second, ms)
  if (year >= 0 && year <= 99) date.setFullYear(year)
  return date
}

/** PGlite parsers that make rows look like node-postgres rows (see file header). */
export const pgCompatibleParsers: Record<number, (value: string, typeId?: number) => unknown> = {
  [OID.INT8]: (value) => value,
  [OID.DATE]: parsePgDate,
  [OID.TIMESTAMP]: parsePgDate,
  [OID.TIMESTAMPTZ]: parsePgDate
}

/** How the service opens PGlite (also used by the embedded benchmark's floor, to open it the same way). */
export const pgliteOptions = (dataDir: string | undefined): PGliteOptions => ({
  ...(dataDir !== undefined ? { dataDir } : {}),
  extensions: { pg_trgm },
  startParams: [...PGlite.defaultStartParams, ...MEMORY_SETTINGS],
  parsers: pgCompatibleParsers
})

const rowsOf = (results: ReadonlyArray<Results<unknown>>): ReadonlyArray<any> =>
  // like pg: a multi-statement query yields one row array per statement
  results.length === 1 ? results[0]!.rows : results.map((r) => r.rows)

/**
 * Make a `SqlClient` over a fresh PGlite instance (closed when the scope closes).
 */
export const make = (
  options: PgliteClientConfig
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const compiler = PgClient.makeCompiler(options.transformQueryNames, options.transformJson)
    const transformRows = options.transformResultNames
      ? Statement.defaultTransforms(options.transformResultNames, options.transformJson).array
      : undefined

    // Durability: on a dataDir PGlite (0.5) mounts the directory with Emscripten's NODEFS, whose
    // writes are synchronous write(2) calls, and its syncToFs is a no-op; Postgres writes the WAL
    // at COMMIT (synchronous_commit on), so a commit is in the files (the kernel's page cache)
    // when the query returns: a kill -9 loses nothing acknowledged, and the next open replays
    // the WAL (test/e2e/storage.test.ts). PGlite starts Postgres with -F (fsync off), so a power
    // loss or kernel crash may still lose the last commits. `relaxedDurability` only changes
    // when syncToFs runs, which does nothing here, so it is left at its default.
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create({
            ...pgliteOptions(options.dataDir),
            ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir })
          }),
        catch: (cause) => new SqlError({ cause, message: "PgliteClient: failed to start PGlite" })
      }),
      (db) => Effect.promise(() => db.close().catch(() => undefined))
    )

    // Each statement is timed for the SQL metric (adapters/telemetry), from the call to its rows.
    const clock = yield* Effect.clock
    const wrap = <A>(run: () => Promise<A>): Effect.Effect<A, SqlError> =>
      Effect.tryPromise({
        try: () => {
          const started = clock.unsafeCurrentTimeNanos()
          return run().finally(() => recordStatement(clock, started))
        },
        catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
      })

    // Marked statements (adapters/sql/prepared.ts) run named: one call into PGlite instead of six.
    const fast = yield* FastPath
    const prepared = fast ? preparedStatements(db) : () => undefined
    const query = (
      sql: string,
      params: ReadonlyArray<unknown>,
      rowMode: "object" | "array"
    ): Effect.Effect<ReadonlyArray<any>, SqlError> =>
      params.length === 0
        ? wrap(() => db.exec(sql, { rowMode })).pipe(Effect.map(rowsOf))
        : wrap(() => prepared(sql, params, rowMode) ?? db.query(sql, params as Array<unknown>, { rowMode })).pipe(
          Effect.map((r) => r.rows)
        )

    const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) =>
      transformRows
        ? Effect.map(query(sql, params, "object"), transformRows)
        : query(sql, params, "object")

    const connection: Connection = {
      execute,
      executeUnprepared: execute,
      executeRaw: (sql, params) =>
        params.length === 0
          ? wrap(() => db.exec(sql))
          : wrap(() => db.query(sql, params as Array<unknown>)),
      executeValues: (sql, params) =>
        query(sql, params, "array") as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
      executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(execute(sql, params, transformRows))
    }

    // One permit = the one PGlite connection. The permit is taken interruptibly (a
    // fiber waiting behind a long transaction can still be timed out) and released
    // when the acquiring scope closes: per statement for `acquirer`, at the end of
    // the transaction for `transactionAcquirer`.
    const lock = makeConnectionLock()
    const acquireConnection: Connection.Acquirer = Effect.as(
      Effect.acquireRelease(Effect.interruptible(lock.acquire), () => lock.release),
      connection
    )

    const client = yield* SqlClient.make({
      acquirer: acquireConnection,
      transactionAcquirer: acquireConnection,
      compiler,
      transformRows,
      spanAttributes: [
        ...(options.spanAttributes ? Object.entries(options.spanAttributes) : []),
        ["db.system.name", "postgresql"],
        ["db.namespace", options.dataDir ?? "pglite:memory"]
      ]
    })
    // Lean statements (adapters/sql/leanStatements.ts) outside a transaction hold the permit for
    // the statement alone, as `acquirer` does for @effect/sql's own path.
    if (fast) {
      LeanStatements.register(client, {
        execute: (sql, params, transformRows) => lock.withLock(execute(sql, params, transformRows))
      })
    }
    registerSingleConnection(client)
    return client
  })

/**
 * `SqlClient` layer over PGlite. Provides `Reactivity` itself; the PGlite instance
 * is closed when the layer's scope closes.
 */
export const layer = (options: PgliteClientConfig): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.scoped(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
