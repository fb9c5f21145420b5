/** In-memory ConversationStore with the same ordering and search semantics as the SQL one. */
import { Effect, Layer, Option } from "effect"
import {
  type ActivityRecord,
  contactNameOf,
  matchesQuery,
  searchableText,
  type Thread,
  type ThreadView
} from "../../core/conversations/model.ts"
import { billedMinutes, ConversationStore } from "../../core/conversations/store.ts"
import { MemoryDb } from "./db.ts"

const byRecency = (a: { lastActivityAt: string; id: string }, b: { lastActivityAt: string; id: string }) =>
  a.lastActivityAt === b.lastActivityAt
    ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
    : a.lastActivityAt < b.lastActivityAt
    ? 1
    : -1
const byCreation = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.createdAt < b.createdAt ? -1 : 1

export const layer = Layer.effect(
  ConversationStore,
  Effect.map(MemoryDb, (db) => {
    const st = () => db.state
    const view = (t: Thread): ThreadView => {
      const c = t.contactId === null ? undefined : st().contacts.get(t.contactId)
      return { ...t, contactName: contactNameOf(c && c.workspaceId === t.workspaceId ? c : null, t.participant) }
    }
    const insertActivity = (a: ActivityRecord) => {
      if (
        a.carrierMessageId !== null &&
        [...st().activities.values()].some((x) => x.carrierMessageId === a.carrierMessageId)
      ) {
        throw new Error(`duplicate carrier message id ${a.carrierMessageId}`)
      }
      st().activities.set(a.id, a)
    }
    return ConversationStore.of({
      findThread: (ws, number, participant) =>
        Effect.sync(() =>
          Option.fromNullable(
            [...st().threads.values()].find((t) =>
              t.workspaceId === ws && t.numberE164 === number && t.participant === participant
            )
          )
        ),
      insertThread: (t) =>
        Effect.sync(() => {
          const existing = [...st().threads.values()].find(
            (x) => x.workspaceId === t.workspaceId && x.numberE164 === t.numberE164 && x.participant === t.participant
          )
          if (existing) return existing
          st().threads.set(t.id, t)
          return t
        }),
      getThread: (ws, id) =>
        Effect.sync(() =>
          Option.fromNullable(st().threads.get(id)).pipe(Option.filter((t) => t.workspaceId === ws), Option.map(view))
        ),
      updateThread: (t) =>
        Effect.sync(() => {
          const cur = st().threads.get(t.id)
          if (cur && cur.workspaceId === t.workspaceId) st().threads.set(t.id, { ...t, contactId: t.contactId })
        }),
      touchThread: (ws, id, touch) =>
        Effect.sync(() => {
          const cur = st().threads.get(id)
          if (cur && cur.workspaceId === ws) st().threads.set(id, { ...cur, ...touch })
        }),
      listThreads: ({ workspaceId, status, limit, after }) =>
        Effect.sync(() =>
          [...st().threads.values()]
            .filter((t) => t.workspaceId === workspaceId && (status === null || t.status === status))
            .sort(byRecency)
            .filter((t) => after === null || byRecency(after, t) < 0)
            .slice(0, limit)
            .map(view)
        ),
      detachContact: (ws, contactId) =>
        Effect.sync(() => {
          for (const t of st().threads.values()) {
            if (t.workspaceId === ws && t.contactId === contactId) st().threads.set(t.id, { ...t, contactId: null })
          }
        }),
      unassignMember: (ws, memberUid) =>
        Effect.sync(() => {
          let n = 0
          for (const t of st().threads.values()) {
            if (t.workspaceId === ws && t.assigneeUid === memberUid) {
              st().threads.set(t.id, { ...t, assigneeUid: null })
              n++
            }
          }
          return n
        }),
      insertActivity: (a) => Effect.sync(() => insertActivity(a)),
      recordOutbound: (t, a) =>
        Effect.sync(() => {
          const existing = [...st().threads.values()].find(
            (x) => x.workspaceId === t.workspaceId && x.numberE164 === t.numberE164 && x.participant === t.participant
          )
          const base = existing === undefined
            ? t
            : { ...existing, lastActivityAt: t.lastActivityAt, preview: t.preview, unread: t.unread }
          const contact = [...st().contacts.values()]
            .filter((c) => c.workspaceId === t.workspaceId && c.phones.some((p) => p.value === t.participant))
            .sort(byCreation)[0]
          const stored = base.contactId === null && contact !== undefined ? { ...base, contactId: contact.id } : base
          insertActivity({ ...a, conversationId: stored.id })
          st().threads.set(stored.id, stored)
          return stored
        }),
      getActivity: (ws, id) =>
        Effect.sync(() =>
          Option.fromNullable(st().activities.get(id)).pipe(Option.filter((a) => a.workspaceId === ws))
        ),
      listActivities: (ws, conversationId) =>
        Effect.sync(() =>
          [...st().activities.values()].filter((a) => a.workspaceId === ws && a.conversationId === conversationId).sort(
            byCreation
          )
        ),
      findByCarrierId: (carrierMessageId) =>
        Effect.sync(() =>
          Option.fromNullable([...st().activities.values()].find((a) => a.carrierMessageId === carrierMessageId))
        ),
      setDeliveryStatus: (ws, id, status) =>
        Effect.sync(() => {
          const a = st().activities.get(id)
          if (a && a.workspaceId === ws) st().activities.set(id, { ...a, deliveryStatus: status })
        }),
      setCallMedia: (ws, id, media) =>
        Effect.sync(() => {
          const a = st().activities.get(id)
          if (a && a.workspaceId === ws) st().activities.set(id, { ...a, media })
        }),
      setCallTranscript: (ws, id, callTranscript) =>
        Effect.sync(() => {
          const a = st().activities.get(id)
          if (a && a.workspaceId === ws) st().activities.set(id, { ...a, callTranscript })
        }),
      setCallSummary: (ws, id, summary) =>
        Effect.sync(() => {
          const a = st().activities.get(id)
          if (a && a.workspaceId === ws && a.call !== null) {
            st().activities.set(id, { ...a, call: { ...a.call, summary } })
          }
        }),
      agentCallMinutes: (ws, fromIso, toIso) =>
        Effect.sync(() => {
          let minutes = 0
          for (const a of st().activities.values()) {
            const seconds = a.call?.["durationSeconds"]
            if (
              a.workspaceId === ws && a.type === "call" && a.call?.["answeredBy"] === "agent" &&
              a.call["simulated"] !== true && typeof seconds === "number" && a.createdAt >= fromIso &&
              a.createdAt < toIso
            ) {
              minutes += billedMinutes(seconds)
            }
          }
          return minutes
        }),
      listCalls: (ws, limit) =>
        Effect.sync(() =>
          [...st().activities.values()]
            .filter((a) => a.workspaceId === ws && (a.type === "call" || a.type === "voicemail"))
            .sort((a, b) => -byCreation(a, b))
            .slice(0, limit)
            .map((activity) => ({ activity, thread: st().threads.get(activity.conversationId)! }))
        ),
      search: (ws, query, limit) =>
        Effect.sync(() =>
          [...st().activities.values()]
            .filter((a) => a.workspaceId === ws && matchesQuery(searchableText(a), query))
            .sort((a, b) => -byCreation(a, b))
            .slice(0, limit)
            .map(({ body, conversationId, createdAt, direction, id, type }) => {
              const { numberE164, participant } = st().threads.get(conversationId)!
              return { id, conversationId, type, direction, body, createdAt, participant, numberE164 }
            })
        )
    })
  })
)
