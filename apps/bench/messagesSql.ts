/**
 * The statements adapters/sql/conversations.ts compiles for `listThreads` and `search`, as plain
 * `pg` queries (used by the messaging baseline and the EXPLAIN step of messages.ts), plus the
 * two-step search shape the benchmark measures as a candidate fix. Keep in step with
 * adapters/sql/conversations.ts.
 */
import { MESSAGE_WINDOWS, tsQuery } from "../../adapters/sql/conversations.ts"
import { bucketLexeme, indexQuery, windowsFrom } from "../../adapters/sql/messageSearch.ts"
import { searchQuery, words } from "../../core/conversations/model.ts"
import type { Statement } from "./sql.ts"

const VIEW_SELECT = `
      SELECT t.*, c.id IS NOT NULL AS c_exists, c.first_name AS c_first, c.last_name AS c_last, c.company AS c_company
      FROM threads t LEFT JOIN contacts c ON c.workspace_id = t.workspace_id AND c.id = t.contact_id`

/** `GET /v1/api/conversations`: newest activity first, keyset on (last_activity_at, id). */
export const listThreadsStatement = (
  workspaceId: string,
  status: "open" | "done" | null,
  limit: number,
  after: { readonly lastActivityAt: string; readonly id: string } | null
): Statement => {
  const values: Array<unknown> = [workspaceId]
  const conditions = ["t.workspace_id = $1"]
  if (status !== null) {
    values.push(status)
    conditions.push(`t.status = $${values.length}`)
  }
  if (after !== null) {
    values.push(after.lastActivityAt, after.id)
    conditions.push(`(t.last_activity_at, t.id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`)
  }
  values.push(limit)
  const where = conditions.length === 1 ? conditions[0] : `(${conditions.join(" AND ")})`
  return {
    text: `${VIEW_SELECT} WHERE ${where} ORDER BY t.last_activity_at DESC, t.id DESC LIMIT $${values.length}`,
    values
  }
}

/** What the service searches for: at most 8 words, each a prefix (`w:*`), all required. */
export const searchWords = (q: string) => words(q).slice(0, 8)
export const prefixQuery = (ws: ReadonlyArray<string>) => ws.map((w) => `${w}:*`).join(" & ")

const SEARCH_COLUMNS = `
          SELECT a.id AS a_id, a.workspace_id AS a_workspace_id, a.conversation_id AS a_conversation_id, a.type AS a_type,
            a.direction AS a_direction, a.author_uid AS a_author_uid, a.body AS a_body, a.media AS a_media,
            a.delivery_status AS a_delivery_status, a.carrier_message_id AS a_carrier_message_id, a.call AS a_call,
            a.ai_tags AS a_ai_tags, a.call_transcript AS a_call_transcript, a.created_at AS a_created_at, t.*`

const ACTIVITY_COLUMNS = "workspace_id, id, conversation_id, type, direction, body, created_at"

/** The newest activity's time, where a search of several words begins its windows (messageSearch.ts). */
export const newestActivityStatement = (workspaceId: string): Statement => ({
  text: "SELECT created_at FROM activities WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1",
  values: [workspaceId]
})

/**
 * `GET /v1/api/messages/search?q=&limit=` as adapters/sql/conversations.ts `search` runs it (keep in
 * step): one word from activities_search; several, the newest buckets first from `newest` (the
 * newest activity's time; with no activities no statement runs: null).
 */
export const messageSearch = (
  workspaceId: string,
  q: string,
  limit: number,
  newest: Date | string | null
): Statement | null => {
  const query = searchQuery(q)!
  const values: Array<unknown> = [workspaceId, tsQuery(query), limit]
  const param = (v: unknown) => `$${values.push(v)}`
  const newestFirst = (where: string) =>
    `SELECT ${ACTIVITY_COLUMNS} FROM activities WHERE (workspace_id = $1 AND ${where}) ORDER BY created_at DESC, id DESC LIMIT $3`
  const page = (rows: string) => ({
    text: `
          SELECT a.id, a.conversation_id, a.type, a.direction, a.body, a.created_at, t.participant, t.number_e164
          FROM (${rows}) a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
          ORDER BY a.created_at DESC, a.id DESC`,
    values
  })
  if (query.words.length === 1) return page(newestFirst("search @@ to_tsquery('simple', $2)"))
  if (newest === null) return null
  const keys = indexQuery(query)
  const check = "ts_match_vq(search, to_tsquery('simple', $2))"
  const { olderThan, windows } = windowsFrom(newest, MESSAGE_WINDOWS)
  const branches = [
    ...windows.map((buckets) =>
      newestFirst(
        `search_document(search, created_at) @@ ${
          param(`${keys} & (${buckets.map(bucketLexeme).join(" | ")})`)
        }::tsquery AND ${check}`
      )
    ),
    newestFirst(
      `created_at < ${param(olderThan)} AND search_document(search, created_at) @@ ${param(keys)}::tsquery AND ${check}`
    )
  ]
  return page(`${branches.map((b) => `(${b})`).join(" UNION ALL ")} LIMIT $3`)
}

