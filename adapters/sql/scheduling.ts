/**
 * SchedulingStore on SQL. The queue is `text_sends`: claims take due rows with FOR UPDATE SKIP
 * LOCKED, so several processes share the work; a broadcast's counts are columns of its row,
 * moved in the statement that settles each recipient, so they always add up.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { Ids } from "../../core/kernel/ids.ts"
import type { QuietHours } from "../../core/pacing/quietHours.ts"
import { type BroadcastRecord, CANCELED, type Failure, UNKNOWN_OUTCOME } from "../../core/scheduling/model.ts"
import { type ClaimedSend, type Completed, SchedulingStore, type Settlement } from "../../core/scheduling/store.ts"
import { joinedSends, scheduledMessages, textSends } from "./tables.ts"

type Row = Record<string, unknown>

const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString())
const json = <A>(v: unknown): A => (typeof v === "string" ? JSON.parse(v) : v) as A

const countsOf = (r: Row) => ({
  total: Number(r.total),
  sent: Number(r.sent),
  failed: Number(r.failed),
  skippedOptedOut: Number(r.skipped_opted_out),
  skippedCanceled: Number(r.skipped_canceled),
  pending: Number(r.pending)
})

const broadcastOf = (r: Row): BroadcastRecord => ({
  workspaceId: String(r.workspace_id),
  id: String(r.id),
  keyId: String(r.key_id),
  live: Boolean(r.live),
  from: (r.from as string | null) ?? null,
  body: String(r.body),
  mediaUrls: json(r.media_urls),
  sendAt: iso(r.send_at),
  state: r.state as BroadcastRecord["state"],
  counts: countsOf(r),
  createdAt: iso(r.created_at),
  completedAt: r.completed_at === null ? null : iso(r.completed_at)
})

const broadcastRow = (b: BroadcastRecord) => ({
  workspace_id: b.workspaceId,
  id: b.id,
  key_id: b.keyId,
  live: b.live,
  from: b.from,
  body: b.body,
  media_urls: JSON.stringify(b.mediaUrls),
  send_at: b.sendAt,
  state: b.state,
  total: b.counts.total,
  sent: b.counts.sent,
  failed: b.counts.failed,
  skipped_opted_out: b.counts.skippedOptedOut,
  skipped_canceled: b.counts.skippedCanceled,
  pending: b.counts.pending,
  created_at: b.createdAt,
  completed_at: b.completedAt
})

/** The counter a settled send moves to. */
const bucketOf = (o: Settlement): "sent" | "failed" | "skipped_opted_out" | "skipped_canceled" =>
  o.state === "sent"
    ? "sent"
    : o.state === "failed"
    ? "failed"
    : o.failure?.code === CANCELED
    ? "skipped_canceled"
    : "skipped_opted_out"

