/**
 * The fast path: the speed work that reaches into library internals, behind one switch.
 *
 * Our Node server and router, lean statements and transactions, the leading BEGIN, prepared and
 * pipelined statements each replace or reach past a library's own code (docs/architecture.md,
 * "Design departures made for speed", says why each is worth it). A library upgrade can break any of them, so each is listed below with the
 * version it was written against, and all of them turn off together: FAST_PATH=false
 * (apps/server/config.ts), which the server provides as the `FastPath` value below. Off, the app is
 * served the library's way: HttpApiBuilder.group/serve/toWebHandler over @effect/platform-node's
 * NodeHttpServer (Deno: the same library app on Deno.serve, adapters/http/denoServer.ts), and SQL
 * through plain @effect/sql-pg and PGlite statements and @effect/sql's transactions. Off overrides
 * DATABASE_PREPARED_STATEMENTS and DATABASE_PIPELINE.
 *
 * Where the switch is read (each seam reads `FastPath` when its layer is built):
 * - adapters/http/router.ts: `group`, `serve`, `toWebHandler` (ours or HttpApiBuilder's);
 * - adapters/http/nodeServer.ts: `layer` (ours or NodeHttpServer.layer);
 * - adapters/postgres/PgClient.ts: `layer` (our pool client, lean statements and pipeline, or a plain pg pool);
 * - adapters/pglite/PgliteClient.ts: `make` (named statements and lean statements, or `db.query` alone);
 * - adapters/sql/transactor.ts: the lean outermost transaction with a leading BEGIN, or @effect/sql's.
 *
 * The app answers the same either way: routes, statuses, bodies and headers (test/http/router.test.ts
 * in-process, test/e2e/fastPath.test.ts on real servers) and the stores' results
 * (test/adapters/fastPath.sql.test.ts). What the library path lacks, by design (the fast path is not
 * written twice):
 * - Node: a request the parser refuses (malformed, headers over 16 KB, not arrived within the
 *   timeouts) gets Node's bare status line (400, 431, 408: no body, no X-Request-Id, no CORS)
 *   instead of the error envelope; the timeouts themselves still apply (REQUEST_TIMEOUT_MS,
 *   HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS). A chunked body that grows past 1 MiB may reset the
 *   connection instead of being answered 400 on it (NodeHttpServer stops reading by destroying the
 *   socket); a Content-Length over 1 MiB is still answered 400 before any body is read, and Node
 *   reads and drops the rest on a kept connection where ours closes it (`Connection: close`, with a
 *   lingering close). No "Draining: n request(s) in flight" line at shutdown (the server still
 *   waits for them).
 * - Node, tracing on: request spans are @effect/platform's own (HttpApp.toHandled), with its attributes.
 * - Postgres: the SQL statement histogram (db_client_statement_duration_seconds) is not fed: the
 *   timing lived in the pool's client class. PGlite's statements are still timed.
 *
 * test/adapters/fastPath.versions.test.ts fails when an installed version differs from PATCHES:
 * re-check the patches of that package, then update the version here (or run with FAST_PATH=false).
 *
 * Effect only: this file is read by the Deno server and the embedded client too.
 */
import { Context, Layer } from "effect"

/** Whether the fast path is on (default). Provide `layer(false)` to serve and query the library's way. */
export class FastPath extends Context.Reference<FastPath>()("switchboard/FastPath", { defaultValue: () => true }) {}

export const layer = (on: boolean): Layer.Layer<FastPath> => Layer.succeed(FastPath, on)

export interface Patch {
  /** The npm package whose internals the file relies on (`node`: the runtime itself). */
  readonly package: string
  /** The version written against: `major.minor.x` (Node: `major.x`); the installed version must match it. */
  readonly version: string
  readonly file: string
  /** What it patches, replaces or reads that the package does not promise. */
  readonly what: string
}

