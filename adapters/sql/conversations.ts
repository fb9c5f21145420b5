/** ConversationStore on SQL. Search is full text (`simple` config) with prefix matching per word. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { type ActivityRecord, contactNameOf, searchableText, type Thread, type ThreadView, words } from "../../core/conversations/model.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import { iso, isUniqueViolation, json } from "./rows.ts"

type Row = Record<string, unknown>

const toThread = (r: Row): Thread => ({
  id: String(r.id),
  workspaceId: String(r.workspace_id),
  inboxId: String(r.inbox_id),
  numberE164: String(r.number_e164),
  participant: String(r.participant),
  contactId: (r.contact_id as string | null) ?? null,
  status: r.status as Thread["status"],
  assigneeUid: (r.assignee_uid as string | null) ?? null,
  lastActivityAt: iso(r.last_activity_at),
  preview: (r.preview as string | null) ?? null,
  unread: Number(r.unread),
  createdAt: iso(r.created_at)
})

const toView = (r: Row): ThreadView => {
  const t = toThread(r)
  const contact = r.c_exists ? { firstName: (r.c_first as string | null) ?? null, lastName: (r.c_last as string | null) ?? null, company: (r.c_company as string | null) ?? null } : null
  return { ...t, contactName: contactNameOf(contact, t.participant) }
}

const toActivity = (r: Row, prefix = ""): ActivityRecord => ({
  id: String(r[`${prefix}id`]),
  workspaceId: String(r[`${prefix}workspace_id`]),
  conversationId: String(r[`${prefix}conversation_id`]),
  type: r[`${prefix}type`] as ActivityRecord["type"],
  direction: (r[`${prefix}direction`] as ActivityRecord["direction"]) ?? null,
  authorUid: (r[`${prefix}author_uid`] as string | null) ?? null,
  body: (r[`${prefix}body`] as string | null) ?? null,
  media: json(r[`${prefix}media`]),
  deliveryStatus: (r[`${prefix}delivery_status`] as ActivityRecord["deliveryStatus"]) ?? null,
  carrierMessageId: (r[`${prefix}carrier_message_id`] as string | null) ?? null,
  call: r[`${prefix}call`] === null || r[`${prefix}call`] === undefined ? null : json(r[`${prefix}call`]),
  aiTags: json(r[`${prefix}ai_tags`]),
  callTranscript: r[`${prefix}call_transcript`] === null || r[`${prefix}call_transcript`] === undefined ? null : json(r[`${prefix}call_transcript`]),
  createdAt: iso(r[`${prefix}created_at`])
})

/**
 * The indexed text: the words search sees (core `words`: lower-cased runs of letters and digits)
 * joined by spaces. Postgres's own parser keeps `ada@example.com`, `3.14` or `foo/bar` as single
 * tokens, so indexing the raw text would miss `example`, `14` or `bar`, which the memory store finds.
 */
const searchDocument = (a: Pick<ActivityRecord, "body" | "callTranscript">) => words(searchableText(a)).join(" ")

/** `word:*` terms joined by AND; words are already lower-cased runs of letters and digits. */
const prefixQuery = (words: ReadonlyArray<string>) => words.map((w) => `${w}:*`).join(" & ")

