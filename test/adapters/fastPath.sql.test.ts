/**
 * The statement path with the fast path on and off (adapters/fastPath.ts), on PGlite and on a real
 * Postgres: lean statements and transactions, the leading BEGIN, prepared and pipelined statements
 * against plain @effect/sql-pg and PGlite statements with @effect/sql's transactions.
 * - Off takes none of them (each one checked where it can be seen), on takes each.
 * - The store contract (stores.contract.ts) holds with it off; stores.test.ts runs it with it on.
 * - One journey through the app (contacts, search and cursors, a send with an idempotent replay and
 *   a conflict, an inbound reply, the thread, a deletion), over SQL stores with the statements on
 *   each path and the HTTP side unchanged: the same answers, once ids, times and cursors are named
 *   by their order of appearance.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Redacted, Tracer } from "effect"
import { inject } from "vitest"
import * as FastPath from "../../adapters/fastPath.ts"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import { PIPELINE_NAME, PIPELINES } from "../../adapters/postgres/pipeline.ts"
import { leadingOf } from "../../adapters/sql/leading.ts"
import * as LeanStatements from "../../adapters/sql/leanStatements.ts"
import { PREPARED } from "../../adapters/sql/prepared.ts"
import * as SqlStores from "../../adapters/sql/stores.ts"
import * as SqlTransactor from "../../adapters/sql/transactor.ts"
import * as Signal from "../../core/events/signal.ts"
import { Transactor } from "../../core/kernel/transactor.ts"
import { makeTestApp } from "../support/app.ts"
import { normalizer } from "../support/normalize.ts"
import { freshPglite } from "../support/pglite.ts"
import { freshDatabase } from "../support/postgres.ts"
import { sqlStores } from "../support/sqlStores.ts"
import { storesContract } from "./stores.contract.ts"

const url = inject("postgresUrl")
if (url === null && process.env["CI"] === "true") {
  throw new Error("globalSetup provided no Postgres URL, and CI=true requires the Postgres suites to run")
}

type Db = "PGlite" | "Postgres"
const DBS: ReadonlyArray<Db> = url === null ? ["PGlite"] : ["PGlite", "Postgres"]

/**
 * A client on a database of its own, the fast path as `fast` says (tracing off, as the server runs).
 * On Postgres the finer settings ask for prepared and pipelined statements: off overrides them.
 */
const client = (db: Db, fast: boolean): Layer.Layer<SqlClient.SqlClient, unknown> => {
  const layer = db === "PGlite"
    ? freshPglite("empty")
    : Layer.unwrapScoped(
      Effect.map(
        Effect.acquireRelease(
          Effect.promise(() => freshDatabase(url!, "fastpath")),
          (d) => Effect.promise(() => d.drop())
        ),
        (d) =>
          Postgres.layer({ url: Redacted.make(d.url), maxConnections: 4, preparedStatements: true, pipeline: true })
      )
    )
  return Layer.merge(layer, Layer.setTracerEnabled(false)).pipe(Layer.provide(FastPath.layer(fast)))
}

// ------------------------------------------------------------------------------ each piece on and off

/** What can be seen of each piece of the fast path on a client. */
const observed = (db: Db) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tx = yield* Transactor
    const lean = LeanStatements.isRegistered(sql)
    // @effect/sql's transaction provides its (no-op) span as the parent inside; the lean one none.
    const leanTransaction = Option.isNone(
      yield* tx.withTransaction(Effect.serviceOption(Tracer.ParentSpan), "fastpath")
    )
    // A reserved connection that sends statements ahead of the next one (Postgres only).
    const leading = yield* Effect.scoped(Effect.map(sql.reserve, (conn) => leadingOf(conn) !== undefined))
    // A marked statement leaves a named statement on the connection that ran it.
    const named = yield* sql.withTransaction(
      Effect.zipRight(
        sql`${sql.literal(PREPARED)} SELECT ${1}::int AS one`,
        sql<
          { readonly n: number }
        >`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'switchboard_%'`
      )
    )
    let pipelined = 0
    if (db === "Postgres") {
      // The pipelined connections open when the client is made: give them a moment.
      yield* Effect.sleep(Duration.millis(300))
      const rows = yield* sql<
        { readonly n: number }
      >`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${PIPELINE_NAME} AND datname = current_database()`
      pipelined = rows[0]!.n
    }
    return { lean, leanTransaction, leading, prepared: named[0]!.n > 0, pipelined }
  })

/** The transactor over the client; it reads the switch too. */
const transactor = (db: Db, fast: boolean) =>
  SqlTransactor.layer.pipe(
    Layer.provide(Signal.layer),
    Layer.provide(FastPath.layer(fast)),
    Layer.provideMerge(client(db, fast))
  )

describe("each piece of the statement path follows FAST_PATH", () => {
  for (const db of DBS) {
    it.live(`${db}: on, every piece is taken`, () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* observed(db), {
          lean: true,
          leanTransaction: true,
          leading: db === "Postgres",
          prepared: true,
          pipelined: db === "Postgres" ? PIPELINES : 0
        })
      }).pipe(Effect.provide(transactor(db, true))))

    it.live(`${db}: off, none is, whatever the finer settings say`, () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* observed(db), {
          lean: false,
          leanTransaction: false,
          leading: false,
          prepared: false,
          pipelined: 0
        })
      }).pipe(Effect.provide(transactor(db, false))))
  }
})