export const PATCHES: ReadonlyArray<Patch> = [
  {
    package: "@effect/platform",
    version: "0.97.x",
    file: "adapters/http/router.ts",
    what:
      "HttpApiBuilder's serving path rebuilt: the handlers object a group's build receives (HandlersTypeId, handle/handleRaw), " +
      "HttpApi's `groups`/`endpoints`/`middlewares`, the middleware tags' `security`/`provides`/`optional`, securityDecode, " +
      "HttpApiBuilder.Router's `routes`/`mounts`/`prefix`, Middleware.retrieve, HttpRouter.toHttpApp's RouteContext and " +
      "ParsedSearchParams, HttpApiSchema's status and encoding annotations, the decode order (path, body, headers, query)"
  },
  {
    package: "effect",
    version: "3.22.x",
    file: "adapters/http/router.ts",
    what:
      "FiberRef.currentContext set on a request's fiber instead of Effect.locally; Context's `unsafeMap` read and merged"
  },
  {
    package: "find-my-way-ts",
    version: "0.1.x",
    file: "adapters/http/router.ts",
    what: "the route matcher HttpRouter uses, called directly"
  },
  {
    package: "@effect/platform",
    version: "0.97.x",
    file: "adapters/http/nodeServer.ts",
    what:
      "NodeHttpServer replaced: HttpServerRequest implemented (TypeId, HttpIncomingMessage.MaxBodySize), HttpApp.toHandled " +
      "rebuilt (currentPreResponseHandlers, causeResponse, clientAbortFiberId), each request's fiber started with its request and scope"
  },
  {
    package: "@effect/platform-node",
    version: "0.108.x",
    file: "adapters/http/nodeServer.ts",
    what: "NodeHttpServer.layerContext, NodeMultipart and NodeStream under our own request class"
  },
  {
    package: "node",
    version: "20.x",
    file: "adapters/http/nodeServer.ts",
    what:
      "http internals: a socket's `destroySoon` replaced (lingering close), `socket._httpMessage` and a clientError's `rawPacket` read"
  },
  {
    package: "@effect/sql",
    version: "0.52.x",
    file: "adapters/sql/leanStatements.ts",
    what:
      "Statement.prototype.commit replaced; a statement's `acquirer`, `compile` and `transformRows` read; a client's acquirer run unscoped"
  },
  {
    package: "@effect/sql",
    version: "0.52.x",
    file: "adapters/sql/transactor.ts",
    what:
      "makeWithTransaction's outermost transaction rebuilt (TransactionConnection as `[connection, 0]`, sql.reserve)"
  },
  {
    package: "@effect/sql-pg",
    version: "0.53.x",
    file: "adapters/sql/leading.ts",
    what:
      "a reserved connection's pg client, kept as its undeclared `pg` property; its statements sent as client.query(text, params, callback)"
  },
  {
    package: "pg",
    version: "8.23.x",
    file: "adapters/postgres/PgClient.ts",
    what:
      "LeadQuery subclasses pg's Query (prepare, handleDataRow, handleCommandComplete, handleError) and writes Parse/Bind/Execute on " +
      "its Connection; TimedClient overrides Client.query and edits the connection's `parsedStatements`"
  },
  {
    package: "pg",
    version: "8.23.x",
    file: "adapters/postgres/pipeline.ts",
    what:
      "pipeline mode (`pipeline: true`) and the client's socket (`connection.stream`), corked per event-loop turn and destroyed on loss"
  },
  {
    package: "@electric-sql/pglite",
    version: "0.5.x",
    file: "adapters/pglite/prepared.ts",
    what:
      "PGlite's _checkReady, _runExclusiveTransaction, _runExclusiveQuery and execProtocol, with its protocol serializers and parsers"
  }
]

/** `installed` is of the line `version` names (`8.23.x` takes any 8.23 release). */
export const matches = (installed: string, version: string): boolean => {
  const wanted = version.split(".")
  const have = installed.split(".")
  return wanted.every((part, i) => part === "x" || part === have[i])
}