/** The message search's statements as the store runs them: the newest activity's time when it needs it, then the page. */
export const messageSearchFor = async (
  run: (statement: Statement) => Promise<ReadonlyArray<Record<string, unknown>>>,
  workspaceId: string,
  q: string,
  limit: number
): Promise<Statement | null> => {
  if (searchQuery(q)!.words.length === 1) return messageSearch(workspaceId, q, limit, null)
  const [newest] = await run(newestActivityStatement(workspaceId))
  return messageSearch(workspaceId, q, limit, (newest?.["created_at"] as Date | undefined) ?? null)
}

/**
 * The store's statement when issue 45 began, the benchmark's "before": every word a prefix, and
 * each match joined to its thread before the sort keeps the page.
 */
export const searchStatement = (workspaceId: string, q: string, limit: number): Statement => ({
  text: `
          SELECT a.id, a.conversation_id, a.type, a.direction, a.body, a.created_at, t.participant, t.number_e164
          FROM activities a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
          WHERE a.workspace_id = $1 AND a.search @@ to_tsquery('simple', $2)
          ORDER BY a.created_at DESC, a.id DESC LIMIT $3`,
  values: [workspaceId, prefixQuery(searchWords(q)), limit]
})

/**
 * Candidate fix, the shape adapters/sql/stores.ts uses for contacts: step 1 filters the newest
 * `window` activities in `activities_recent` order (common terms fill the page there); only when
 * that page is short, step 2 searches the older rows, where the GIN index is the fast plan because
 * matches are few. Step 2's keyset edge is the window's last row.
 */
export const twoStepStatements = (workspaceId: string, q: string, limit: number, window: number) => {
  const tsq = prefixQuery(searchWords(q))
  return {
    recent: {
      text: `${SEARCH_COLUMNS}
          FROM (SELECT * FROM activities WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $4) a
          JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
          WHERE a.search @@ to_tsquery('simple', $2)
          ORDER BY a.created_at DESC, a.id DESC LIMIT $3`,
      values: [workspaceId, tsq, limit, window]
    } satisfies Statement,
    edge: {
      text:
        "SELECT created_at, id FROM activities WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1",
      values: [workspaceId, window - 1]
    } satisfies Statement,
    older: (edge: { readonly created_at: Date; readonly id: string }, remaining: number): Statement => ({
      text: `${SEARCH_COLUMNS}
          FROM activities a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
          WHERE a.workspace_id = $1 AND (a.created_at, a.id) < ($4::timestamptz, $5::uuid) AND a.search @@ to_tsquery('simple', $2)
          ORDER BY a.created_at DESC, a.id DESC LIMIT $3`,
      values: [workspaceId, tsq, remaining, edge.created_at.toISOString(), edge.id]
    }),
    /**
     * Step 2 with the GIN index forced: the matches are collected in a MATERIALIZED CTE (no ORDER
     * BY/LIMIT inside, so walking activities_recent is never the cheap way to get them), then sorted.
     */
    olderGin: (edge: { readonly created_at: Date; readonly id: string }, remaining: number): Statement => ({
      text: `WITH m AS MATERIALIZED (
            SELECT * FROM activities
            WHERE workspace_id = $1 AND (created_at, id) < ($4::timestamptz, $5::uuid) AND search @@ to_tsquery('simple', $2))
          ${SEARCH_COLUMNS}
          FROM m a JOIN threads t ON t.workspace_id = a.workspace_id AND t.id = a.conversation_id
          ORDER BY a.created_at DESC, a.id DESC LIMIT $3`,
      values: [workspaceId, tsq, remaining, edge.created_at.toISOString(), edge.id]
    })
  }
}

/** ~50 message search terms: common words, mid-frequency and rare words, prefixes, two-word queries, misses. */
export const messageSearchTerms = (vocab: ReadonlyArray<string>) => {
  const tail = (k: number) => vocab[vocab.length - k]!
  return [
    // common words
    "the",
    "you",
    "thanks",
    "appointment",
    "tomorrow",
    "order",
    "confirmed",
    "delivery",
    "please",
    "call",
    // mid-frequency words
    "invoice",
    "technician",
    "refund",
    "warranty",
    "plumber",
    "dentist",
    "mortgage",
    "pedicure",
    "tacoma",
    "garcia",
    // rare words: the invented tail of the vocabulary, order/code numbers, a word never used
    tail(1),
    tail(25),
    tail(300),
    vocab[Math.floor(vocab.length * 0.6)]!,
    "48213",
    "7731",
    "xylophonist",
    // prefixes of 3-4 letters
    "app",
    "conf",
    "resc",
    "deli",
    "sch",
    "tom",
    "inv",
    "pay",
    "tech",
    "ref",
    // two-word queries
    "appointment tomorrow",
    "order shipped",
    "refund invoice",
    "the you",
    "late driver",
    "dentist cleaning",
    `${tail(10)} the`,
    `${tail(40)} ${tail(60)}`,
    "thanks conf",
    "call back",
    "warranty plumber",
    "pick up"
  ]
}
