/** ConversationStore on SQL. Search is full text (`simple` config) with prefix matching per word. */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Option, String as Str } from "effect"
import {
  type ActivityRecord,
  contactNameOf,
  searchableText,
  type SearchQuery,
  type ThreadView,
  words
} from "../../core/conversations/model.ts"
import { ConversationStore, type ThreadTouch } from "../../core/conversations/store.ts"
import { bucketLexeme, indexQuery, windowsFrom } from "./messageSearch.ts"
import { PREPARED } from "./prepared.ts"
import { isUniqueViolation } from "./rows.ts"
import { activities, joinedActivities, searchRows, threads } from "./tables.ts"

/** A thread row of `viewSelect`: the thread's columns and its contact's name parts. */
const toView = (r: Record<string, unknown>): ThreadView => {
  const t = threads.decode(r)
  const contact = r["c_exists"]
    ? {
      firstName: r["c_first"] as string | null,
      lastName: r["c_last"] as string | null,
      company: r["c_company"] as string | null
    }
    : null
  return { ...t, contactName: contactNameOf(contact, t.participant) }
}

/** A thread's columns, named (the send's prepared statement). */
const threadColumns = threads.columns()

/** The columns a touch sets, and only those. */
const columnsOf = (touch: ThreadTouch) =>
  Object.fromEntries(Object.entries(touch).map(([field, value]) => [Str.camelToSnake(field), value]))

/**
 * The indexed text: the words search sees (core `words`: lower-cased runs of letters and digits)
 * joined by spaces. Postgres's own parser keeps `ada@example.com`, `3.14` or `foo/bar` as single
 * tokens, so indexing the raw text would miss `example`, `14` or `bar`, which the memory store finds.
 */
const searchDocument = (a: Pick<ActivityRecord, "body" | "callTranscript">) => words(searchableText(a)).join(" ")

/** The buckets a search of several words reads before the rest: the newest 30 days, then 60 (messageSearch.ts). */
export const MESSAGE_WINDOWS = [1, 2]

/** The words joined by AND, the last as `word:*` when it is a prefix; words are lower-cased runs of letters and digits. */
export const tsQuery = (query: SearchQuery) =>
  query.words.map((w, i) => (query.prefix && i === query.words.length - 1 ? `${w}:*` : w)).join(" & ")