// ------------------------------------------------------------------------ the store contract, off

for (const db of DBS) {
  storesContract(
    `${db} stores, FAST_PATH off`,
    SqlStores.CursorCodecLive.pipe(Layer.provideMerge(sqlStores(client(db, false))))
  )
}

// ------------------------------------------------------------------------------ one journey, both ways

/** Cursors, request ids and keys differ between the runs too. */
const normalizerOfRun = () =>
  normalizer((value, key) =>
    key === "nextCursor" || key === "cursor"
      ? "cursor"
      : key === "requestId"
      ? "<request>"
      : value.startsWith("svc_")
      ? "key"
      : undefined
  )

type App = Awaited<ReturnType<typeof makeTestApp>>

/** The journey's answers, normalised: status, the headers a client reads, the body. */
const journey = async (app: App) => {
  const normal = normalizerOfRun()
  const answers: Array<
    { readonly label: string; readonly status: number; readonly replayed: string | null; readonly body: unknown }
  > = []
  /** The answer's body as sent (for the next request's path); its normalised form is recorded. */
  const call = async (label: string, path: string, init: RequestInit & { json?: unknown } = {}): Promise<any> => {
    const headers = new Headers(init.headers)
    headers.set("authorization", `Bearer ${app.testKey}`)
    const res = await app.fetch(`/v1/api${path}`, { ...init, headers })
    const text = await res.text()
    const body = text === "" ? null : JSON.parse(text)
    answers.push({ label, status: res.status, replayed: res.headers.get("idempotency-replayed"), body: normal(body) })
    return body
  }
  const seeded = await app.admin(`/workspaces/${app.workspaceId}/numbers`, {
    method: "POST",
    json: { e164: "+14155550100" }
  })
  answers.push({ label: "seed a number", status: seeded.status, replayed: null, body: normal(await seeded.json()) })

  const ids: Array<string> = []
  for (const [firstName, phone] of [["Ada", "4155550101"], ["Alan", "4155550102"], ["Grace", "4155550103"]]) {
    ids.push(
      (await call(`create ${firstName}`, "/contacts", { method: "POST", json: { firstName, phone } })).contact.id
    )
  }
  await call("get", `/contacts/${ids[0]}`)
  await call("list", "/contacts")
  await call("search", "/contacts?q=a")
  await call("search by phone", "/contacts?q=555-0102")
  const page = await call("first page", "/contacts?limit=2")
  await call("next page", `/contacts?limit=2&cursor=${encodeURIComponent(page.nextCursor)}`)
  await call("update", `/contacts/${ids[1]}`, {
    method: "PATCH",
    json: { company: "Analytical Engines", notes: ["met at the lab"] }
  })
  await call("get the update", `/contacts/${ids[1]}`)
  await call("a body its schema refuses", "/contacts", { method: "POST", json: { firstName: 7 } })

  const send = { to: "(415) 555-0101", body: "Your table is ready" }
  const sent = await call("send", "/messages", {
    method: "POST",
    json: send,
    headers: { "idempotency-key": "order-1" }
  })
  await call("send again", "/messages", { method: "POST", json: send, headers: { "idempotency-key": "order-1" } })
  await call("another body on the key", "/messages", {
    method: "POST",
    json: { ...send, body: "else" },
    headers: { "idempotency-key": "order-1" }
  })
  await call("a second send", "/messages", { method: "POST", json: { to: "+14155550102", body: "Hello Alan" } })
  await call("an inbound reply", "/test-helpers/inbound-messages", {
    method: "POST",
    json: { from: "+14155550101", to: "+14155550100", body: "On our way" }
  })
  await call("conversations", "/conversations")
  await call("the thread", `/conversations/${sent.conversationId}`)

  await call("delete", `/contacts/${ids[2]}`, { method: "DELETE" })
  await call("get the deleted", `/contacts/${ids[2]}`)
  await call("list after", "/contacts")
  return answers
}

const journeyOn = async (db: Db, fast: boolean) => {
  const app = await makeTestApp({ stores: sqlStores(client(db, fast)) })
  try {
    return await journey(app)
  } finally {
    await app.close()
  }
}

describe("the same journey through the app, SQL statements on each path", () => {
  for (const db of DBS) {
    it(`${db}: FAST_PATH on and off answer the same`, async () => {
      const on = await journeyOn(db, true)
      const off = await journeyOn(db, false)
      assert.deepStrictEqual(off, on)
      // The journey did what it says (not two equal failures).
      assert.deepStrictEqual(
        on.map((a) => `${a.label}: ${a.status}${a.replayed === "true" ? " replayed" : ""}`),
        [
          "seed a number: 201",
          "create Ada: 201",
          "create Alan: 201",
          "create Grace: 201",
          "get: 200",
          "list: 200",
          "search: 200",
          "search by phone: 200",
          "first page: 200",
          "next page: 200",
          "update: 200",
          "get the update: 200",
          "a body its schema refuses: 400",
          "send: 201",
          "send again: 201 replayed",
          "another body on the key: 400",
          "a second send: 201",
          "an inbound reply: 201",
          "conversations: 200",
          "the thread: 200",
          "delete: 200",
          "get the deleted: 404",
          "list after: 200"
        ]
      )
    })
  }
})
