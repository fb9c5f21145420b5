/** In-memory SchedulingStore: the SQL store's queue over the shared state, replaced, never mutated (transactor.ts rolls back by snapshot). */
import { Effect, Layer, Option } from "effect"
import { Ids } from "../../core/kernel/ids.ts"
import {
  type BroadcastRecord,
  CANCELED,
  type Failure,
  type SendRecord,
  UNKNOWN_OUTCOME
} from "../../core/scheduling/model.ts"
import {
  type ClaimedSend,
  type Completed,
  countSettled,
  SchedulingStore,
  type Settlement
} from "../../core/scheduling/store.ts"
import { MemoryDb, type MemoryState, newestFirst } from "./db.ts"

const keyOf = (workspaceId: string, id: string) => `${workspaceId} ${id}`

/** A send as queued, with its lease (real time, ms). */
export interface QueuedSend {
  readonly send: SendRecord
  readonly claimId: string | null
  readonly lockedUntil: number | null
}

const ms = (iso: string) => Date.parse(iso)

export const layer = Layer.effect(
  SchedulingStore,
  Effect.map(MemoryDb, (db) => {
    const put = (q: QueuedSend) => void db.state.sends.set(q.send.id, q)
    const sendsOf = (s: MemoryState, ws: string, sourceId: string) =>
      [...s.sends.values()].filter((q) => q.send.workspaceId === ws && q.send.sourceId === sourceId)

    /** Moves a broadcast's counts for one settled recipient (or `n` of them), ending it once none is pending. */
    const moveCounts = (
      ws: string,
      id: string,
      update: (b: BroadcastRecord) => BroadcastRecord["counts"],
      at: string
    ): Option.Option<Completed> => {
      const b = db.state.broadcasts.get(keyOf(ws, id))
      if (b === undefined) return Option.none()
      const counts = update(b)
      const ends = counts.pending === 0 && b.completedAt === null
      db.state.broadcasts.set(keyOf(ws, id), {
        ...b,
        counts,
        state: counts.pending === 0 && b.state === "active" ? "completed" : b.state,
        completedAt: ends ? at : b.completedAt
      })
      return ends ? Option.some({ workspaceId: ws, broadcastId: id, counts }) : Option.none()
    }

    const offsetOf = (ws: string) => db.state.clockOffsets.get(ws) ?? 0
    const paceBooked = (ws: string, now: number, horizon: number) =>
      (db.state.pace.get(ws) ?? -Infinity) > now + horizon

    return SchedulingStore.of({
      insertScheduled: (record, send) =>
        Effect.sync(() => {
          db.state.scheduled.set(keyOf(record.workspaceId, record.id), record)
          put({ send, claimId: null, lockedUntil: null })
        }),
      getScheduled: (ws, id) =>
        Effect.sync(() => {
          const record = db.state.scheduled.get(keyOf(ws, id))
          if (record === undefined) return Option.none()
          return Option.some({ record, send: sendsOf(db.state, ws, id)[0]!.send })
        }),
      listScheduled: ({ after, limit, states, workspaceId }) =>
        Effect.sync(() =>
          [...db.state.scheduled.values()]
            .filter((m) =>
              m.workspaceId === workspaceId &&
              (after === null || m.sendAt > after.sendAt || (m.sendAt === after.sendAt && m.id > after.id))
            )
            .map((record) => ({ record, send: sendsOf(db.state, workspaceId, record.id)[0]!.send }))
            .filter(({ send }) => states === null || states.includes(send.state))
            .sort((a, b) => ms(a.record.sendAt) - ms(b.record.sendAt) || (a.record.id < b.record.id ? -1 : 1))
            .slice(0, limit)
        ),
      insertBroadcast: (record, sends) =>
        Effect.sync(() => {
          db.state.broadcasts.set(keyOf(record.workspaceId, record.id), record)
          for (const send of sends) put({ send, claimId: null, lockedUntil: null })
        }),
      getBroadcast: (ws, id) => Effect.sync(() => Option.fromNullable(db.state.broadcasts.get(keyOf(ws, id)))),
      listBroadcasts: ({ after, limit, workspaceId }) =>
        Effect.sync(() =>
          [...db.state.broadcasts.values()]
            .filter((b) =>
              b.workspaceId === workspaceId &&
              (after === null || newestFirst(b, { createdAt: after.createdAt, id: after.id }) > 0)
            )
            .sort(newestFirst)
            .slice(0, limit)
        ),
      listRecipients: ({ afterSeq, broadcastId, limit, states, workspaceId }) =>
        Effect.sync(() =>
          sendsOf(db.state, workspaceId, broadcastId)
            .map((q) => q.send)
            .filter((s) => (states === null || states.includes(s.state)) && (afterSeq === null || s.seq > afterSeq))
            .sort((a, b) => a.seq - b.seq)
            .slice(0, limit)
        ),
      cancel: (ws, sourceId, at) =>
        Effect.sync(() => {
          const failure: Failure = { code: CANCELED, message: "Canceled before it was sent" }
          let skipped = 0
          for (const q of sendsOf(db.state, ws, sourceId)) {
            if (q.send.state !== "pending") continue
            put({ send: { ...q.send, state: "skipped", failure, updatedAt: at }, claimId: null, lockedUntil: null })
            skipped++
          }
          const b = db.state.broadcasts.get(keyOf(ws, sourceId))
          if (b !== undefined && b.state === "active") {
            db.state.broadcasts.set(keyOf(ws, sourceId), { ...b, state: "canceled" })
          }
          const completed = skipped > 0
            ? moveCounts(ws, sourceId, (b) => ({
              ...b.counts,
              pending: b.counts.pending - skipped,
              skippedCanceled: b.counts.skippedCanceled + skipped
            }), at)
            : Option.none()
          return { skipped, completed }
        }),
      claimDue: (now, leaseMs, paceHorizonMs, limit) =>
        Effect.gen(function*() {
          const claimId = (yield* Ids).uuid()
          const due = [...db.state.sends.values()]
            .filter((q) =>
              q.send.state === "pending" && ms(q.send.dueAt) <= now + offsetOf(q.send.workspaceId) &&
              (q.lockedUntil === null || q.lockedUntil < now) && !paceBooked(q.send.workspaceId, now, paceHorizonMs)
            )
            .sort((a, b) =>
              ms(a.send.dueAt) - ms(b.send.dueAt) || a.send.seq - b.send.seq || (a.send.id < b.send.id ? -1 : 1)
            )
            .slice(0, limit)
          return due.flatMap((q): Array<ClaimedSend> => {
            const ws = q.send.workspaceId
            const source = q.send.source === "scheduled"
              ? db.state.scheduled.get(keyOf(ws, q.send.sourceId))
              : db.state.broadcasts.get(keyOf(ws, q.send.sourceId))
            const workspace = db.state.workspaces.get(ws)
            if (source === undefined || workspace === undefined) return []
            put({ ...q, claimId, lockedUntil: now + leaseMs })
            return [{
              send: q.send,
              claimId,
              keyId: source.keyId,
              live: source.live,
              from: source.from,
              conversationId: "conversationId" in source ? source.conversationId : null,
              body: source.body,
              mediaUrls: source.mediaUrls,
              quietHours: workspace.quietHours,
              segmentsPerMinute: workspace.textingSegmentsPerMinute,
              timeZone: db.state.agents.get(ws)?.draft.timezone ?? null,
              clockOffsetMs: offsetOf(ws)
            }]
          })
        }),
      release: (ws, claimId, ids, dueAt) =>
        Effect.sync(() => {
          for (const id of ids) {
            const q = db.state.sends.get(id)
            if (q === undefined || q.send.workspaceId !== ws || q.claimId !== claimId || q.send.state !== "pending") {
              continue
            }
            put({ send: dueAt === null ? q.send : { ...q.send, dueAt }, claimId: null, lockedUntil: null })
          }
        }),
      markSending: (ws, id, claimId, until) =>
        Effect.sync(() => {
          const q = db.state.sends.get(id)
          if (q === undefined || q.send.workspaceId !== ws || q.claimId !== claimId || q.send.state !== "pending") {
            return false
          }
          put({ ...q, send: { ...q.send, state: "sending" }, lockedUntil: until })
          return true
        }),
      settle: (ws, id, claimId, outcome: Settlement, at) =>
        Effect.sync(() => {
          const q = db.state.sends.get(id)
          const before = q?.send.state
          if (
            q === undefined || q.send.workspaceId !== ws || q.claimId !== claimId ||
            !(before === "pending" || before === "sending" ||
              (before === "failed" && q.send.failure?.code === UNKNOWN_OUTCOME))
          ) return { settled: false, completed: Option.none<Completed>() }
          put({
            ...q,
            send: {
              ...q.send,
              state: outcome.state,
              messageId: outcome.messageId,
              failure: outcome.failure,
              updatedAt: at
            },
            lockedUntil: null
          })
          if (q.send.source !== "broadcast") return { settled: true, completed: Option.none<Completed>() }
          const from = before === "failed" ? "failed" : "pending"
          return {
            settled: true,
            completed: moveCounts(q.send.workspaceId, q.send.sourceId, (b) => countSettled(b.counts, from, outcome), at)
          }
        }),
      sweep: (now, at, all) =>
        Effect.sync(() => {
          const failure: Failure = {
            code: UNKNOWN_OUTCOME,
            message:
              "The process sending this text stopped before recording the carrier's answer: it may have been delivered, and is not sent again"
          }
          const completed: Array<Completed> = []
          for (const q of [...db.state.sends.values()]) {
            if (all && q.send.state === "pending" && q.lockedUntil !== null) {
              put({ ...q, claimId: null, lockedUntil: null })
              continue
            }
            if (q.send.state !== "sending" || (!all && (q.lockedUntil ?? 0) >= now)) continue
            put({ ...q, send: { ...q.send, state: "failed", failure, updatedAt: at }, lockedUntil: null })
            if (q.send.source !== "broadcast") continue
            const done = moveCounts(q.send.workspaceId, q.send.sourceId, (b) => ({
              ...b.counts,
              pending: b.counts.pending - 1,
              failed: b.counts.failed + 1
            }), at)
            if (Option.isSome(done)) completed.push(done.value)
          }
          return completed
        }),
      nextDue: () =>
        Effect.sync(() => {
          let soonest: number | null = null
          for (const q of db.state.sends.values()) {
            if (q.send.state !== "pending") continue
            const at = ms(q.send.dueAt)
            if (soonest === null || at < soonest) soonest = at
          }
          return Option.fromNullable(soonest)
        })
    })
  })
)
