/**
 * The members' use cases (CONTRACT "Members and the console"): the operator adds, lists, changes and
 * removes the people of a workspace. A workspace always keeps an owner. Every change is audit-logged
 * and runs holding the workspace's members lock (`membersLock`), so two changes at once cannot both
 * pass the last-owner check, and an assignment cannot land on a member being removed.
 */
import { Context, Effect, Layer } from "effect"
import { AuditLog } from "../audit/store.ts"
import { ConversationStore } from "../conversations/store.ts"
import { displayText } from "../kernel/display.ts"
import { FailedPrecondition, InvalidArgument, NotFound } from "../kernel/errors.ts"
import { findOr404 } from "../kernel/findOr404.ts"
import { Ids } from "../kernel/ids.ts"
import { isPremiumRate, phoneField, premiumRateProblem } from "../kernel/phone.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import {
  type CreateMemberInput,
  type Member,
  type MemberRecord,
  normalizeEmail,
  toMember,
  type UpdateMemberInput
} from "./model.ts"
import { MemberStore } from "./store.ts"

/** Held by every change to a workspace's members, and by an assignment while it checks its assignee. */
export const membersLock = (workspaceId: string) => `members:${workspaceId}`

/** Who changed members through the admin API, as the audit log names it. */
export const ADMIN_ACTOR = "admin"

const noSuchMember = new NotFound({ message: "No such member" })
const noSuchWorkspace = new NotFound({ message: "No such workspace" })

/**
 * Plausible, not proven (only a mail proves an address): a local part of at most 64 characters
 * without spaces or the characters that split or quote an address, then a domain of dot-separated
 * labels. A single label is allowed: `owner@localhost` is the first boot's owner.
 */
