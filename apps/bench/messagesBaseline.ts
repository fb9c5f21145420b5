/**
 * Messaging benchmark baseline: bare `node:http` + `pg`, no auth, rate limiting, idempotency,
 * schema decoding or contact lookup. The workspace and its sending number are fixed.
 *
 * - POST /v1/api/messages `{to, body}`: one transaction doing the writes a test-key send does
 *   (floor.ts `sendMessage`), answering 201 with the service's JSON shape.
 * - GET /v1/api/conversations?limit=&status=&cursor=: the same SQL as adapters/sql/conversations.ts
 *   listThreads (messagesSql.ts) and the same JSON (core toSummary); cursors are its own HMAC'd
 *   keyset positions (like core/kernel/pagination.ts), verified on the way back in.
 *
 * Env: DATABASE_URL, WORKSPACE_ID, INBOX_ID, NUMBER_E164, PORT (8091), HOST (127.0.0.1).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import pg from "pg"
import { contactNameOf, type ThreadView, toSummary } from "../../core/conversations/model.ts"
import { error, iso, send, sendMessage } from "./floor.ts"
import { listThreadsStatement } from "./messagesSql.ts"

const url = process.env["DATABASE_URL"]
const workspaceId = process.env["WORKSPACE_ID"]
const inboxId = process.env["INBOX_ID"]
const numberE164 = process.env["NUMBER_E164"]
if (!url || !workspaceId || !inboxId || !numberE164) {
  throw new Error("DATABASE_URL, WORKSPACE_ID, INBOX_ID and NUMBER_E164 are required")
}
const port = Number(process.env["PORT"] ?? 8091)
const host = process.env["HOST"] ?? "127.0.0.1"

// Same pool size as the service (apps/server/main.ts).
const pool = new pg.Pool({ connectionString: url, max: 20 })

type Row = Record<string, any>

const secret = randomBytes(32)
const mac = (body: string) => createHmac("sha256", secret).update(body).digest().subarray(0, 16)
const encodeCursor = (scope: string, position: ReadonlyArray<string>) => {
  const body = Buffer.from(JSON.stringify({ s: scope, p: position, t: Date.now() })).toString("base64url")
  return `${body}.${mac(body).toString("base64url")}`
}
const decodeCursor = (scope: string, cursor: string): ReadonlyArray<string> | null => {
  const [body, sig] = cursor.split(".")
  if (!body || !sig) return null
  const given = Buffer.from(sig, "base64url")
  if (given.length !== 16 || !timingSafeEqual(given, mac(body))) return null
  const parsed = JSON.parse(Buffer.from(body, "base64url").toString()) as { s: string; p: Array<string> }
  return parsed.s === scope && parsed.p.length === 2 ? parsed.p : null
}

const sendRoute = sendMessage({ workspaceId, inboxId, numberE164 }, async (body) => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const result = await body(async (statement) => (await client.query(statement.text, [...statement.values])).rows)
    await client.query("COMMIT")
    return result
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw e
  } finally {
    client.release()
  }
})

const view = (r: Row): ThreadView => {
  const contact = r.c_exists
    ? { firstName: r.c_first ?? null, lastName: r.c_last ?? null, company: r.c_company ?? null }
    : null
  const participant = String(r.participant)
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    inboxId: r.inbox_id,
    numberE164: r.number_e164,
    participant,
    contactId: r.contact_id ?? null,
    status: r.status,
    assigneeUid: r.assignee_uid ?? null,
    lastActivityAt: iso(r.last_activity_at),
    preview: r.preview ?? null,
    unread: Number(r.unread),
    createdAt: iso(r.created_at),
    contactName: contactNameOf(contact, participant)
  }
}

const listConversations = async (u: URL, res: ServerResponse) => {
  const limitParam = u.searchParams.get("limit")
  const limit = limitParam === null ? 50 : Number(limitParam)
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return error(res, 400, "invalid_argument", "limit: must be an integer from 1 to 100")
  }
  const statusParam = u.searchParams.get("status")
  if (statusParam !== null && statusParam !== "open" && statusParam !== "done") {
    return error(res, 400, "invalid_argument", "status: open or done")
  }
  const scope = `conversations:${workspaceId}:${statusParam ?? ""}`
  const cursor = u.searchParams.get("cursor")
  let after: { lastActivityAt: string; id: string } | null = null
  if (cursor !== null) {
    const position = decodeCursor(scope, cursor)
    if (position === null) return error(res, 400, "invalid_argument", "cursor is invalid")
    after = { lastActivityAt: position[0]!, id: position[1]! }
  }
  const st = listThreadsStatement(workspaceId, statusParam, limit, after)
  const { rows } = await pool.query(st.text, [...st.values])
  const views = rows.map(view)
  const last = views[views.length - 1]
  const nextCursor = views.length === limit && last ? encodeCursor(scope, [last.lastActivityAt, last.id]) : null
  send(res, 200, { conversations: views.map(toSummary), nextCursor })
}

const server = createServer((req, res) => {
  const u = new URL(req.url ?? "/", "http://baseline")
  const handle = async () => {
    if (req.method === "POST" && u.pathname === "/v1/api/messages") return sendRoute(req, res)
    if (req.method === "GET" && u.pathname === "/v1/api/conversations") return listConversations(u, res)
    req.resume()
    return error(res, 404, "not_found", "No such route")
  }
  handle().catch((e) => {
    console.error(e)
    if (!res.headersSent) error(res, 500, "internal", "Internal error")
  })
})

server.listen(port, host, () => console.log(`messages baseline listening on http://${host}:${port}`))

const shutdown = () => {
  server.close()
  server.closeAllConnections()
  void pool.end().finally(() => process.exit(0))
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
