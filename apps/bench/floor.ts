/**
 * The routes the bare benchmark floors share, over any driver: baseline.ts and messagesBaseline.ts
 * on a `pg` pool, embeddedFloor.ts on one PGlite instance. The same SQL as the service (sql.ts,
 * messagesSql.ts) and the same JSON shapes, without auth, rate limiting, request ids, idempotency or
 * schema decoding; the workspace (and its sending number) is fixed.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { previewOf, searchableText } from "../../core/conversations/model.ts"
import { cursorScope, getStatement, listStatement, type Statement } from "./sql.ts"

export type Row = Record<string, any>
/** Runs one statement and answers its rows. */
export type Query = (statement: Statement) => Promise<ReadonlyArray<Row>>
/** Runs `body` in one transaction (its statements through the given query), committed when it resolves. */
export type Transaction = <A>(body: (query: Query) => Promise<A>) => Promise<A>

export const iso = (v: unknown) => (v instanceof Date ? v : new Date(String(v))).toISOString()

export const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

export const error = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, { error: { code, message, requestId: "baseline" } })

export const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString()))
    req.on("error", reject)
  })

// ---- contacts: GET /v1/api/contacts/{id} and GET /v1/api/contacts?q=&limit=

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const CONTACT_PATH = /^\/v1\/api\/contacts\/([^/]+)$/

export const detail = (r: Row) => ({
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

// A signed keyset cursor like core/kernel/pagination.ts (HMAC-SHA256 truncated to 16 bytes), so the
// floor pays a comparable cost; it is not accepted back (no `cursor` parameter here).
const secret = randomBytes(32)
const cursor = (scope: string, position: ReadonlyArray<string>) => {
  const body = Buffer.from(JSON.stringify({ s: scope, p: position, t: Date.now() })).toString("base64url")
  return `${body}.${createHmac("sha256", secret).update(body).digest().subarray(0, 16).toString("base64url")}`
}

/** The two contact reads; answers false when `u` is neither route. */
export const contactReads =
  (workspaceId: string, query: Query) => async (u: URL, res: ServerResponse): Promise<boolean> => {
    const m = CONTACT_PATH.exec(u.pathname)
    if (m) {
      const id = decodeURIComponent(m[1]!)
      if (!UUID.test(id)) {
        error(res, 404, "not_found", "No such contact")
        return true
      }
      const rows = await query(getStatement(workspaceId, id))
      if (rows[0]) send(res, 200, { contact: detail(rows[0]) })
      else error(res, 404, "not_found", "No such contact")
      return true
    }
    if (u.pathname !== "/v1/api/contacts") return false
    const limitParam = u.searchParams.get("limit")
    const limit = limitParam === null ? 50 : Number(limitParam)
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
      error(res, 400, "invalid_argument", "limit: must be an integer from 1 to 200")
      return true
    }
    const q = u.searchParams.get("q") ?? ""
    const rows = await query(listStatement(workspaceId, q, limit))
    const last = rows[rows.length - 1]
    const nextCursor = rows.length === limit && last
      ? cursor(cursorScope(workspaceId, q), [iso(last.created_at), last.id])
      : null
    send(res, 200, { contacts: rows.map(summary), nextCursor })
    return true
  }

// ---- POST /v1/api/messages `{to, body}`

const E164 = /^\+[1-9]\d{6,14}$/

/**
 * The writes a test-key send does, in one transaction: upsert the thread by (workspace, number,
 * participant), insert the activity with its tsvector, update the thread's last_activity_at /
 * preview / unread, insert an outbox_events row; answers 201 with the service's JSON shape.
 */
export const sendMessage = (
  fixed: { readonly workspaceId: string; readonly inboxId: string; readonly numberE164: string },
  transaction: Transaction
) =>
async (req: IncomingMessage, res: ServerResponse) => {
  let input: { to?: unknown; body?: unknown }
  try {
    input = JSON.parse(await readBody(req))
  } catch {
    return error(res, 400, "invalid_argument", "body is not JSON")
  }
  const { to, body } = input
  if (typeof body !== "string" || body.length < 1 || body.length > 1600) {
    return error(res, 400, "invalid_argument", "body: 1 to 1600 characters")
  }
  if (typeof to !== "string" || !E164.test(to)) return error(res, 400, "invalid_argument", "to: not an E.164 number")
  const { workspaceId, inboxId, numberE164 } = fixed
  const now = new Date().toISOString()
  const activityId = randomUUID()
  const conversationId = await transaction(async (query) => {
    const thread = await query({
      text:
        `INSERT INTO threads (workspace_id, id, inbox_id, number_e164, participant, contact_id, status, assignee_uid, last_activity_at, preview, unread, created_at)
       VALUES ($1, $2, $3, $4, $5, NULL, 'open', NULL, $6::timestamptz, NULL, 0, $6::timestamptz)
       ON CONFLICT (workspace_id, number_e164, participant) DO UPDATE SET participant = EXCLUDED.participant
       RETURNING id, inbox_id`,
      values: [workspaceId, randomUUID(), inboxId, numberE164, to, now]
    })
    const conversationId = String(thread[0]!.id)
    await query({
      text:
        `INSERT INTO activities (workspace_id, id, conversation_id, type, direction, author_uid, body, media, delivery_status,
         carrier_message_id, call, ai_tags, call_transcript, created_at, search)
       VALUES ($1, $2, $3, 'message', 'outbound', NULL, $4, '[]'::jsonb, 'simulated', NULL, NULL, '[]'::jsonb, NULL, $5::timestamptz,
         to_tsvector('simple', $6))`,
      values: [workspaceId, activityId, conversationId, body, now, searchableText({ body, callTranscript: null })]
    })
    await query({
      text:
        "UPDATE threads SET last_activity_at = $3::timestamptz, preview = $4, unread = 0 WHERE workspace_id = $1 AND id = $2",
      values: [workspaceId, conversationId, now, previewOf(body, 0)]
    })
    await query({
      text:
        "INSERT INTO outbox_events (id, workspace_id, type, data, created_at) VALUES ($1, $2, 'message.delivered', $3::jsonb, $4::timestamptz)",
      // an object: pg and PGlite both send it as JSON
      values: [randomUUID(), workspaceId, { conversationId, inboxId: thread[0]!.inbox_id, activityId }, now]
    })
    return conversationId
  })
  send(res, 201, {
    message: {
      id: activityId,
      type: "message",
      direction: "outbound",
      authorUid: null,
      body,
      media: [],
      deliveryStatus: "simulated",
      call: null,
      aiTags: [],
      callTranscript: null,
      createdAt: now
    },
    conversationId,
    simulated: true
  })
}
