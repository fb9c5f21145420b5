/**
 * The Postgres `SqlClient` (@effect/sql-pg) with every statement timed into the SQL histogram
 * (adapters/telemetry/metrics.ts), as the embedded client (adapters/pglite) times its own.
 *
 * @effect/sql has no hook around a statement's execution (its `sql.execute` spans exist only while
 * tracing is on), so the timing sits in the pool's connection class: every statement, inside a
 * transaction or not, is one `Client.query` call. The pool is built as PgClient.make builds its own
 * (checked with `SELECT 1` within 5 s, ended when the scope closes) and handed to `layerFromPool`.
 *
 * The same class sends the statements marked PREPARED (adapters/sql/prepared.ts) under a name, one
 * per distinct text, so pg parses each once per connection.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { type Clock, Duration, Effect, Layer, Redacted, type Scope } from "effect"
import * as Pg from "pg"
import * as LeanStatements from "../sql/leanStatements.ts"
import { statementNames } from "../sql/prepared.ts"
import { recordStatement } from "../telemetry/metrics.ts"

export interface PostgresConfig {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number | undefined
  /** Send the statements marked PREPARED (adapters/sql/prepared.ts) named (default true); off for a pooler that cannot keep them. */
  readonly preparedStatements?: boolean | undefined
}

const CONNECT_TIMEOUT = Duration.seconds(5)

/**
 * pg's Client, its `query` timed from the call to its answer (callback or promise), and a statement
 * marked PREPARED sent with its name (pg then parses it once per connection).
 */
const timedClient = (clock: Clock.Clock, prepare: boolean): typeof Pg.Client => {
  const nameOf = prepare ? statementNames() : () => undefined
  return class TimedClient extends Pg.Client {
    // pg's overloads end in an optional callback; without one it answers a promise. A submittable
    // (pg-cursor, for streams) answers in pieces and is not timed.
    override query(...args: Array<any>): any {
      const name = typeof args[0] === "string" ? nameOf(args[0]) : undefined
      // Refused as pg refuses a statement: through the callback or the promise, never a throw.
      if (name instanceof Error) {
        const callback = args[args.length - 1]
        if (typeof callback !== "function") return Promise.reject(name)
        queueMicrotask(() => callback(name))
        return undefined
      }
      if (name !== undefined) args[0] = { name, text: args[0] }
      const started = clock.unsafeCurrentTimeNanos()
      const done = (error?: unknown) => {
        recordStatement(clock, started)
        // The server no longer has the statement (DISCARD ALL, DEALLOCATE, or a Bind pg failed to
        // build after its Parse): pg would go on believing it parsed, so make the next call parse again.
        if (name !== undefined && (error as { code?: unknown } | undefined)?.code === "26000") delete (this.connection as unknown as { parsedStatements: Record<string, string> }).parsedStatements[name]
      }
      const callback = args[args.length - 1]
      if (typeof callback === "function") {
        args[args.length - 1] = (error: unknown, result: unknown) => {
          done(error)
          callback(error, result)
        }
        return (super.query as (...a: Array<any>) => any)(...args)
      }
      const answer = (super.query as (...a: Array<any>) => any)(...args)
      if (typeof args[0]?.submit === "function" || typeof answer?.then !== "function") return answer
      return answer.then(
        (result: unknown) => (done(), result),
        (error: unknown) => {
          done(error)
          throw error
        }
      )
    }
  }
}

const pool = (config: PostgresConfig, clock: Clock.Clock): Effect.Effect<Pg.Pool, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new Pg.Pool({
        connectionString: Redacted.value(config.url),
        max: config.maxConnections,
        application_name: "@effect/sql-pg",
        Client: timedClient(clock, config.preparedStatements ?? true)
      })
      // An idle connection's error (a restarted server) is the pool's to handle: it drops that connection.
      pool.on("error", () => {})
      return pool
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  ).pipe(
    Effect.tap((pool) =>
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: CONNECT_TIMEOUT,
          onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      )
    )
  )

/** Statements outside a transaction run on the pool's own connection, which checks a client out per statement. */
const lean = Layer.effectDiscard(
  Effect.gen(function* () {
    const client = yield* SqlClient.SqlClient
    const connection = yield* LeanStatements.stockConnection(client)
    if (connection !== undefined) LeanStatements.register(client, connection)
  })
)

export const layer = (config: PostgresConfig): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  lean.pipe(Layer.provideMerge(Layer.unwrapEffect(Effect.map(Effect.clock, (clock) => PgClient.layerFromPool({ acquire: pool(config, clock) })))))
