/**
 * The library floors of `GET /v1/api/contacts/{id}`: what the layers the service is built on cost
 * before any of its own work, each one step up from the bare server (baseline.ts). `npm run bench`
 * runs them beside the service and the baseline, so the reads target can be read against them.
 * Each answers the baseline's body for the same SQL (floor.ts `detail`), or 404; nothing else.
 *
 * FLOOR=
 * - `effect`: node:http, and the statement run through an Effect runtime on `@effect/sql-pg`
 *   (`runCallback`); the row written with JSON.stringify.
 * - `platform`: the service's Node server (adapters/http/nodeServer.ts: a fiber per request,
 *   HttpServerRequest and HttpServerResponse) with one hand-written route: path and success
 *   decoded and encoded with the service's schemas, synchronously.
 * - `httpapi`: the same server under HttpApiBuilder, with one HttpApi endpoint declared with the
 *   service's schemas (IdParam, getContact's output, NotFound): the router, the group, the handler.
 *
 * Env: DATABASE_URL, WORKSPACE_ID, PORT, HOST (default 127.0.0.1), FLOOR.
 */
import { createServer } from "node:http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import * as NodeServer from "../../adapters/http/nodeServer.ts"
import { NotFound } from "../../core/errors.ts"
import { getContact } from "../../core/tools/contacts.ts"
import { IdParam } from "../../adapters/http/api/shared.ts"
import { NotFound as NotFoundError } from "../../adapters/http/api/errors.ts"
import { detail, error, type Row, send } from "./floor.ts"
import { getStatement } from "./sql.ts"

const url = process.env["DATABASE_URL"]
const workspaceId = process.env["WORKSPACE_ID"]
const floor = process.env["FLOOR"]
if (!url || !workspaceId || !floor) throw new Error("DATABASE_URL, WORKSPACE_ID and FLOOR are required")
const port = Number(process.env["PORT"] ?? 8091)
const host = process.env["HOST"] ?? "127.0.0.1"

const Sql = PgClient.layer({ url: Redacted.make(url), maxConnections: 20 })
const CONTACT_PATH = /^\/v1\/api\/contacts\/([^/?]+)$/
const notFound = new NotFound({ message: "No such contact" })

/** The statement and the row as the answer's value, or NotFound. */
const getRow = (sql: PgClient.PgClient, id: string) => {
  const st = getStatement(workspaceId, id)
  return Effect.flatMap(Effect.orDie(sql.unsafe<Row>(st.text, [...st.values])), (rows) =>
    rows[0] === undefined ? Effect.fail(notFound) : Effect.succeed({ contact: detail(rows[0]) } as typeof getContact.output.Type)
  )
}

const effectFloor = async () => {
  const runtime = ManagedRuntime.make(Sql)
  const sql = await runtime.runPromise(PgClient.PgClient)
  createServer((req, res) => {
    const m = CONTACT_PATH.exec(req.url ?? "")
    if (m === null) return error(res, 404, "not_found", "No such route")
    runtime.runCallback(getRow(sql, decodeURIComponent(m[1]!)), {
      onExit: (exit) => (Exit.isSuccess(exit) ? send(res, 200, exit.value) : error(res, 404, "not_found", "No such contact"))
    })
  }).listen(port, host)
}

const platformFloor = () => {
  const decodePath = Schema.decodeUnknownSync(IdParam)
  const encode = Schema.encodeSync(getContact.output)
  const App = Layer.unwrapEffect(
    Effect.map(PgClient.PgClient, (sql) =>
      HttpServer.serve(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (req) => {
          const m = CONTACT_PATH.exec(req.url)
          if (m === null) return Effect.succeed(HttpServerResponse.unsafeJson({ error: { code: "not_found" } }, { status: 404 }))
          return Effect.match(getRow(sql, decodePath({ id: decodeURIComponent(m[1]!) }).id), {
            onFailure: () => HttpServerResponse.unsafeJson({ error: { code: "not_found" } }, { status: 404 }),
            onSuccess: (answer) => HttpServerResponse.unsafeJson(encode(answer))
          })
        })
      )
    )
  )
  return App
}

const httpApiFloor = () => {
  class Contacts extends HttpApiGroup.make("contacts").add(
    HttpApiEndpoint.get("get", "/v1/api/contacts/:id").setPath(IdParam).addSuccess(getContact.output).addError(NotFoundError)
  ) {}
  class FloorApi extends HttpApi.make("floor").add(Contacts) {}
  const ContactsLive = HttpApiBuilder.group(FloorApi, "contacts", (handlers) =>
    Effect.map(PgClient.PgClient, (sql) => handlers.handle("get", ({ path }) => getRow(sql, path.id)))
  )
  return HttpApiBuilder.serve().pipe(Layer.provide(HttpApiBuilder.api(FloorApi).pipe(Layer.provide(ContactsLive))))
}

if (floor === "effect") void effectFloor()
else {
  const app = floor === "platform" ? platformFloor() : floor === "httpapi" ? httpApiFloor() : undefined
  if (app === undefined) throw new Error(`FLOOR: expected effect, platform or httpapi, got ${floor}`)
  const served = app.pipe(Layer.provide(NodeServer.layer({ port, host })), Layer.provide(Sql))
  NodeRuntime.runMain(Layer.launch(served))
}
