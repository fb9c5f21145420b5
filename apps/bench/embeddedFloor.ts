/**
 * The embedded benchmark's floor: bare `node:http` over one PGlite instance, opened as the service
 * opens it (adapters/pglite/PgliteClient.ts `pgliteOptions`), answering GET /v1/api/contacts/{id},
 * GET /v1/api/contacts?q= and POST /v1/api/messages with the service's SQL and JSON (floor.ts).
 * PGlite queues concurrent queries on its one connection itself; a send is one PGlite transaction.
 *
 * Env: PGLITE_DIR, WORKSPACE_ID, INBOX_ID, NUMBER_E164, PORT (8092), HOST (127.0.0.1).
 */
import { PGlite } from "@electric-sql/pglite"
import { createServer } from "node:http"
import { pgliteOptions } from "../../adapters/pglite/PgliteClient.ts"
import { contactReads, error, sendMessage } from "./floor.ts"

const dir = process.env["PGLITE_DIR"]
const workspaceId = process.env["WORKSPACE_ID"]
const inboxId = process.env["INBOX_ID"]
const numberE164 = process.env["NUMBER_E164"]
if (!dir || !workspaceId || !inboxId || !numberE164) {
  throw new Error("PGLITE_DIR, WORKSPACE_ID, INBOX_ID and NUMBER_E164 are required")
}
const port = Number(process.env["PORT"] ?? 8092)
const host = process.env["HOST"] ?? "127.0.0.1"

const db = await PGlite.create(pgliteOptions(dir))
const reads = contactReads(
  workspaceId,
  async (statement) => (await db.query<Record<string, any>>(statement.text, [...statement.values])).rows
)
const sends = sendMessage(
  { workspaceId, inboxId, numberE164 },
  (body) =>
    db.transaction((tx) =>
      body(async (statement) => (await tx.query<Record<string, any>>(statement.text, [...statement.values])).rows)
    )
)

const server = createServer((req, res) => {
  const u = new URL(req.url ?? "/", "http://floor")
  const handle = async () => {
    if (req.method === "POST" && u.pathname === "/v1/api/messages") return sends(req, res)
    if (req.method === "GET" && (await reads(u, res))) return
    req.resume()
    error(res, 404, "not_found", "No such route")
  }
  handle().catch((e) => {
    console.error(e)
    if (!res.headersSent) error(res, 500, "internal", "Internal error")
  })
})

server.listen(port, host, () => console.log(`embedded floor listening on http://${host}:${port}`))

const shutdown = () => {
  server.close()
  server.closeAllConnections()
  void db.close().finally(() => process.exit(0))
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
