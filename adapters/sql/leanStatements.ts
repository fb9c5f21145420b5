/**
 * Statements without @effect/sql's per-statement scaffolding while tracing is off.
 *
 * `yield* sql\`...\`` runs a statement through `withConnection`: a `sql.execute` span (a no-op span
 * when tracing is off, with its exit handler), a fiber-runtime read for the statement transformer,
 * and `Effect.scoped` around the connection's acquisition (a Scope made, provided and closed: a copy
 * of the fiber's context each time). That is more than twice the fiber steps of running it on the
 * connection, on every statement of every request (docs/architecture.md, "Lean statements").
 *
 * For a client registered here, a statement's `commit` (what `yield*` runs) goes straight to the
 * connection when nothing would observe the difference: tracing is off (so no span would be
 * exported) and no `Statement.currentTransformer` is set. Inside a transaction it runs on the
 * transaction's connection, as @effect/sql's acquirer does; outside one, on the connection the client
 * registered, which must need no scope (the Postgres pool's connection checks a client out per
 * statement; the embedded database's takes its one permit per statement). Otherwise, and for
 * `.unprepared`, `.values`, `.raw`, `.stream` and `.withoutTransform`, @effect/sql's own path runs.
 *
 * It reaches two internals of @effect/sql's statement class: its prototype's `commit` and the
 * `acquirer` each statement of a client shares. `register` answers false when either is not where it
 * was (a newer @effect/sql), and the clients then run the stock path; a test holds that registration
 * succeeds and a statement takes under half the stock path's fiber steps.
 */
import { SqlClient, Statement } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Context, Effect, FiberRef, Option } from "effect"

/** What this module reads of @effect/sql's statement class. */
interface StatementInternals {
  readonly acquirer: object
  readonly transformRows: Parameters<Connection["execute"]>[2]
  readonly compile: () => readonly [string, ReadonlyArray<unknown>]
}

/** What a statement needs of a connection (`commit` runs `execute`). */
export type LeanConnection = Pick<Connection, "execute">

/**
 * The registered connections live on @effect/sql's statement prototype, beside the `commit` that
 * reads them, so a second copy of this module (a bundler's, Deno's) shares them instead of
 * registering into a map the installed `commit` never reads.
 */
const registry = Symbol.for("switchboard/leanStatements")

interface Patched {
  commit: (this: StatementInternals) => Effect.Effect<unknown, unknown>
  [registry]?: WeakMap<object, LeanConnection>
}

const install = (proto: Patched): WeakMap<object, LeanConnection> => {
  const installed = proto[registry]
  if (installed !== undefined) return installed
  const connections = new WeakMap<object, LeanConnection>()
  proto[registry] = connections
  const stock = proto.commit
  proto.commit = function() {
    const connection = connections.get(this.acquirer)
    if (connection === undefined) return stock.call(this)
    return Effect.withFiberRuntime<unknown, unknown>((fiber) => {
      if (
        fiber.getFiberRef(FiberRef.currentTracerEnabled) ||
        Option.isSome(fiber.getFiberRef(Statement.currentTransformer))
      ) return stock.call(this)
      const [sql, params] = this.compile()
      const transaction = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
      return (Option.isSome(transaction) ? transaction.value[0] : connection).execute(sql, params, this.transformRows)
    })
  }
  return connections
}

/** A statement of `client`, seen through the internals this module uses (or undefined where they are not). */
const probe = (client: SqlClient.SqlClient) => {
  const statement = client`SELECT 1` as unknown as Partial<StatementInternals>
  const proto = Object.getPrototypeOf(statement) as Partial<Patched> | null
  if (
    proto === null || typeof proto.commit !== "function" || typeof statement.acquirer !== "object" ||
    statement.acquirer === null
  ) return undefined
  return { acquirer: statement.acquirer, proto: proto as Patched }
}

/**
 * Runs `client`'s statements on `connection` outside transactions (see above). False when this
 * @effect/sql's statements are not shaped as expected; the client then keeps the stock path.
 */
export const register = (client: SqlClient.SqlClient, connection: LeanConnection): boolean => {
  const found = probe(client)
  if (found === undefined) return false
  install(found.proto).set(found.acquirer, connection)
  return true
}

/** Whether `client`'s statements take the lean path (tests). */
export const isRegistered = (client: SqlClient.SqlClient): boolean => {
  const found = probe(client)
  return found?.proto[registry]?.has(found.acquirer) === true
}

/**
 * The connection a client's own acquirer gives outside a transaction, for a client whose acquirer
 * needs no scope to keep it (the Postgres pool's: it checks a client out per statement).
 */
export const stockConnection = (client: SqlClient.SqlClient): Effect.Effect<Connection | undefined> => {
  const acquirer = probe(client)?.acquirer
  return Effect.isEffect(acquirer)
    ? Effect.scoped(acquirer as Effect.Effect<Connection>).pipe(Effect.orDie)
    : Effect.succeed(undefined)
}
