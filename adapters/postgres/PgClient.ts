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
 * per distinct text, so pg parses each once per connection; and it sends the statements a
 * transaction leads with (BEGIN and its lock: adapters/sql/leading.ts) in the same write as the
 * transaction's first statement. The marked reads outside a transaction go to a few pipelined
 * connections of the same class instead of the pool (pipeline.ts).
 *
 * All of that is the fast path (adapters/fastPath.ts). With it off (FAST_PATH=false, whatever
 * `preparedStatements` and `pipeline` say) the pool's clients are pg's own Client and statements
 * take @effect/sql-pg's path: unnamed, one round trip each, untimed.
 */
import { SqlClient } from "@effect/sql"
import * as PgClient from "@effect/sql-pg/PgClient"
import { SqlError } from "@effect/sql/SqlError"
import { type Clock, Context, Duration, Effect, Layer, Redacted, type Scope } from "effect"
import * as Pg from "pg"
import { FastPath } from "../fastPath.ts"
import { LEADING, type Leading, type LeadStatement } from "../sql/leading.ts"
import * as LeanStatements from "../sql/leanStatements.ts"
import { statementNames } from "../sql/prepared.ts"
import { recordStatement } from "../telemetry/metrics.ts"
import { listenOwn } from "./listen.ts"
import { pipelined, pipelineSettings } from "./pipeline.ts"

export interface PostgresConfig {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number | undefined
  /** Send the statements marked PREPARED (adapters/sql/prepared.ts) named (default true); off for a pooler that cannot keep them. */
  readonly preparedStatements?: boolean | undefined
  /** Pipeline the hot reads outside transactions (pipeline.ts; default true); only with prepared statements on. */
  readonly pipeline?: boolean | undefined
  /** Longest a statement may run, in milliseconds (default STATEMENT_TIMEOUT; 0: none sent); migrations are not bound. */
  readonly statementTimeoutMs?: number | undefined
}

const CONNECT_TIMEOUT = Duration.seconds(5)
/**
 * How long a statement waits for a pool connection, connecting included. Past it the request
 * answers 503 with Retry-After (adapters/sql/unavailable.ts) instead of waiting on: for a database
 * that takes connections and never answers (a pooler holding its clients during a failover, a
 * host gone without a reset), which pg would otherwise wait for without end, or a pool no
 * statement leaves. Far above any wait a served load sees.
 */
const CHECKOUT_TIMEOUT = Duration.seconds(10)
/**
 * Longest any statement may run (Postgres's `statement_timeout`, lock waits included), so no
 * request holds a connection without bound whatever the data. Our statements are bounded by what
 * they answer; this is the net under that. Postgres cancels the statement (SQLSTATE 57014) and the
 * request answers 503 with Retry-After (adapters/sql/unavailable.ts). Migrations lift it
 * (adapters/sql/migrate.ts): an index built over a large table may take longer.
 */
export const STATEMENT_TIMEOUT = Duration.seconds(30)

/** What LeadQuery uses of pg's Query and Connection beyond their types. */
interface WireConnection {
  readonly parsedStatements: Record<string, string>
  readonly submittedNamedStatements: Record<string, string>
  parse(message: { readonly text: string }): void
  bind(message: { readonly values: ReadonlyArray<string> }): void
  execute(message: { readonly portal: string }): void
}
interface QueryInternals {
  readonly name?: string
  prepare(connection: WireConnection): void
  handleDataRow(message: unknown): void
  handleCommandComplete(message: unknown, connection: WireConnection): void
  handleError(error: unknown, connection: WireConnection): void
}
const PgQuery = Pg.Query as unknown as new(...args: Array<any>) => QueryInternals

/**
 * Whether a query can follow a lead in one write: pg's own query object (not a cursor), sent with
 * the extended protocol anyway (named, or with parameters), which takes one command. A text without
 * parameters may hold several (`SAVEPOINT x; SELECT ...`), which only the simple protocol takes.
 */
const oneCommand = ([config, values]: Array<any>): boolean => {
  if (typeof config === "string") return Array.isArray(values) && values.length > 0
  if (config === null || typeof config !== "object" || typeof config.submit === "function") return false
  return config.name !== undefined || (config.values ?? (Array.isArray(values) ? values : [])).length > 0
}

/**
 * pg's Query with `lead` sent ahead of it in the same write: Parse, Bind and Execute each, then the
 * query's own messages and one Sync. Postgres runs them in order and is ready again once. Their
 * results are dropped; an error in one skips the rest and is the query's. The lead is unnamed:
 * BEGIN then cannot fail for want of a prepared statement (after DISCARD ALL, or behind a pooler
 * with DATABASE_PREPARED_STATEMENTS=false), which would let what follows run outside the
 * transaction; Postgres parsed `BEGIN; SELECT pg_advisory_xact_lock(...)` every time before too.
 */
class LeadQuery extends PgQuery {
  private leadLeft: number
  private parsedBefore = true
  constructor(
    private readonly lead: ReadonlyArray<LeadStatement>,
    ...args: Array<any>
  ) {
    super(...args)
    this.leadLeft = lead.length
  }
  override prepare(connection: WireConnection) {
    const name = this.name
    this.parsedBefore = name === undefined || connection.parsedStatements[name] !== undefined ||
      connection.submittedNamedStatements[name] !== undefined
    for (const statement of this.lead) {
      connection.parse({ text: statement.text })
      connection.bind({ values: statement.values })
      connection.execute({ portal: "" })
    }
    super.prepare(connection)
  }
  override handleDataRow(message: unknown) {
    if (this.leadLeft === 0) super.handleDataRow(message)
  }
  override handleCommandComplete(message: unknown, connection: WireConnection) {
    if (this.leadLeft > 0) this.leadLeft--
    else super.handleCommandComplete(message, connection)
  }
  override handleError(error: unknown, connection: WireConnection) {
    // A lead statement failed, so the query's Parse was skipped; pg records a name as parsed when any
    // Parse of the write completes (the lead's), so forget it.
    if (this.leadLeft > 0 && !this.parsedBefore) delete connection.parsedStatements[this.name!]
    super.handleError(error, connection)
  }
}