export const layer = Layer.effect(
  ConversationStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const die = Effect.orDie
    const viewSelect = sql`
      SELECT t.*, c.id IS NOT NULL AS c_exists, c.first_name AS c_first, c.last_name AS c_last, c.company AS c_company
      FROM threads t LEFT JOIN contacts c ON c.workspace_id = t.workspace_id AND c.id = t.contact_id`

    const one = <A>(decode: (r: Record<string, unknown>) => A) =>
      Effect.map((rs: ReadonlyArray<Record<string, unknown>>) => Option.fromNullable(rs[0]).pipe(Option.map(decode)))
    const findThread = (ws: string, number: string, participant: string) =>
      sql`SELECT * FROM threads WHERE workspace_id = ${ws} AND number_e164 = ${number} AND participant = ${participant}`
        .pipe(one(threads.decode))

    return ConversationStore.of({
      findThread: (ws, number, participant) => die(findThread(ws, number, participant)),
      insertThread: (t) =>
        Effect.gen(function*() {
          const inserted = yield* sql`INSERT INTO threads ${sql.insert(threads.row(t))}
            ON CONFLICT (workspace_id, number_e164, participant) DO NOTHING RETURNING *`
          if (inserted[0]) return threads.decode(inserted[0])
          return Option.getOrThrow(yield* findThread(t.workspaceId, t.numberE164, t.participant))
        }).pipe(die),
      getThread: (ws, id) => die(sql`${viewSelect} WHERE t.workspace_id = ${ws} AND t.id = ${id}`).pipe(one(toView)),
      updateThread: (t) =>
        die(
          sql`UPDATE threads SET ${
            sql.update(threads.row(t), ["workspace_id", "id", "inbox_id", "number_e164", "participant", "created_at"])
          }
          WHERE workspace_id = ${t.workspaceId} AND id = ${t.id}`
        ),
      touchThread: (ws, id, touch) =>
        die(sql`UPDATE threads SET ${sql.update(columnsOf(touch))} WHERE workspace_id = ${ws} AND id = ${id}`),
      // One statement: the thread upserted (a new one attached to the participant's earliest
      // contact, an existing one touched and attached if it has none), the activity inserted on it.
      // Prepared, so planned once for every phone: the `OFFSET 0` keeps the contact lookup from
      // walking contacts_recent in order (the generic plan did, filtering every contact of the
      // workspace for a phone no contact has, a cost that grows with the workspace; tests hold
      // the plan), and the phone as a sub-select hides its value from custom plans too, which then
      // cost what the generic one does, so Postgres settles on the generic plan instead of
      // planning every send.
      recordOutbound: (t, a) => {
        const { contact_id, ...thread } = threads.row(t)
        const { conversation_id: _, ...activity } = activities.row(a)
        const values = (row: Record<string, unknown>) => sql.csv(Object.values(row).map((v) => sql`${v}`))
        return sql`${sql.literal(PREPARED)}
          WITH thread AS (
            INSERT INTO threads (${sql.literal(Object.keys(thread).join(", "))}, contact_id)
            VALUES (${values(thread)}, COALESCE(${contact_id}::uuid, (
              SELECT id FROM (
                SELECT id, created_at FROM contacts WHERE workspace_id = ${t.workspaceId} AND phones @> (SELECT ${
          JSON.stringify([{ value: t.participant }])
        }::jsonb)
                OFFSET 0
              ) phone_contacts ORDER BY created_at, id LIMIT 1)))
            ON CONFLICT (workspace_id, number_e164, participant) DO UPDATE
              SET last_activity_at = EXCLUDED.last_activity_at, preview = EXCLUDED.preview, unread = EXCLUDED.unread,
                  contact_id = COALESCE(threads.contact_id, EXCLUDED.contact_id)
            RETURNING ${sql.literal(threadColumns)}
          ), activity AS (
            INSERT INTO activities (${sql.literal(Object.keys(activity).join(", "))}, conversation_id, search)
            VALUES (${values(activity)}, (SELECT id FROM thread), to_tsvector('simple', ${searchDocument(a)}))
          )
          SELECT ${sql.literal(threadColumns)} FROM thread`.pipe(
          Effect.map((rs) => threads.decode(rs[0])),
          Effect.catchAll((e) =>
            Effect.die(isUniqueViolation(e) ? new Error(`duplicate carrier message id ${a.carrierMessageId}`) : e)
          )
        )
      },
      listThreads: ({ workspaceId, status, limit, after }) => {
        const conditions = [sql`t.workspace_id = ${workspaceId}`]
        if (status !== null) conditions.push(sql`t.status = ${status}`)
        if (after !== null) {
          conditions.push(sql`(t.last_activity_at, t.id) < (${after.lastActivityAt}::timestamptz, ${after.id}::uuid)`)
        }
        return die(
          sql`${viewSelect} WHERE ${sql.and(conditions)} ORDER BY t.last_activity_at DESC, t.id DESC LIMIT ${limit}`
        ).pipe(
          Effect.map((rs) => rs.map(toView))
        )
      },
      detachContact: (ws, contactId) =>
        die(sql`UPDATE threads SET contact_id = NULL WHERE workspace_id = ${ws} AND contact_id = ${contactId}`),
      unassignMember: (ws, memberUid) =>
        Effect.orDie(
          sql`UPDATE threads SET assignee_uid = NULL WHERE workspace_id = ${ws} AND assignee_uid = ${memberUid} RETURNING id`
        ).pipe(Effect.map((rs) => rs.length)),
      insertActivity: (a) => {
        const row = activities.row(a)
        return sql`INSERT INTO activities (${sql.literal(Object.keys(row).join(", "))}, search)
            VALUES (${sql.csv(Object.values(row).map((v) => sql`${v}`))}, to_tsvector('simple', ${searchDocument(a)}))`
          .pipe(
            Effect.asVoid,
            Effect.catchAll((e) =>
              Effect.die(isUniqueViolation(e) ? new Error(`duplicate carrier message id ${a.carrierMessageId}`) : e)
            )
          )
      },
      getActivity: (ws, id) =>
        die(sql`SELECT * FROM activities WHERE workspace_id = ${ws} AND id = ${id}`).pipe(one(activities.decode)),
      listActivities: (ws, conversationId) =>
        die(
          sql`SELECT * FROM activities WHERE workspace_id = ${ws} AND conversation_id = ${conversationId} ORDER BY created_at, id`
        ).pipe(
          Effect.map((rs) => rs.map(activities.decode))
        ),
      findByCarrierId: (carrierMessageId) =>
        die(sql`SELECT * FROM activities WHERE carrier_message_id = ${carrierMessageId}`).pipe(one(activities.decode)),
      setDeliveryStatus: (ws, id, status) =>
        die(sql`UPDATE activities SET delivery_status = ${status} WHERE workspace_id = ${ws} AND id = ${id}`),
      setCallMedia: (ws, id, media) =>
        die(
          sql`UPDATE activities SET media = ${JSON.stringify(media)}::jsonb WHERE workspace_id = ${ws} AND id = ${id}`
        ),
      setCallSummary: (ws, id, summary) =>
        die(
          sql`UPDATE activities SET call = jsonb_set(call, '{summary}', to_jsonb(${summary}::text)) WHERE workspace_id = ${ws} AND id = ${id} AND call IS NOT NULL`
        ),
      setCallTranscript: (ws, id, callTranscript) =>
        die(sql<{ body: string | null }>`SELECT body FROM activities WHERE workspace_id = ${ws} AND id = ${id}`).pipe(
          Effect.flatMap((rs) =>
            rs[0] === undefined
              ? Effect.void
              : die(sql`UPDATE activities SET call_transcript = ${JSON.stringify(callTranscript)}::jsonb,
                  search = to_tsvector('simple', ${searchDocument({ body: rs[0].body, callTranscript })})
                  WHERE workspace_id = ${ws} AND id = ${id}`)
          ),
          Effect.asVoid
        ),
      // billedMinutes in SQL: ceil of the seconds over 60, negatives as 0; a missing or non-numeric duration counts nothing.
      agentCallMinutes: (ws, fromIso, toIso) =>
        // CASE, not AND: Postgres may cast before it filters, and a non-numeric duration must not fail the cast.
        die(
          sql<
            { minutes: string | number | null }
          >`SELECT sum(CASE WHEN jsonb_typeof(call -> 'durationSeconds') = 'number'
              THEN ceil(greatest((call ->> 'durationSeconds')::numeric, 0) / 60) END) AS minutes
          FROM activities
          WHERE workspace_id = ${ws} AND type = 'call' AND created_at >= ${fromIso}::timestamptz AND created_at < ${toIso}::timestamptz
            AND call ->> 'answeredBy' = 'agent' AND (call ->> 'simulated') IS DISTINCT FROM 'true'`
        ).pipe(
          Effect.map((rs) => Number(rs[0]?.minutes ?? 0))
        ),
      listCalls: (ws, limit) =>
        die(sql`
          SELECT ${sql.literal(activities.columns("a"))}, t.*
          FROM activities a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
          WHERE a.workspace_id = ${ws} AND a.type IN ('call', 'voicemail')
          ORDER BY a.created_at DESC, a.id DESC LIMIT ${limit}`).pipe(
          Effect.map((rs) => rs.map((r) => ({ activity: joinedActivities.decode(r), thread: threads.decode(r) })))
        ),
      // The page is chosen from activities alone, then joined: joined first, every match (thousands
      // for a common pair of words) would look up its thread before the sort kept `limit` of them.
      // One word is one key of activities_search, and Postgres picks the plan from its estimated
      // frequency: a common word walks activities_recent newest first, a rare one sorts its matches.
      // Several words: the newest buckets first (messageSearch.ts) from activities_search_document,
      // each row checked against the exact query, which the index's prefix keys only approach.
      search: (ws, query, limit) => {
        const exact = tsQuery(query)
        const newestFirst = (conditions: ReadonlyArray<Fragment>) =>
          sql`SELECT workspace_id, id, conversation_id, type, direction, body, created_at FROM activities
            WHERE ${sql.and([sql`workspace_id = ${ws}`, ...conditions])}
            ORDER BY created_at DESC, id DESC LIMIT ${limit}`
        const page = (rows: Fragment) =>
          die(sql`
            SELECT a.id, a.conversation_id, a.type, a.direction, a.body, a.created_at, t.participant, t.number_e164
            FROM (${rows}) a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
            ORDER BY a.created_at DESC, a.id DESC`).pipe(Effect.map((rs) => rs.map(searchRows.decode)))
        if (query.words.length === 1) return page(newestFirst([sql`search @@ to_tsquery('simple', ${exact})`]))
        const keys = indexQuery(query)
        // ts_match_vq is `@@` as a function, which no index serves: it checks rows, never picks them.
        const check = sql`ts_match_vq(search, to_tsquery('simple', ${exact}))`
        return Effect.flatMap(
          die(sql<{ created_at: string | Date }>`${sql.literal(PREPARED)} SELECT created_at FROM activities
            WHERE workspace_id = ${ws} ORDER BY created_at DESC, id DESC LIMIT 1`),
          (rs) => {
            if (rs.length === 0) return Effect.succeed([])
            const { olderThan, windows } = windowsFrom(rs[0]!.created_at, MESSAGE_WINDOWS)
            const branches = [
              ...windows.map((buckets) =>
                newestFirst([
                  sql`search_document(search, created_at) @@ ${`${keys} & (${
                    buckets.map(bucketLexeme).join(" | ")
                  })`}::tsquery`,
                  check
                ])
              ),
              newestFirst([
                sql`created_at < ${olderThan}`,
                sql`search_document(search, created_at) @@ ${keys}::tsquery`,
                check
              ])
            ]
            return page(sql`${sql.join(" UNION ALL ", false)(branches.map((b) => sql`(${b})`))} LIMIT ${limit}`)
          }
        )
      }
    })
  })
)
