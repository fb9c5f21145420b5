/**
 * Capabilities only the console serves (CONTRACT "Members and the console"): what people do in the
 * workspace's app that SPEC gives no API key. Entries of the same shape as the table's, run by the
 * console's dispatch beside it; `role` is the least role that may call each.
 */
import { Effect, Schema } from "effect"
import { AuditLog } from "../audit/store.ts"
import { actorOf } from "../auth/principal.ts"
import { Activity, ConversationSummary } from "../conversations/model.ts"
import { AssignInput, Conversations, NoteInput } from "../conversations/service.ts"
import { NotFound } from "../kernel/errors.ts"
import { Member, type Role, toMember } from "../members/model.ts"
import { MemberStore } from "../members/store.ts"
import { CreatedKey, CreateKeyInput } from "../workspaces/keys.ts"
import { ApiKey } from "../workspaces/model.ts"
import { Workspaces } from "../workspaces/service.ts"
import { type AnyTool, ById, NoInput, read, tool, WithId } from "./tool.ts"

const conversationId = "0d3c8f9e-6b1a-4f2e-8c7d-5a4b3c2d1e0f"
const memberId = "7f1e2d3c-4b5a-4968-8776-655443322110"

export const createNote = tool({
  name: "notes_create",
  title: "Add an internal note",
  description: "Add an internal note to a conversation: seen by the team only, never sent.",
  input: Schema.Struct({ conversationId: Schema.String, ...NoteInput.fields }).annotations({
    parseOptions: { onExcessProperty: "error" }
  }),
  output: Schema.Struct({ activity: Activity }),
  example: { conversationId, body: "Called back, left a message." },
  scope: "conversations:write",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { body, conversationId }) =>
    Effect.flatMap(Conversations, (c) => c.note(p, conversationId, body)).pipe(
      Effect.map((activity) => ({ activity }))
    )
})

export const assignConversation = tool({
  name: "conversations_assign",
  title: "Assign a conversation",
  description: "Give a conversation to a member of the workspace (`assigneeUid`), or to nobody (null).",
  input: WithId(AssignInput),
  output: Schema.Struct({ conversation: ConversationSummary }),
  example: { id: conversationId, assigneeUid: memberId },
  scope: "conversations:write",
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { assigneeUid, id }) =>
    Effect.flatMap(Conversations, (c) => c.assign(p, id, assigneeUid)).pipe(
      Effect.map((conversation) => ({ conversation }))
    )
})

export const listMembers = tool({
  name: "members_list",
  title: "List the workspace's members",
  description: "The people of the workspace, oldest first: whom a conversation can be assigned to.",
  input: NoInput,
  output: Schema.Struct({ members: Schema.Array(Member) }),
  example: {},
  scope: "conversations:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p) =>
    Effect.flatMap(MemberStore, (s) => s.list(p.workspaceId)).pipe(
      Effect.map((rows) => ({ members: rows.map(toMember) }))
    )
})

// Keys are developer settings: an admin's, under the scope that already marks them (webhooks).
export const listKeys = tool({
  name: "keys_list",
  title: "List API keys",
  description: "The workspace's API keys, revoked ones included, oldest first; never a token.",
  input: NoInput,
  output: Schema.Struct({ keys: Schema.Array(ApiKey) }),
  example: {},
  scope: "webhooks:manage",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p) => Effect.flatMap(Workspaces, (w) => w.listKeys(p.workspaceId)).pipe(Effect.map((keys) => ({ keys })))
})

export const createKey = tool({
  name: "keys_create",
  title: "Create an API key",
  description: "A new API key of `kind` live or test, with `scopes` (default all). Its token is answered once.",
  input: CreateKeyInput,
  output: Schema.Struct({ key: CreatedKey }),
  example: { kind: "test", name: "CRM sync", scopes: ["contacts:read"] },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotencyKey: false,
  errors: [],
  run: (p, input) =>
    Effect.gen(function*() {
      const key = yield* Effect.flatMap(Workspaces, (w) => w.createKey(p.workspaceId, input))
      yield* Effect.flatMap(AuditLog, (a) =>
        a.append(p.workspaceId, {
          actor: actorOf(p),
          action: "key.created",
          detail: { keyId: key.id, kind: key.kind, scopes: key.scopes }
        }))
      return { key }
    })
})

export const revokeKey = tool({
  name: "keys_revoke",
  title: "Revoke an API key",
  description: "Revoke the key `id`: it answers 401 from then on.",
  input: ById,
  output: Schema.Struct({ revoked: Schema.Literal(true) }),
  example: { id: memberId },
  scope: "webhooks:manage",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) =>
    Effect.gen(function*() {
      const workspaces = yield* Workspaces
      const key = yield* workspaces.getKey(id)
      // Another workspace's key is as unknown as a missing one.
      if (key.workspaceId !== p.workspaceId) return yield* new NotFound({ message: "No such key" })
      yield* workspaces.revokeKey(id)
      yield* Effect.flatMap(AuditLog, (a) =>
        a.append(p.workspaceId, { actor: actorOf(p), action: "key.revoked", detail: { keyId: id } }))
      return { revoked: true as const }
    })
})

/** The console's own entries, each with the least role that may call it. */
export const consoleTools: ReadonlyArray<{ readonly tool: AnyTool; readonly role: Role }> = [
  { tool: createNote, role: "member" },
  { tool: assignConversation, role: "member" },
  { tool: listMembers, role: "member" },
  { tool: listKeys, role: "admin" },
  { tool: createKey, role: "admin" },
  { tool: revokeKey, role: "admin" }
]