/**
 * pg's Client, its `query` timed from the call to its answer (callback or promise), and a statement
 * marked PREPARED sent with its name (pg then parses it once per connection).
 */
const timedClient = (clock: Clock.Clock, prepare: boolean): typeof Pg.Client => {
  const nameOf = prepare ? statementNames() : () => undefined
  return class TimedClient extends Pg.Client {
    private pendingLead: ReadonlyArray<LeadStatement> | undefined
    readonly [LEADING]: Leading = {
      lead: (statements) => void (this.pendingLead = statements),
      cancel: () => {
        const pending = this.pendingLead !== undefined
        this.pendingLead = undefined
        return pending
      }
    }

    // pg's overloads end in an optional callback; without one it answers a promise. A submittable
    // (pg-cursor, for streams) answers in pieces and is not timed.
    override query(...args: Array<any>): any {
      const name = typeof args[0] === "string" ? nameOf(args[0]) : undefined
      // Refused as pg refuses a statement: through the callback or the promise, never a throw. A
      // pending lead stays for the next statement: the transaction has not begun on the server.
      if (name instanceof Error) {
        const callback = args[args.length - 1]
        if (typeof callback !== "function") return Promise.reject(name)
        queueMicrotask(() => callback(name))
        return undefined
      }
      const lead = this.pendingLead
      this.pendingLead = undefined
      if (name !== undefined) args[0] = { name, text: args[0] }
      // A lead the query cannot carry (below) goes first on its own (a round trip each: only a first
      // statement of several commands, a cursor or a promise call takes this way); its error is then
      // the query's.
      let leadFailure: unknown
      const started = clock.unsafeCurrentTimeNanos()
      const done = (error?: unknown) => {
        recordStatement(clock, started)
        // The server no longer has the statement (DISCARD ALL, DEALLOCATE, or a Bind pg failed to
        // build after its Parse): pg would go on believing it parsed, so make the next call parse again.
        if (name !== undefined && (error as { code?: unknown } | undefined)?.code === "26000") {
          delete (this.connection as unknown as WireConnection).parsedStatements[name]
        }
        return leadFailure ?? error
      }
      const callback = args[args.length - 1]
      if (typeof callback === "function") {
        args[args.length - 1] = (error: unknown, result: unknown) => callback(done(error), result)
        if (lead !== undefined && oneCommand(args)) return super.query(new LeadQuery(lead, ...args) as never)
      }
      if (lead !== undefined) {
        for (const statement of lead) {
          super.query(statement.text, [...statement.values], (error: unknown) => void (leadFailure ??= error))
        }
      }
      const answer = (super.query as (...a: Array<any>) => any)(...args)
      if (
        typeof callback === "function" || typeof args[0]?.submit === "function" || typeof answer?.then !== "function"
      ) return answer
      return answer.then(
        (result: unknown) => (done(), result),
        (error: unknown) => {
          throw done(error)
        }
      )
    }
  }
}

const pool = (config: PostgresConfig, Client: typeof Pg.Client): Effect.Effect<Pg.Pool, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new Pg.Pool({
        connectionString: Redacted.value(config.url),
        max: config.maxConnections,
        connectionTimeoutMillis: Duration.toMillis(CHECKOUT_TIMEOUT),
        // A startup parameter: 0 leaves it out, for a pooler that refuses unknown ones (PgBouncer).
        ...(config.statementTimeoutMs === 0
          ? {}
          : { statement_timeout: config.statementTimeoutMs ?? Duration.toMillis(STATEMENT_TIMEOUT) }),
        application_name: "@effect/sql-pg",
        Client
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
          onTimeout: () =>
            new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      )
    )
  )

/**
 * Statements outside a transaction run on the pool's own connection, which checks a client out per
 * statement, except the hot reads, which are pipelined (pipeline.ts) when prepared statements are on.
 */
const lean = (pg: Pg.Pool, config: PostgresConfig) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const client = yield* SqlClient.SqlClient
      const stock = yield* LeanStatements.stockConnection(client)
      if (stock === undefined) return
      if ((config.preparedStatements ?? true) && (config.pipeline ?? true)) {
        const Client = (pg as unknown as { Client: typeof Pg.Client }).Client
        const reads = pipelined(() => new Client({ ...pg.options, ...pipelineSettings } as Pg.ClientConfig), stock)
        yield* Effect.addFinalizer(() => Effect.promise(reads.close))
        LeanStatements.register(client, reads.connection)
      } else LeanStatements.register(client, stock)
    })
  )

/** @effect/sql-pg's client on `pg`, its `listen` replaced by one that ends with its connection (listen.ts). */
const fromPool = (pg: Pg.Pool) =>
  PgClient.layerFromPool({ acquire: Effect.succeed(pg) }).pipe(
    Layer.tap((context) =>
      Effect.sync(() => Object.assign(Context.get(context, PgClient.PgClient), { listen: listenOwn(pg) }))
    )
  )

export const layer = (config: PostgresConfig): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      if (!(yield* FastPath)) return fromPool(yield* pool(config, Pg.Client))
      const pg = yield* pool(config, timedClient(yield* Effect.clock, config.preparedStatements ?? true))
      return lean(pg, config).pipe(Layer.provideMerge(fromPool(pg)))
    })
  )
