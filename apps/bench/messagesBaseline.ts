/**
 * Messaging benchmark baseline: bare `node:http` + `pg`, no auth, rate limiting, idempotency,
 * schema decoding or contact lookup. The workspace and its sending number are fixed.
 *
 * - POST /v1/api/messages `{to, body}`: one transaction doing the writes a test-key send does
 *   (upsert the thread by (workspace, number, participant), insert the activity with its tsvector,
 *   update the thread's last_activity_at/preview/unread, insert an outbox_events row); answers 201
 *   with the service's JSON shape.
 * - GET /v1/api/conversations?limit=&status=&cursor=: the same SQL as adapters/sql/conversations.ts
 *   listThreads (messagesSql.ts) and the same JSON (core toSummary); cursors are its own HMAC'd
 *   keyset positions (like core/pagination.ts), verified on the way back in.
 *
 * Env: DATABASE_URL, WORKSPACE_ID, INBOX_ID, NUMBER_E164, PORT (8091), HOST (127.0.0.1).
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { contactNameOf, previewOf, searchableText, toSummary, type ThreadView } from "../../core/conversations/model.ts"
import { listThreadsStatement } from "./messagesSql.ts"

const url = process.env["DATABASE_URL"]
const workspaceId = process.env["WORKSPACE_ID"]
const inboxId = process.env["INBOX_ID"]
const numberE164 = process.env["NUMBER_E164"]
if (!url || !workspaceId || !inboxId || !numberE164) throw new Error("DATABASE_URL, WORKSPACE_ID, INBOX_ID and NUMBER_E164 are required")
const port = Number(process.env["PORT"] ?? 8091)
const host = process.env["HOST"] ?? "127.0.0.1"

// Same pool size as the service (apps/server/main.ts).
const pool = new pg.Pool({ connectionString: url, max: 20 })

const iso = (v: unknown) => (v instanceof Date ? v : new Date(String(v))).toISOString()
type Row = Record<string, any>

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}
const error = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, { error: { code, message, requestId: "baseline" } })

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

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString()))
    req.on("error", reject)
  })

const E164 = /^\+[1-9]\d{6,14}$/

const sendMessage = async (req: IncomingMessage, res: ServerResponse) => {
  let input: { to?: unknown; body?: unknown }
  try {
    input = JSON.parse(await readBody(req))
  } catch {
    return error(res, 400, "invalid_argument", "body is not JSON")
  }
  const { to, body } = input
  if (typeof body !== "string" || body.length < 1 || body.length > 1600) return error(res, 400, "invalid_argument", "body: 1 to 1600 characters")
  if (typeof to !== "string" || !E164.test(to)) return error(res, 400, "invalid_argument", "to: not an E.164 number")
  const now = new Date().toISOString()
  const activityId = randomUUID()
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const thread = await client.query<{ id: string; inbox_id: string }>(
      `INSERT INTO threads (workspace_id, id, inbox_id, number_e164, participant, contact_id, status, assignee_uid, last_activity_at, preview, unread, created_at)
       VALUES ($1, $2, $3, $4, $5, NULL, 'open', NULL, $6::timestamptz, NULL, 0, $6::timestamptz)
       ON CONFLICT (workspace_id, number_e164, participant) DO UPDATE SET participant = EXCLUDED.participant
       RETURNING id, inbox_id`,
      [workspaceId, randomUUID(), inboxId, numberE164, to, now]
    )
    const conversationId = thread.rows[0]!.id
    await client.query(
      `INSERT INTO activities (workspace_id, id, conversation_id, type, direction, author_uid, body, media, delivery_status,
         carrier_message_id, call, ai_tags, call_transcript, created_at, search)
       VALUES ($1, $2, $3, 'message', 'outbound', NULL, $4, '[]'::jsonb, 'simulated', NULL, NULL, '[]'::jsonb, NULL, $5::timestamptz,
         to_tsvector('simple', $6))`,
      [workspaceId, activityId, conversationId, body, now, searchableText({ body, callTranscript: null })]
    )
    await client.query(
      "UPDATE threads SET last_activity_at = $3::timestamptz, preview = $4, unread = 0 WHERE workspace_id = $1 AND id = $2",
      [workspaceId, conversationId, now, previewOf(body, 0)]
    )
    await client.query(
      "INSERT INTO outbox_events (id, workspace_id, type, data, created_at) VALUES ($1, $2, 'message.delivered', $3::jsonb, $4::timestamptz)",
      [randomUUID(), workspaceId, JSON.stringify({ conversationId, inboxId: thread.rows[0]!.inbox_id, activityId }), now]
    )
    await client.query("COMMIT")
    send(res, 201, {
      message: {
        id: activityId, type: "message", direction: "outbound", authorUid: null, body, media: [], deliveryStatus: "simulated",
        call: null, aiTags: [], callTranscript: null, createdAt: now
      },
      conversationId,
      simulated: true
    })
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw e
  } finally {
    client.release()
  }
}

const view = (r: Row): ThreadView => {
  const contact = r.c_exists ? { firstName: r.c_first ?? null, lastName: r.c_last ?? null, company: r.c_company ?? null } : null
  const participant = String(r.participant)
  return {
    id: r.id, workspaceId: r.workspace_id, inboxId: r.inbox_id, numberE164: r.number_e164, participant, contactId: r.contact_id ?? null,
    status: r.status, assigneeUid: r.assignee_uid ?? null, lastActivityAt: iso(r.last_activity_at), preview: r.preview ?? null,
    unread: Number(r.unread), createdAt: iso(r.created_at), contactName: contactNameOf(contact, participant)
  }
}

const listConversations = async (u: URL, res: ServerResponse) => {
  const limitParam = u.searchParams.get("limit")
  const limit = limitParam === null ? 50 : Number(limitParam)
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return error(res, 400, "invalid_argument", "limit: must be an integer from 1 to 100")
  const statusParam = u.searchParams.get("status")
  if (statusParam !== null && statusParam !== "open" && statusParam !== "done") return error(res, 400, "invalid_argument", "status: open or done")
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
    if (req.method === "POST" && u.pathname === "/v1/api/messages") return sendMessage(req, res)
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