const EMAIL =
  /^[^\s@<>()[\]\\,;:"\u0000-\u001f\u007f]{1,64}@[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)*$/u

/** The email as stored (trimmed, lower-cased), or a 400 naming the field. */
export const memberEmail = (raw: string): Effect.Effect<string, InvalidArgument> => {
  const email = normalizeEmail(raw)
  if (email.length === 0) return Effect.fail(new InvalidArgument({ message: "email: must not be blank" }))
  if (email.length > 254) return Effect.fail(new InvalidArgument({ message: "email: must be at most 254 characters" }))
  return EMAIL.test(email)
    ? Effect.succeed(email)
    : Effect.fail(new InvalidArgument({ message: `email: "${displayText(raw.trim(), 64)}" is not an email address` }))
}

/** The name as stored (trimmed), or a 400 naming the field. */
const memberName = (raw: string): Effect.Effect<string, InvalidArgument> => {
  const name = raw.trim()
  if (name.length === 0) return Effect.fail(new InvalidArgument({ message: "name: must not be blank" }))
  if (name.length > 200) return Effect.fail(new InvalidArgument({ message: "name: must be at most 200 characters" }))
  return Effect.succeed(name)
}

/** The phone in E.164, or null; the phone is rung for the team's calls, so never a premium-rate number. */
const memberPhone = (raw: string | null): Effect.Effect<string | null, InvalidArgument> =>
  raw === null ? Effect.succeed(null) : Effect.flatMap(phoneField("phone", raw), (e164) =>
    isPremiumRate(e164)
      ? Effect.fail(new InvalidArgument({ message: premiumRateProblem("phone") }))
      : Effect.succeed<string>(e164))

const emailTaken = (email: string) =>
  new FailedPrecondition({ message: `${email} is already a member of this workspace` })
const lastOwner = (what: string) =>
  new FailedPrecondition({ message: `${what} the workspace's last owner: make another member owner first` })

export const make = Effect.gen(function*() {
  const store = yield* MemberStore
  const workspaces = yield* WorkspaceStore
  const conversations = yield* ConversationStore
  const audit = yield* AuditLog
  const tx = yield* Transactor

  const load = (id: string) => findOr404(id, store.get, noSuchMember)

  const ensureWorkspace = (workspaceId: string) =>
    findOr404(workspaceId, workspaces.get, noSuchWorkspace).pipe(Effect.asVoid)

  /** Whether `member` is the only owner of its workspace. */
  const isLastOwner = (member: MemberRecord) =>
    member.role !== "owner"
      ? Effect.succeed(false)
      : Effect.map(store.list(member.workspaceId), (all) => all.every((m) => m.role !== "owner" || m.id === member.id))

  /** Runs `self` in a transaction holding the workspace's members lock. */
  const locked = <A, E, R>(workspaceId: string, self: Effect.Effect<A, E, R>) =>
    tx.withTransaction(self, membersLock(workspaceId))

  const create = (workspaceId: string, input: CreateMemberInput, actor: string = ADMIN_ACTOR) =>
    Effect.gen(function*() {
      const email = yield* memberEmail(input.email)
      const name = yield* memberName(input.name)
      const phone = yield* memberPhone(input.phone ?? null)
      yield* ensureWorkspace(workspaceId)
      const { uuid } = yield* Ids
      const record: MemberRecord = {
        id: uuid(),
        workspaceId,
        email,
        name,
        role: input.role,
        phone,
        createdAt: yield* nowIso
      }
      return yield* locked(
        workspaceId,
        Effect.gen(function*() {
          if (!(yield* store.insert(record))) return yield* emailTaken(email)
          yield* audit.append(workspaceId, {
            actor,
            action: "member.created",
            detail: { memberId: record.id, email, role: record.role }
          })
          return toMember(record)
        })
      )
    })

  /** The workspace's members, oldest first. */
  const list = (workspaceId: string) =>
    ensureWorkspace(workspaceId).pipe(
      Effect.zipRight(store.list(workspaceId)),
      Effect.map((rows) => rows.map(toMember))
    )

  /** A member with its workspace. */
  const get = load

  const update = (id: string, patch: UpdateMemberInput, actor: string = ADMIN_ACTOR) =>
    Effect.gen(function*() {
      const email = patch.email === undefined ? undefined : yield* memberEmail(patch.email)
      const name = patch.name === undefined ? undefined : yield* memberName(patch.name)
      const phone = patch.phone === undefined ? undefined : yield* memberPhone(patch.phone)
      const { workspaceId } = yield* load(id)
      return yield* locked(
        workspaceId,
        Effect.gen(function*() {
          const current = yield* load(id)
          const next: MemberRecord = {
            ...current,
            email: email ?? current.email,
            name: name ?? current.name,
            role: patch.role ?? current.role,
            phone: phone === undefined ? current.phone : phone
          }
          if (next.role !== "owner" && (yield* isLastOwner(current))) return yield* lastOwner("Cannot demote")
          if (!(yield* store.update(next))) return yield* emailTaken(next.email)
          const changed = (["email", "name", "role", "phone"] as const).filter((k) => next[k] !== current[k])
          if (changed.length > 0) {
            yield* audit.append(workspaceId, {
              actor,
              action: "member.updated",
              detail: {
                memberId: id,
                from: Object.fromEntries(changed.map((k) => [k, current[k]])),
                to: Object.fromEntries(changed.map((k) => [k, next[k]]))
              }
            })
          }
          return toMember(next)
        })
      )
    })

  /** Removes a member; the threads assigned to it become unassigned. */
  const remove = (id: string, actor: string = ADMIN_ACTOR) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* load(id)
      return yield* locked(
        workspaceId,
        Effect.gen(function*() {
          const member = yield* load(id)
          if (yield* isLastOwner(member)) return yield* lastOwner("Cannot remove")
          if (!(yield* store.remove(id))) return yield* noSuchMember
          const unassigned = yield* conversations.unassignMember(workspaceId, id)
          yield* audit.append(workspaceId, {
            actor,
            action: "member.removed",
            detail: { memberId: id, email: member.email, role: member.role, unassigned }
          })
          return toMember(member)
        })
      )
    })

  /** Every membership of an email (any case, trimmed), across workspaces, oldest first. */
  const findByEmail = (email: string) => store.findByEmail(normalizeEmail(email))

  /** The members with a phone, oldest first: the team an `app` call rings. */
  const withPhones = (workspaceId: string) =>
    Effect.map(
      store.list(workspaceId),
      (rows) =>
        rows.flatMap((m): Array<Member & { readonly phone: string }> =>
          m.phone === null ? [] : [{ ...toMember(m), phone: m.phone }]
        )
    )

  return { create, list, get, update, remove, findByEmail, withPhones } as const
})

export class Members extends Context.Tag("core/Members")<Members, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Members, make)
