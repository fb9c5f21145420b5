/**
 * Benchmark baseline: bare `node:http` + `pg` answering the two contact read routes with the SAME
 * SQL as adapters/sql/stores.ts (see sql.ts) (same WHERE, ORDER BY, LIMIT and LIKE escaping) and the same JSON
 * shapes, without auth, rate limiting, request ids or schema encoding. The workspace is fixed.
 *
 * Env: DATABASE_URL, WORKSPACE_ID, PORT (default 8090), HOST (default 127.0.0.1).
 */
import { createHmac, randomBytes } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import pg from "pg"
import { cursorScope, getStatement, listStatement } from "./sql.ts"

const url = process.env["DATABASE_URL"]
const workspaceId = process.env["WORKSPACE_ID"]
if (!url || !workspaceId) throw new Error("DATABASE_URL and WORKSPACE_ID are required")
const port = Number(process.env["PORT"] ?? 8090)
const host = process.env["HOST"] ?? "127.0.0.1"

// Same pool size as the service (apps/server/main.ts).
const pool = new pg.Pool({ connectionString: url, max: 20 })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const iso = (v: unknown) => (v instanceof Date ? v : new Date(String(v))).toISOString()

type Row = Record<string, any>

const detail = (r: Row) => ({
  id: r.id,
  firstName: r.first_name,
  lastName: r.last_name,
  company: r.company,
  phones: r.phones,
  emails: r.emails,
  notes: r.notes,
  properties: r.properties,
  tags: r.tags,
  source: r.source,
  createdAt: iso(r.created_at)
})

const summary = (r: Row) => ({
  id: r.id,
  firstName: r.first_name,
  lastName: r.last_name,
  company: r.company,
  phone: r.phones[0]?.value ?? null,
  createdAt: iso(r.created_at)
})

// A signed keyset cursor like core/pagination.ts (HMAC-SHA256 truncated to 16 bytes), so the
// baseline pays a comparable cost; it is not accepted back (no `cursor` parameter here).
const secret = randomBytes(32)
const b64url = (b: Buffer) => b.toString("base64url")
const cursor = (scope: string, position: ReadonlyArray<string>) => {
  const body = b64url(Buffer.from(JSON.stringify({ s: scope, p: position, t: Date.now() })))
  return `${body}.${b64url(createHmac("sha256", secret).update(body).digest().subarray(0, 16))}`
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const notFound = (res: ServerResponse, message: string) =>
  send(res, 404, { error: { code: "not_found", message, requestId: "baseline" } })

const CONTACT_PATH = /^\/v1\/api\/contacts\/([^/]+)$/

const server = createServer((req, res) => {
  const u = new URL(req.url ?? "/", "http://baseline")
  if (req.method !== "GET") return notFound(res, "No such route")
  const handle = async () => {
    const m = CONTACT_PATH.exec(u.pathname)
    if (m) {
      const id = decodeURIComponent(m[1]!)
      if (!UUID.test(id)) return notFound(res, "No such contact")
      const statement = getStatement(workspaceId, id)
      const { rows } = await pool.query(statement.text, [...statement.values])
      return rows[0] ? send(res, 200, { contact: detail(rows[0]) }) : notFound(res, "No such contact")
    }
    if (u.pathname === "/v1/api/contacts") {
      const limitParam = u.searchParams.get("limit")
      const limit = limitParam === null ? 50 : Number(limitParam)
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
        return send(res, 400, { error: { code: "invalid_argument", message: "limit: must be an integer from 1 to 200", requestId: "baseline" } })
      }
      const q = u.searchParams.get("q") ?? ""
      const statement = listStatement(workspaceId, q, limit)
      const { rows } = await pool.query(statement.text, [...statement.values])
      const last = rows[rows.length - 1]
      const nextCursor = rows.length === limit && last ? cursor(cursorScope(workspaceId, q), [iso(last.created_at), last.id]) : null
      return send(res, 200, { contacts: rows.map(summary), nextCursor })
    }
    return notFound(res, "No such route")
  }
  handle().catch((error) => {
    console.error(error)
    if (!res.headersSent) send(res, 500, { error: { code: "internal", message: "Internal error", requestId: "baseline" } })
  })
})

server.listen(port, host, () => console.log(`baseline listening on http://${host}:${port}`))

const shutdown = () => {
  server.close()
  server.closeAllConnections()
  void pool.end().finally(() => process.exit(0))
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
