/**
 * The members' use cases (CONTRACT "Members and the console") on memory, PGlite and a real
 * Postgres: what a member is stored as (email trimmed and lower-cased, phone in E.164), each refused
 * input named by its field, an email once per workspace, a workspace never without an owner (also
 * when two changes race), a removed member's threads unassigned, and every change audit-logged.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as MemoryStores from "../../adapters/memory/stores.ts"
import { AuditLog } from "../../core/audit/store.ts"
import type { Thread } from "../../core/conversations/model.ts"
import { ConversationStore } from "../../core/conversations/store.ts"
import type { DomainError } from "../../core/kernel/errors.ts"
import type { CreateMemberInput } from "../../core/members/model.ts"
import { Members } from "../../core/members/service.ts"
import * as MembersService from "../../core/members/service.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { ts, uuid } from "../adapters/stores.contract.ts"
import { sqlContract } from "../support/sqlContract.ts"
import { sqlStores } from "../support/sqlStores.ts"

type Ports = Members | WorkspaceStore | ConversationStore | AuditLog

const newWorkspace = Effect.gen(function*() {
  const id = uuid()
  yield* (yield* WorkspaceStore).insert({
    id,
    name: "Team",
    billing: defaultBilling,
    ...defaultTexting,
    createdAt: ts(0)
  })
  return id
})

const person = (patch: Partial<CreateMemberInput> = {}): CreateMemberInput => ({
  email: `p-${uuid()}@example.com`,
  name: "Ada Lovelace",
  role: "member",
  ...patch
})

/** A workspace with one owner. */
const withOwner = Effect.gen(function*() {
  const ws = yield* newWorkspace
  const owner = yield* (yield* Members).create(ws, person({ role: "owner", name: "Olive Owner" }))
  return { ws, owner }
})

const refused = <A, R>(self: Effect.Effect<A, DomainError, R>) =>
  Effect.map(
    Effect.either(self),
    (r): { readonly tag: string; readonly message: string } | "succeeded" =>
      Either.isLeft(r) ? { tag: r.left._tag, message: r.left.message } : "succeeded"
  )

const actions = (ws: string) =>
  Effect.map(Effect.flatMap(AuditLog, (a) => a.list(ws)), (rows) => rows.map((r) => [r.actor, r.action, r.detail]))

const threadOf = (workspaceId: string, assigneeUid: string | null): Thread => ({
  id: uuid(),
  workspaceId,
  inboxId: uuid(),
  numberE164: "+14155550100",
  participant: `+1628${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`,
  contactId: null,
  status: "open",
  assigneeUid,
  lastActivityAt: ts(1),
  preview: null,
  unread: 0,
  createdAt: ts(1)
})

