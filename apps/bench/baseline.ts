/**
 * Benchmark baseline: bare `node:http` + `pg` answering the two contact read routes with the SAME
 * SQL as adapters/sql/stores.ts (see sql.ts) (same WHERE, ORDER BY, LIMIT and LIKE escaping) and the same JSON
 * shapes, without auth, rate limiting, request ids or schema encoding (floor.ts). The workspace is fixed.
 *
 * Env: DATABASE_URL, WORKSPACE_ID, PORT (default 8090), HOST (default 127.0.0.1).
 */
import { createServer } from "node:http"
import pg from "pg"
import { contactReads, error, send } from "./floor.ts"

const url = process.env["DATABASE_URL"]
const workspaceId = process.env["WORKSPACE_ID"]
if (!url || !workspaceId) throw new Error("DATABASE_URL and WORKSPACE_ID are required")
const port = Number(process.env["PORT"] ?? 8090)
const host = process.env["HOST"] ?? "127.0.0.1"

// Same pool size as the service (apps/server/main.ts).
const pool = new pg.Pool({ connectionString: url, max: 20 })
const reads = contactReads(
  workspaceId,
  async (statement) => (await pool.query(statement.text, [...statement.values])).rows
)

const server = createServer((req, res) => {
  const u = new URL(req.url ?? "/", "http://baseline")
  if (req.method !== "GET") return error(res, 404, "not_found", "No such route")
  reads(u, res).then(
    (handled) => {
      if (!handled) error(res, 404, "not_found", "No such route")
    },
    (e) => {
      console.error(e)
      if (!res.headersSent) {
        send(res, 500, { error: { code: "internal", message: "Internal error", requestId: "baseline" } })
      }
    }
  )
})

server.listen(port, host, () => console.log(`baseline listening on http://${host}:${port}`))

const shutdown = () => {
  server.close()
  server.closeAllConnections()
  void pool.end().finally(() => process.exit(0))
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
