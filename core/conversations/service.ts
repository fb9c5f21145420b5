/** Conversation use cases: list threads, read a thread, mark open/done, search messages and transcripts. */
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Principal } from "../auth/principal.ts"
import { phoneLock } from "../contacts/service.ts"
import { InvalidArgument, NotFound } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids, isUuid } from "../kernel/ids.ts"
import { CursorCodec, type Page } from "../kernel/pagination.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { membersLock } from "../members/service.ts"
import { MemberStore } from "../members/store.ts"
import { ActivityViews } from "../messaging/views.ts"
import {
  type ConversationSummary,
  type ListConversationsInput,
  type MessageSearchResult,
  newActivity,
  participantsOf,
  searchQuery,
  ThreadStatus,
  toSummary
} from "./model.ts"
import { ConversationStore } from "./store.ts"

export const PatchConversationInput = Schema.Struct({ status: ThreadStatus }).annotations({
  identifier: "PatchConversationInput",
  parseOptions: { onExcessProperty: "error" }
})

/** An internal note: written by a member for the team, never sent. */
export const NoteInput = Schema.Struct({
  body: Schema.String.pipe(
    Schema.filter((b) => b.trim().length > 0 || "body: write something"),
    Schema.maxLength(10_000, { message: () => "body: at most 10000 characters" })
  )
}).annotations({ identifier: "NoteInput", parseOptions: { onExcessProperty: "error" } })

/** Who works a conversation: a member of the workspace, or nobody. */
export const AssignInput = Schema.Struct({ assigneeUid: Schema.NullOr(Schema.String) }).annotations({
  identifier: "AssignInput",
  parseOptions: { onExcessProperty: "error" }
})

const notFound = new NotFound({ message: "No such conversation" })

export const make = Effect.gen(function*() {
  const store = yield* ConversationStore
  const cursors = yield* CursorCodec
  const views = yield* ActivityViews
  const tx = yield* Transactor
  const members = yield* MemberStore

  const load = (workspaceId: string, id: string) => findOr404(id, (id) => store.getThread(workspaceId, id), notFound)

  const list = (p: Principal, params: ListConversationsInput) =>
    Effect.gen(function*() {
      const limit = params.limit ?? 50
      const scope = `conversations:${p.workspaceId}:${params.status ?? ""}`
      let after: { lastActivityAt: string; id: string } | null = null
      if (params.cursor !== undefined) {
        const [at, id] = yield* cursors.decode(scope, params.cursor)
        if (typeof at !== "string" || typeof id !== "string") {
          return yield* new InvalidArgument({ message: "cursor is invalid" })
        }
        after = { lastActivityAt: at, id }
      }
      const rows = yield* store.listThreads({ workspaceId: p.workspaceId, status: params.status ?? null, limit, after })
      const last = rows[rows.length - 1]
      const nextCursor = rows.length === limit && last
        ? yield* cursors.encode(scope, [last.lastActivityAt, last.id])
        : null
      const page: Page<ConversationSummary> = { items: rows.map(toSummary), nextCursor }
      return page
    })

  const get = (p: Principal, id: string) =>
    Effect.gen(function*() {
      const thread = yield* load(p.workspaceId, id)
      const activities = yield* Effect.forEach(yield* store.listActivities(p.workspaceId, thread.id), views.view)
      return { conversation: toSummary(thread), activities }
    })

  const patch = (p: Principal, id: string, input: typeof PatchConversationInput.Type) =>
    Effect.gen(function*() {
      const found = yield* load(p.workspaceId, id)
      return yield* tx.withTransaction(
        Effect.gen(function*() {
          // Re-read under the participant's lock: a text arriving meanwhile keeps its preview and time.
          yield* tx.lock(phoneLock(p.workspaceId, found.participant))
          const thread = yield* load(p.workspaceId, id)
          // Marking a thread open or done means someone has looked at it.
          const next = { ...thread, status: input.status, unread: 0 }
          yield* store.updateThread(next)
          return toSummary(next)
        })
      )
    })

  const search = (p: Principal, q: string, limit: number) =>
    Effect.gen(function*() {
      const query = searchQuery(q)
      if (query === null) return yield* new InvalidArgument({ message: "q: give at least one word to search for" })
      const hits = yield* store.search(p.workspaceId, query, limit)
      return hits.map((hit): MessageSearchResult => ({
        activityId: hit.id,
        conversationId: hit.conversationId,
        type: hit.type,
        direction: hit.direction,
        body: hit.body,
        participants: participantsOf(hit.participant),
        numberE164: hit.numberE164,
        createdAt: hit.createdAt
      }))
    })

  /** Adds an internal note by the member acting (`authorUid`); it is never sent and leaves the thread's preview and unread count alone. */
  const note = (p: Principal, id: string, body: string) =>
    Effect.gen(function*() {
      const thread = yield* load(p.workspaceId, id)
      const { uuid } = yield* Ids
      const activity = newActivity({
        id: uuid(),
        workspaceId: p.workspaceId,
        conversationId: thread.id,
        type: "internal_note",
        direction: null,
        authorUid: p.memberId ?? null,
        body,
        createdAt: yield* nowIso
      })
      yield* store.insertActivity(activity)
      return yield* views.view(activity)
    })

  const assign = (p: Principal, id: string, assigneeUid: string | null) =>
    Effect.gen(function*() {
      const found = yield* load(p.workspaceId, id)
      return yield* tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(phoneLock(p.workspaceId, found.participant))
          if (assigneeUid !== null) {
            // Checked holding the members lock (after the phone's), which removing a member holds
            // while it unassigns its threads: a thread is never left assigned to a removed member.
            yield* tx.lock(membersLock(p.workspaceId))
            const member = isUuid(assigneeUid) ? yield* members.get(assigneeUid) : Option.none()
            if (Option.isNone(member) || member.value.workspaceId !== p.workspaceId) {
              return yield* new NotFound({ message: "No such member" })
            }
          }
          const thread = yield* load(p.workspaceId, id)
          const next = { ...thread, assigneeUid }
          yield* store.updateThread(next)
          return toSummary(next)
        })
      )
    })

  return { list, get, patch, search, note, assign } as const
})

export class Conversations
  extends Context.Tag("core/Conversations")<Conversations, Effect.Effect.Success<typeof make>>()
{}
export const layer = Layer.effect(Conversations, make)