const suite = (name: string, adapter: Layer.Layer<Ports, unknown>) =>
  layer(adapter, { excludeTestServices: true, timeout: "120 seconds" })(name, (it) => {
    it.effect("create stores the email trimmed and lower-cased, the name trimmed, the phone in E.164; audit-logged", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const ws = yield* newWorkspace
        const member = yield* members.create(ws, {
          email: "  Grace.Hopper@Example.COM ",
          name: "  Grace Hopper ",
          role: "admin",
          phone: "(415) 555-0123"
        })
        assert.deepStrictEqual({ ...member, id: "", createdAt: "" }, {
          id: "",
          email: "grace.hopper@example.com",
          name: "Grace Hopper",
          role: "admin",
          phone: "+14155550123",
          createdAt: ""
        })
        assert.deepStrictEqual(yield* members.list(ws), [member])
        assert.deepStrictEqual(yield* members.get(member.id), { ...member, workspaceId: ws })
        const noPhone = yield* members.create(ws, person({ phone: null }))
        assert.strictEqual(noPhone.phone, null)
        assert.deepStrictEqual(yield* members.list(ws), [member, noPhone])
        assert.deepStrictEqual(yield* actions(ws), [
          ["admin", "member.created", { memberId: noPhone.id, email: noPhone.email, role: "member" }],
          ["admin", "member.created", { memberId: member.id, email: "grace.hopper@example.com", role: "admin" }]
        ])
      }))

    it.effect("refused inputs are 400s naming the field; nothing is stored", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const ws = yield* newWorkspace
        const cases: ReadonlyArray<readonly [Partial<CreateMemberInput>, string]> = [
          [{ email: "   " }, "email: must not be blank"],
          [{ email: "ada" }, "email: \"ada\" is not an email address"],
          [{ email: "ada@" }, "email: \"ada@\" is not an email address"],
          [{ email: "a b@example.com" }, "email: \"a b@example.com\" is not an email address"],
          [{ email: "a@b@example.com" }, "email: \"a@b@example.com\" is not an email address"],
          [{ email: "ada@example..com" }, "email: \"ada@example..com\" is not an email address"],
          [
            { email: "ada@example.com,eve@example.com" },
            "email: \"ada@example.com,eve@example.com\" is not an email address"
          ],
          [{ email: `${"a".repeat(65)}@example.com` }, `email: "${"a".repeat(64)}…" is not an email address`],
          [{ email: `ada@${"d".repeat(250)}.com` }, "email: must be at most 254 characters"],
          [{ name: "  " }, "name: must not be blank"],
          [{ name: "n".repeat(201) }, "name: must be at most 200 characters"],
          [{ phone: "call me" }, "phone: \"call me\" is not a phone number"],
          [{ phone: "+1415555" }, "phone: \"+1415555\" is not a valid phone number"],
          [{ phone: "+19005550100" }, "phone: premium-rate numbers (+1 900, +1 976) cannot be called or forwarded to"]
        ]
        for (const [patch, message] of cases) {
          assert.deepStrictEqual(yield* refused(members.create(ws, person(patch))), { tag: "InvalidArgument", message })
        }
        assert.deepStrictEqual(yield* members.list(ws), [])
        assert.deepStrictEqual(yield* actions(ws), [])
        // The first boot's owner is an address too.
        assert.strictEqual((yield* members.create(ws, person({ email: "owner@localhost" }))).email, "owner@localhost")
      }))

    it.effect("an unknown or malformed workspace is 404", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const missing = { tag: "NotFound", message: "No such workspace" } as const
        assert.deepStrictEqual(yield* refused(members.create(uuid(), person())), missing)
        assert.deepStrictEqual(yield* refused(members.create("nope", person())), missing)
        assert.deepStrictEqual(yield* refused(members.list(uuid())), missing)
        assert.deepStrictEqual(yield* refused(members.list("nope")), missing)
      }))

    it.effect("an email is a member of a workspace once, in any case; another workspace may have it too", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const ws = yield* newWorkspace
        const other = yield* newWorkspace
        const email = `dup-${uuid()}@example.com`
        const first = yield* members.create(ws, person({ email }))
        assert.deepStrictEqual(yield* refused(members.create(ws, person({ email: ` ${email.toUpperCase()} ` }))), {
          tag: "FailedPrecondition",
          message: `${email} is already a member of this workspace`
        })
        assert.deepStrictEqual(yield* members.list(ws), [first])
        const elsewhere = yield* members.create(other, person({ email, role: "owner" }))
        assert.deepStrictEqual(yield* members.findByEmail(` ${email.toUpperCase()}`), [
          { ...first, workspaceId: ws },
          { ...elsewhere, workspaceId: other }
        ])
      }))

    it.effect("update changes the fields given, clears the phone with null, and logs what changed", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const { owner, ws } = yield* withOwner
        const grace = yield* members.create(ws, person({ name: "Grace", phone: "+14155550123" }))
        const updated = yield* members.update(grace.id, {
          name: " Grace Hopper ",
          role: "admin",
          email: "GRACE@Example.com"
        })
        assert.deepStrictEqual(updated, {
          ...grace,
          name: "Grace Hopper",
          role: "admin",
          email: "grace@example.com"
        })
        const cleared = yield* members.update(grace.id, { phone: null })
        assert.strictEqual(cleared.phone, null)
        // Nothing changed: nothing logged.
        assert.deepStrictEqual(yield* members.update(grace.id, { name: "Grace Hopper" }), cleared)
        assert.deepStrictEqual(yield* members.update(grace.id, {}), cleared)
        assert.deepStrictEqual(yield* members.list(ws), [owner, cleared])
        const log = yield* actions(ws)
        assert.deepStrictEqual(log.slice(0, 2), [
          ["admin", "member.updated", { memberId: grace.id, from: { phone: "+14155550123" }, to: { phone: null } }],
          ["admin", "member.updated", {
            memberId: grace.id,
            from: { email: grace.email, name: "Grace", role: "member" },
            to: { email: "grace@example.com", name: "Grace Hopper", role: "admin" }
          }]
        ])
        assert.lengthOf(log, 4)
      }))

    it.effect("update refuses a clashing email (409), bad input (400) and an unknown member (404)", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const { owner, ws } = yield* withOwner
        const grace = yield* members.create(ws, person())
        assert.deepStrictEqual(yield* refused(members.update(grace.id, { email: owner.email.toUpperCase() })), {
          tag: "FailedPrecondition",
          message: `${owner.email} is already a member of this workspace`
        })
        assert.deepStrictEqual(yield* refused(members.update(grace.id, { phone: "nope" })), {
          tag: "InvalidArgument",
          message: "phone: \"nope\" is not a phone number"
        })
        assert.deepStrictEqual(yield* refused(members.update(grace.id, { email: "x" })), {
          tag: "InvalidArgument",
          message: "email: \"x\" is not an email address"
        })
        for (const id of [uuid(), "nope"]) {
          assert.deepStrictEqual(yield* refused(members.update(id, { name: "X" })), {
            tag: "NotFound",
            message: "No such member"
          })
        }
        assert.deepStrictEqual(yield* members.list(ws), [owner, grace])
      }))

    it.effect("the last owner cannot be demoted or removed; with a second owner, either can", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const { owner, ws } = yield* withOwner
        const demote = {
          tag: "FailedPrecondition",
          message: "Cannot demote the workspace's last owner: make another member owner first"
        }
        const remove = {
          tag: "FailedPrecondition",
          message: "Cannot remove the workspace's last owner: make another member owner first"
        }
        assert.deepStrictEqual(yield* refused(members.update(owner.id, { role: "admin" })), demote)
        assert.deepStrictEqual(yield* refused(members.remove(owner.id)), remove)
        // Renaming the last owner is fine.
        assert.strictEqual((yield* members.update(owner.id, { name: "Olive", role: "owner" })).name, "Olive")

        const second = yield* members.create(ws, person())
        yield* members.update(second.id, { role: "owner" })
        assert.strictEqual((yield* members.update(owner.id, { role: "member" })).role, "member")
        assert.deepStrictEqual(yield* refused(members.remove(second.id)), remove)
        yield* members.update(owner.id, { role: "owner" })
        assert.isTrue((yield* members.remove(second.id)).id === second.id)
        assert.deepStrictEqual((yield* members.list(ws)).map((m) => [m.id, m.role]), [[owner.id, "owner"]])
        // Another workspace's owners do not count.
        const other = yield* withOwner
        assert.deepStrictEqual(yield* refused(members.remove(other.owner.id)), remove)
      }))

    it.effect("two changes at once never leave a workspace without an owner", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const { owner, ws } = yield* withOwner
        const second = yield* members.create(ws, person({ role: "owner" }))
        const demotions = yield* Effect.all(
          [owner, second].map((m) => Effect.either(members.update(m.id, { role: "admin" }))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(demotions.filter(Either.isRight).length, 1)
        assert.deepStrictEqual((yield* members.list(ws)).filter((m) => m.role === "owner").length, 1)

        const { owner: a, ws: ws2 } = yield* withOwner
        const b = yield* members.create(ws2, person({ role: "owner" }))
        const removals = yield* Effect.all([a, b].map((m) => Effect.either(members.remove(m.id))), {
          concurrency: "unbounded"
        })
        assert.strictEqual(removals.filter(Either.isRight).length, 1)
        assert.lengthOf(yield* members.list(ws2), 1)
      }))

    it.effect("remove unassigns the member's threads, logs it, and frees the email", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const threads = yield* ConversationStore
        const { owner, ws } = yield* withOwner
        const grace = yield* members.create(ws, person({ role: "admin" }))
        const t1 = yield* threads.insertThread(threadOf(ws, grace.id))
        const t2 = yield* threads.insertThread(threadOf(ws, grace.id))
        const kept = yield* threads.insertThread(threadOf(ws, owner.id))
        assert.deepStrictEqual(yield* members.remove(grace.id), grace)
        for (const t of [t1, t2]) {
          assert.strictEqual(
            (yield* threads.getThread(ws, t.id)).pipe((o) => o._tag === "Some" && o.value.assigneeUid),
            null
          )
        }
        assert.strictEqual(
          (yield* threads.getThread(ws, kept.id)).pipe((o) => o._tag === "Some" && o.value.assigneeUid),
          owner.id
        )
        assert.deepStrictEqual((yield* actions(ws))[0], [
          "admin",
          "member.removed",
          { memberId: grace.id, email: grace.email, role: "admin", unassigned: 2 }
        ])
        assert.deepStrictEqual(yield* members.list(ws), [owner])
        for (const id of [grace.id, uuid(), "nope"]) {
          assert.deepStrictEqual(yield* refused(members.remove(id)), { tag: "NotFound", message: "No such member" })
          assert.deepStrictEqual(yield* refused(members.get(id)), { tag: "NotFound", message: "No such member" })
        }
        assert.strictEqual((yield* members.create(ws, person({ email: grace.email }))).email, grace.email)
      }))

    it.effect("withPhones: the members with a phone, oldest first", () =>
      Effect.gen(function*() {
        const members = yield* Members
        const { ws } = yield* withOwner
        const a = yield* members.create(ws, person({ phone: "+14155550131" }))
        yield* members.create(ws, person())
        const c = yield* members.create(ws, person({ phone: "+14155550133", role: "admin" }))
        const other = yield* withOwner
        yield* members.create(other.ws, person({ phone: "+14155550134" }))
        assert.deepStrictEqual(yield* members.withPhones(ws), [a, c])
        yield* members.update(a.id, { phone: null })
        assert.deepStrictEqual(yield* members.withPhones(ws), [c])
      }))
  })

suite("Members: memory", MembersService.layer.pipe(Layer.provideMerge(MemoryStores.layer)))

sqlContract({
  name: (db) => `Members: ${db}`,
  adapter: (client) => MembersService.layer.pipe(Layer.provideMerge(sqlStores(client))),
  suite,
  database: "members_service"
})