export const layer = Layer.effect(
  ConversationStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const die = Effect.orDie
    const viewSelect = sql`
      SELECT t.*, c.id IS NOT NULL AS c_exists, c.first_name AS c_first, c.last_name AS c_last, c.company AS c_company
      FROM threads t LEFT JOIN contacts c ON c.workspace_id = t.workspace_id AND c.id = t.contact_id`

    return ConversationStore.of({
      findThread: (ws, number, participant) =>
        die(sql<Row>`SELECT * FROM threads WHERE workspace_id = ${ws} AND number_e164 = ${number} AND participant = ${participant}`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(toThread)))
        ),
      insertThread: (t) =>
        Effect.gen(function* () {
          const inserted = yield* sql<Row>`
            INSERT INTO threads (workspace_id, id, inbox_id, number_e164, participant, contact_id, status, assignee_uid, last_activity_at, preview, unread, created_at)
            VALUES (${t.workspaceId}, ${t.id}, ${t.inboxId}, ${t.numberE164}, ${t.participant}, ${t.contactId}, ${t.status}, ${t.assigneeUid},
                    ${t.lastActivityAt}::timestamptz, ${t.preview}, ${t.unread}, ${t.createdAt}::timestamptz)
            ON CONFLICT (workspace_id, number_e164, participant) DO NOTHING RETURNING *`
          if (inserted[0]) return toThread(inserted[0])
          const existing = yield* sql<Row>`SELECT * FROM threads WHERE workspace_id = ${t.workspaceId} AND number_e164 = ${t.numberE164} AND participant = ${t.participant}`
          return toThread(existing[0]!)
        }).pipe(die),
      getThread: (ws, id) =>
        die(sql<Row>`${viewSelect} WHERE t.workspace_id = ${ws} AND t.id = ${id}`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map(toView)))
        ),
      updateThread: (t) =>
        die(sql`UPDATE threads SET contact_id = ${t.contactId}, status = ${t.status}, assignee_uid = ${t.assigneeUid},
          last_activity_at = ${t.lastActivityAt}::timestamptz, preview = ${t.preview}, unread = ${t.unread}
          WHERE workspace_id = ${t.workspaceId} AND id = ${t.id}`),
      listThreads: ({ workspaceId, status, limit, after }) => {
        const conditions = [sql`t.workspace_id = ${workspaceId}`]
        if (status !== null) conditions.push(sql`t.status = ${status}`)
        if (after !== null) conditions.push(sql`(t.last_activity_at, t.id) < (${after.lastActivityAt}::timestamptz, ${after.id}::uuid)`)
        return die(sql<Row>`${viewSelect} WHERE ${sql.and(conditions)} ORDER BY t.last_activity_at DESC, t.id DESC LIMIT ${limit}`).pipe(
          Effect.map((rs) => rs.map(toView))
        )
      },
      detachContact: (ws, contactId) => die(sql`UPDATE threads SET contact_id = NULL WHERE workspace_id = ${ws} AND contact_id = ${contactId}`),
      insertActivity: (a) =>
        sql`INSERT INTO activities (workspace_id, id, conversation_id, type, direction, author_uid, body, media, delivery_status,
              carrier_message_id, call, ai_tags, call_transcript, created_at, search)
            VALUES (${a.workspaceId}, ${a.id}, ${a.conversationId}, ${a.type}, ${a.direction}, ${a.authorUid}, ${a.body},
              ${JSON.stringify(a.media)}::jsonb, ${a.deliveryStatus}, ${a.carrierMessageId},
              ${a.call === null ? null : JSON.stringify(a.call)}::jsonb, ${JSON.stringify(a.aiTags)}::jsonb,
              ${a.callTranscript === null ? null : JSON.stringify(a.callTranscript)}::jsonb, ${a.createdAt}::timestamptz,
              to_tsvector('simple', ${searchDocument(a)}))`.pipe(
          Effect.asVoid,
          Effect.catchAll((e) => Effect.die(isUniqueViolation(e) ? new Error(`duplicate carrier message id ${a.carrierMessageId}`) : e))
        ),
      getActivity: (ws, id) =>
        die(sql<Row>`SELECT * FROM activities WHERE workspace_id = ${ws} AND id = ${id}`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map((r) => toActivity(r))))
        ),
      listActivities: (ws, conversationId) =>
        die(sql<Row>`SELECT * FROM activities WHERE workspace_id = ${ws} AND conversation_id = ${conversationId} ORDER BY created_at, id`).pipe(
          Effect.map((rs) => rs.map((r) => toActivity(r)))
        ),
      findByCarrierId: (carrierMessageId) =>
        die(sql<Row>`SELECT * FROM activities WHERE carrier_message_id = ${carrierMessageId}`).pipe(
          Effect.map((rs) => Option.fromNullable(rs[0]).pipe(Option.map((r) => toActivity(r))))
        ),
      setDeliveryStatus: (ws, id, status) => die(sql`UPDATE activities SET delivery_status = ${status} WHERE workspace_id = ${ws} AND id = ${id}`),
      search: (ws, words, limit) =>
        die(sql<Row>`
          SELECT a.id AS a_id, a.workspace_id AS a_workspace_id, a.conversation_id AS a_conversation_id, a.type AS a_type,
            a.direction AS a_direction, a.author_uid AS a_author_uid, a.body AS a_body, a.media AS a_media,
            a.delivery_status AS a_delivery_status, a.carrier_message_id AS a_carrier_message_id, a.call AS a_call,
            a.ai_tags AS a_ai_tags, a.call_transcript AS a_call_transcript, a.created_at AS a_created_at, t.*
          FROM activities a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
          WHERE a.workspace_id = ${ws} AND a.search @@ to_tsquery('simple', ${prefixQuery(words)})
          ORDER BY a.created_at DESC, a.id DESC LIMIT ${limit}`).pipe(
          Effect.map((rs) => rs.map((r) => ({ activity: toActivity(r, "a_"), thread: toThread(r) })))
        )
    })
  })
)