export const layer = Layer.effect(
  SchedulingStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const die = Effect.orDie

    /**
     * Moves `n` of a broadcast's recipients from `from` to `to` and, when none is left pending, ends
     * it (`completed` unless canceled). Answers the completion it caused. From `failed` to `failed`
     * (a swept send whose failure is then reported) moves nothing: one column cannot be set twice.
     */
    const moveCounts = (ws: string, id: string, from: "pending" | "failed", to: string, n: number, at: string) => {
      const leaving = from === "pending" ? n : 0
      const move = from === to ? sql`` : sql`${sql(from)} = b.${sql(from)} - ${n}, ${sql(to)} = b.${sql(to)} + ${n},`
      return Effect.map(
        sql`WITH old AS (SELECT completed_at FROM broadcasts WHERE workspace_id = ${ws} AND id = ${id} FOR UPDATE)
          UPDATE broadcasts b SET ${move}
            state = CASE WHEN b.state = 'active' AND b.pending - ${leaving} = 0 THEN 'completed' ELSE b.state END,
            completed_at = CASE WHEN b.pending - ${leaving} = 0 THEN coalesce(b.completed_at, ${at}::timestamptz)
              ELSE b.completed_at END
          FROM old WHERE b.workspace_id = ${ws} AND b.id = ${id}
          RETURNING b.*, (old.completed_at IS NULL AND b.completed_at IS NOT NULL) AS ended`,
        (rs): Option.Option<Completed> => {
          const r = rs[0]
          return r !== undefined && r.ended === true
            ? Option.some({ workspaceId: ws, broadcastId: id, counts: countsOf(r) })
            : Option.none()
        }
      )
    }

    const joined = (where: Statement.Statement<Row>) =>
      sql`SELECT m.*, ${sql.literal(joinedSends.columns("s"))} FROM scheduled_messages m
        JOIN text_sends s ON s.workspace_id = m.workspace_id AND s.source_id = m.id WHERE ${where}`
    const sendOf = textSends.decode
    const prefixedSend = joinedSends.decode

    return SchedulingStore.of({
      insertScheduled: (record, send) =>
        die(Effect.zipRight(
          sql`INSERT INTO scheduled_messages ${sql.insert(scheduledMessages.row(record))}`,
          sql`INSERT INTO text_sends ${sql.insert(textSends.row(send))}`
        )),
      getScheduled: (ws, id) =>
        die(joined(sql`m.workspace_id = ${ws} AND m.id = ${id}`)).pipe(
          Effect.map((rs) =>
            Option.map(Option.fromNullable(rs[0]), (r) => ({
              record: scheduledMessages.decode(r),
              send: prefixedSend(r)
            }))
          )
        ),
      listScheduled: ({ after, limit, states, workspaceId }) =>
        die(
          joined(
            sql`m.workspace_id = ${workspaceId}${states === null ? sql`` : sql` AND ${sql.in("s.state", states)}`}${
              after === null ? sql`` : sql` AND (m.send_at, m.id) > (${after.sendAt}::timestamptz, ${after.id})`
            } ORDER BY m.send_at, m.id LIMIT ${limit}`
          )
        ).pipe(
          Effect.map((rs) => rs.map((r) => ({ record: scheduledMessages.decode(r), send: prefixedSend(r) })))
        ),
      insertBroadcast: (record, sends) =>
        die(Effect.zipRight(
          sql`INSERT INTO broadcasts ${sql.insert(broadcastRow(record))}`,
          // Up to 10,000 recipients in one statement: one JSON parameter, typed by the table's row type.
          sends.length === 0 ? Effect.void : sql`INSERT INTO text_sends
            SELECT * FROM jsonb_populate_recordset(NULL::text_sends, ${
            JSON.stringify(sends.map(textSends.row))
          }::jsonb)`
        )),
      getBroadcast: (ws, id) =>
        die(sql`SELECT * FROM broadcasts WHERE workspace_id = ${ws} AND id = ${id}`).pipe(
          Effect.map((rs) => Option.map(Option.fromNullable(rs[0]), broadcastOf))
        ),
      listBroadcasts: ({ after, limit, workspaceId }) =>
        die(
          sql`SELECT * FROM broadcasts WHERE workspace_id = ${workspaceId}${
            after === null ? sql`` : sql` AND (created_at, id) < (${after.createdAt}::timestamptz, ${after.id})`
          } ORDER BY created_at DESC, id DESC LIMIT ${limit}`
        ).pipe(Effect.map((rs) => rs.map(broadcastOf))),
      listRecipients: ({ afterSeq, broadcastId, limit, states, workspaceId }) =>
        die(
          sql`SELECT * FROM text_sends WHERE workspace_id = ${workspaceId} AND source_id = ${broadcastId}${
            states === null ? sql`` : sql` AND ${sql.in("state", states)}`
          }${afterSeq === null ? sql`` : sql` AND seq > ${afterSeq}`} ORDER BY seq LIMIT ${limit}`
        ).pipe(
          Effect.map((rs) => rs.map(sendOf))
        ),
      cancel: (ws, sourceId, at) =>
        die(Effect.gen(function*() {
          const failure: Failure = { code: CANCELED, message: "Canceled before it was sent" }
          const skipped = yield* sql`UPDATE text_sends SET state = 'skipped', failure = ${
            JSON.stringify(failure)
          }::jsonb,
              claim_id = NULL, locked_until = NULL, updated_at = ${at}::timestamptz
            WHERE workspace_id = ${ws} AND source_id = ${sourceId} AND state = 'pending' RETURNING id`
          yield* sql`UPDATE broadcasts SET state = 'canceled' WHERE workspace_id = ${ws} AND id = ${sourceId}
            AND state = 'active'`
          const completed = skipped.length > 0
            ? yield* moveCounts(ws, sourceId, "pending", "skipped_canceled", skipped.length, at)
            : Option.none()
          return { skipped: skipped.length, completed }
        })),
      claimDue: (now, leaseMs, paceHorizonMs, limit) =>
        die(Effect.gen(function*() {
          const claimId = (yield* Ids).uuid()
          const nowTs = new Date(now).toISOString()
          const rows = yield* sql`
            UPDATE text_sends s SET claim_id = ${claimId}, locked_until = ${
            new Date(now + leaseMs).toISOString()
          }::timestamptz
            FROM (
              SELECT s2.workspace_id, s2.id, coalesce(c.offset_ms, 0) AS offset_ms FROM text_sends s2
              LEFT JOIN workspace_clocks c ON c.workspace_id = s2.workspace_id
              LEFT JOIN texting_pace p ON p.workspace_id = s2.workspace_id
              -- Due on its workspace's clock (the clock test helper moves it forward).
              WHERE s2.state = 'pending' AND s2.due_at <= ${nowTs}::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
                AND (s2.locked_until IS NULL OR s2.locked_until < ${nowTs}::timestamptz)
                AND (p.next_at_ms IS NULL OR p.next_at_ms <= ${now + paceHorizonMs})
              ORDER BY s2.due_at, s2.seq, s2.id LIMIT ${limit}
              FOR UPDATE OF s2 SKIP LOCKED
            ) due
            WHERE s.workspace_id = due.workspace_id AND s.id = due.id
            RETURNING s.*, due.offset_ms`
          if (rows.length === 0) return []
          const sourceIds = [...new Set(rows.map((r) => String(r.source_id)))]
          const wsIds = [...new Set(rows.map((r) => String(r.workspace_id)))]
          const scheduled = yield* sql`SELECT * FROM scheduled_messages WHERE ${sql.in("id", sourceIds)}`
          const broadcasts = yield* sql`SELECT id, key_id, live, "from", body, media_urls FROM broadcasts
            WHERE ${sql.in("id", sourceIds)}`
          const settings =
            yield* sql`SELECT w.id, w.texting_segments_per_minute, w.quiet_hours, a.draft->>'timezone' AS timezone
            FROM workspaces w LEFT JOIN agents a ON a.workspace_id = w.id WHERE ${sql.in("w.id", wsIds)}`
          const sources = new Map<string, Row>([...scheduled, ...broadcasts].map((r) => [String(r.id), r]))
          const byWorkspace = new Map<string, Row>(settings.map((r) => [String(r.id), r]))
          // RETURNING keeps no order: soonest first again, as the subquery chose them.
          const dueMs = (r: Row) => Date.parse(iso(r.due_at))
          const soonest = [...rows].sort((a, b) =>
            dueMs(a) - dueMs(b) || Number(a.seq) - Number(b.seq) || (String(a.id) < String(b.id) ? -1 : 1)
          )
          return soonest.flatMap((r): Array<ClaimedSend> => {
            const source = sources.get(String(r.source_id))
            const w = byWorkspace.get(String(r.workspace_id))
            if (source === undefined || w === undefined) return []
            return [{
              send: sendOf(r),
              claimId,
              keyId: String(source.key_id),
              live: Boolean(source.live),
              from: (source.from as string | null) ?? null,
              conversationId: (source.conversation_id as string | null | undefined) ?? null,
              body: String(source.body),
              mediaUrls: json(source.media_urls),
              quietHours: w.quiet_hours === null ? null : json<QuietHours>(w.quiet_hours),
              segmentsPerMinute: Number(w.texting_segments_per_minute),
              timeZone: (w.timezone as string | null) ?? null,
              clockOffsetMs: Number(r.offset_ms)
            }]
          })
        })),
      release: (ws, claimId, ids, dueAt) =>
        ids.length === 0 ?
          Effect.void :
          die(
            sql`UPDATE text_sends SET claim_id = NULL, locked_until = NULL${
              dueAt === null ? sql`` : sql`, due_at = ${dueAt}::timestamptz`
            } WHERE claim_id = ${claimId} AND state = 'pending' AND ${sql.in("id", ids)}`
          ),
      markSending: (ws, id, claimId, until) =>
        die(sql`UPDATE text_sends SET state = 'sending', locked_until = ${new Date(until).toISOString()}::timestamptz
          WHERE workspace_id = ${ws} AND id = ${id} AND claim_id = ${claimId} AND state = 'pending' RETURNING id`).pipe(
          Effect.map((rs) => rs.length === 1)
        ),
      settle: (ws, id, claimId, outcome, at) =>
        die(Effect.gen(function*() {
          // Its state before, read under the row's lock by the same statement that moves it.
          const rs = yield* sql`UPDATE text_sends s SET state = ${outcome.state}, message_id = ${outcome.messageId},
              failure = ${outcome.failure === null ? null : JSON.stringify(outcome.failure)}::jsonb,
              locked_until = NULL, updated_at = ${at}::timestamptz
            FROM (SELECT id, state FROM text_sends WHERE workspace_id = ${ws} AND id = ${id} AND claim_id = ${claimId}
              FOR UPDATE) before
            WHERE s.workspace_id = ${ws} AND s.id = before.id AND (before.state IN ('pending', 'sending')
              OR (before.state = 'failed' AND s.failure->>'code' = ${UNKNOWN_OUTCOME}))
            RETURNING s.workspace_id, s.source, s.source_id, before.state AS before`
          const r = rs[0]
          if (r === undefined) return { settled: false, completed: Option.none() }
          if (r.source !== "broadcast") return { settled: true, completed: Option.none() }
          const from = r.before === "failed" ? "failed" : "pending"
          const completed = yield* moveCounts(
            String(r.workspace_id),
            String(r.source_id),
            from,
            bucketOf(outcome),
            1,
            at
          )
          return { settled: true, completed }
        })),
      sweep: (now, at, all) =>
        die(Effect.gen(function*() {
          const failure: Failure = {
            code: UNKNOWN_OUTCOME,
            message:
              "The process sending this text stopped before recording the carrier's answer: it may have been delivered, and is not sent again"
          }
          const swept = yield* sql`UPDATE text_sends SET state = 'failed', failure = ${JSON.stringify(failure)}::jsonb,
              locked_until = NULL, updated_at = ${at}::timestamptz
            WHERE state = 'sending'${
            all ? sql`` : sql` AND locked_until < ${new Date(now).toISOString()}::timestamptz`
          } RETURNING workspace_id, source, source_id`
          // At the only worker's start, a lease on a pending send is a dead process's: ended now, not waited out.
          if (all) {
            yield* sql`UPDATE text_sends SET claim_id = NULL, locked_until = NULL
              WHERE state = 'pending' AND locked_until IS NOT NULL`
          }
          const perBroadcast = new Map<string, { ws: string; id: string; n: number }>()
          for (const r of swept) {
            if (r.source !== "broadcast") continue
            const key = String(r.source_id)
            const entry = perBroadcast.get(key) ?? { ws: String(r.workspace_id), id: key, n: 0 }
            entry.n++
            perBroadcast.set(key, entry)
          }
          const completed = yield* Effect.forEach(
            [...perBroadcast.values()],
            (b) => moveCounts(b.ws, b.id, "pending", "failed", b.n, at)
          )
          return completed.flatMap(Option.toArray)
        })),
      // The partial index's first entry; a workspace whose clock was moved ahead may be due sooner, which the poll covers.
      nextDue: () =>
        die(sql`SELECT min(due_at) AS at FROM text_sends WHERE state = 'pending'`).pipe(
          Effect.map((rs) => Option.map(Option.fromNullable(rs[0]?.at), (at) => Date.parse(iso(at))))
        )
    })
  })
)
