/** Workspaces, their billing state, API keys and seeded numbers: the operator-facing use cases. */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { generateToken, hashToken, type ParsedKey, parseToken } from "../auth/apiKey.ts"
import type { Principal } from "../auth/principal.ts"
import { allScopes } from "../auth/scopes.ts"
import { ledgerCharge } from "../billing/ledger.ts"
import { LedgerStore } from "../billing/store.ts"
import { FailedPrecondition, InvalidArgument, NotFound, Unauthenticated } from "../kernel/errors.ts"
import { Ids, isUuid } from "../kernel/ids.ts"
import { normalizePhone } from "../kernel/phone.ts"
import { nowIso } from "../kernel/time.ts"
import { Transactor } from "../kernel/transactor.ts"
import { mailMessage } from "../mail/message.ts"
import { MailOutbox } from "../mail/store.ts"
import { firstOwner, type Member, type MemberRecord, toMember } from "../members/model.ts"
import { MemberStore } from "../members/store.ts"
import { NumberStore, numberTypeOf, type WorkspaceNumber } from "../numbers/model.ts"
import type { AddNumberInput, CreateWorkspaceInput, UpdateWorkspaceInput } from "./inputs.ts"
import type { CreatedKey, CreateKeyInput } from "./keys.ts"
import { apiKey, type Billing, defaultBilling, defaultTexting, type Workspace } from "./model.ts"
import { type ApiKeyRecord, ApiKeyStore, WorkspaceStore } from "./store.ts"

export type { CreatedKey } from "./keys.ts"

/** How long a resolved key is trusted without asking the store again. */
export const KEY_CACHE_MS = 5_000

const unauthenticated = new Unauthenticated({ message: "Missing, malformed, unknown or revoked API key" })
const workspaceNotFound = new NotFound({ message: "No such workspace" })

export const make = Effect.gen(function*() {
  const workspaces = yield* WorkspaceStore
  const keys = yield* ApiKeyStore
  const numbers = yield* NumberStore
  const charges = yield* LedgerStore
  const outbox = yield* MailOutbox
  const members = yield* MemberStore
  const tx = yield* Transactor

  const get = (id: string) =>
    isUuid(id)
      ? workspaces.get(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(workspaceNotFound), onSome: Effect.succeed }))
      )
      : Effect.fail(workspaceNotFound)

  const create = (input: CreateWorkspaceInput) =>
    Effect.gen(function*() {
      const { uuid } = yield* Ids
      const workspace: Workspace = {
        id: uuid(),
        name: input.name,
        billing: { ...defaultBilling, ...input.billing },
        ...defaultTexting,
        createdAt: yield* nowIso
      }
      yield* workspaces.insert(workspace)
      return workspace
    })

  const update = (id: string, patch: UpdateWorkspaceInput) =>
    Effect.gen(function*() {
      const current = yield* get(id)
      const billing: Billing = { ...current.billing, ...patch.billing }
      const next: Workspace = {
        ...current,
        name: patch.name ?? current.name,
        billing,
        textingSegmentsPerMinute: patch.textingSegmentsPerMinute ?? current.textingSegmentsPerMinute,
        quietHours: patch.quietHours === undefined ? current.quietHours : patch.quietHours
      }
      yield* workspaces.update(next)
      return next
    })

  const createKey = (workspaceId: string, input: CreateKeyInput) =>
    Effect.gen(function*() {
      yield* get(workspaceId)
      const { uuid } = yield* Ids
      const token = generateToken(input.kind)
      const record: ApiKeyRecord = {
        id: uuid(),
        workspaceId,
        kind: input.kind,
        scopes: [...new Set(input.scopes ?? allScopes)],
        name: input.name ?? null,
        hash: yield* hashToken(token),
        createdAt: yield* nowIso,
        revokedAt: null
      }
      yield* keys.insert(record)
      const created: CreatedKey = {
        id: record.id,
        kind: record.kind,
        scopes: record.scopes,
        name: record.name,
        token,
        createdAt: record.createdAt
      }
      return created
    })

  const revokeKey = (keyId: string) =>
    Effect.gen(function*() {
      if (!isUuid(keyId)) return yield* new NotFound({ message: "No such key" })
      const revoked = yield* keys.revoke(keyId, yield* nowIso)
      if (Option.isNone(revoked)) return yield* new NotFound({ message: "No such key" })
      forgetKey(revoked.value.id)
      return revoked.value
    })

  // Resolved keys are cached briefly: authentication is on every request's path, and a hit skips
  // both the hash and the store. A revocation in this process evicts at once; other processes on
  // one Postgres evict when its notice arrives (adapters/sql/keyRevocations.ts), and within
  // KEY_CACHE_MS if they missed it. Entries live only in this process's memory, like the request itself.
  const cache = new Map<string, { readonly principal: Principal; readonly at: number }>()

  /** Drops a key from this process's cache: it is looked up again on its next request. */
  const forgetKey = (keyId: string) => {
    for (const [token, entry] of cache) if (entry.principal.keyId === keyId) cache.delete(token)
  }
  /** Drops every cached key (revocation notices may have been missed). */
  const forgetAllKeys = () => cache.clear()

  /**
   * Resolves an API key to its principal; every failure is the same 401. Takes the raw token, or
   * the key an edge already parsed with `parseToken` (the HTTP middleware does), which is not
   * parsed again.
   */
  const authenticate = (key: string | ParsedKey): Effect.Effect<Principal, Unauthenticated> => {
    const token = typeof key === "string" ? key : key.token
    // The cache hit is every request's path: no generator there.
    return Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const hit = cache.get(token)
      return hit && now - hit.at < KEY_CACHE_MS ? Effect.succeed(hit.principal) : resolve(key, token, now)
    })
  }

  const resolve = (key: string | ParsedKey, token: string, now: number) =>
    Effect.gen(function*() {
      if (typeof key === "string" && Option.isNone(parseToken(key))) return yield* unauthenticated
      const hash = yield* hashToken(token)
      const record = yield* keys.findByHash(hash)
      if (Option.isNone(record) || record.value.revokedAt !== null) {
        cache.delete(token)
        return yield* unauthenticated
      }
      const principal: Principal = {
        workspaceId: record.value.workspaceId,
        keyId: record.value.id,
        kind: record.value.kind,
        scopes: new Set(record.value.scopes)
      }
      if (cache.size >= 10_000) cache.clear()
      cache.set(token, { principal, at: now })
      return principal
    })

  const addNumber = (workspaceId: string, input: AddNumberInput) =>
    Effect.gen(function*() {
      yield* get(workspaceId)
      const e164 = normalizePhone(input.e164)
      if (e164._tag === "Left") return yield* new InvalidArgument({ message: `e164: ${e164.left}` })
      const number: WorkspaceNumber = {
        e164: e164.right,
        // The billed type follows the number itself; the hint only matters for non-US ranges.
        type: numberTypeOf(e164.right) === "toll_free" ? "toll_free" : (input.type ?? "local"),
        voiceMode: "app",
        agentId: null,
        forwardTo: null,
        assignedUserId: null,
        status: "active"
      }
      const { uuid } = yield* Ids
      yield* numbers.insert(workspaceId, number, uuid()).pipe(
        Effect.catchAll(() => Effect.fail(new FailedPrecondition({ message: `${number.e164} is already taken` })))
      )
      return number
    })

  /** Every workspace, oldest first. */
  const list = workspaces.list

  /** The workspace's keys, revoked ones included, oldest first; never a hash or a token. */
  const listKeys = (workspaceId: string) =>
    get(workspaceId).pipe(
      Effect.zipRight(keys.list(workspaceId)),
      Effect.map((rows) => rows.map(apiKey))
    )

  const getKey = (keyId: string) =>
    Effect.gen(function*() {
      const found = isUuid(keyId) ? yield* keys.get(keyId) : Option.none()
      if (Option.isNone(found)) return yield* new NotFound({ message: "No such key" })
      return apiKey(found.value)
    })

  const listNumbers = (workspaceId: string) => get(workspaceId).pipe(Effect.zipRight(numbers.list(workspaceId)))

  /**
   * Removes a number seeded with `addNumber`. One bought through the API (it has a ledger charge)
   * is refused: the carrier still holds it, and the ledger names it.
   */
  const removeNumber = (workspaceId: string, e164: string) =>
    Effect.gen(function*() {
      yield* get(workspaceId)
      const parsed = normalizePhone(e164)
      const noSuchNumber = new NotFound({ message: "No such number in this workspace" })
      if (parsed._tag === "Left") return yield* noSuchNumber
      if ((yield* charges.list(workspaceId)).some((c) => c.numberE164 === parsed.right)) {
        return yield* new FailedPrecondition({
          message: `${parsed.right} was bought through the API, not seeded; release it at the carrier`
        })
      }
      const removed = yield* numbers.remove(workspaceId, parsed.right)
      if (Option.isNone(removed)) return yield* noSuchNumber
      return removed.value
    })

  /** The workspace's ledger, newest first, as the admin API shows it. */
  const ledger = (workspaceId: string) =>
    get(workspaceId).pipe(
      Effect.zipRight(charges.list(workspaceId)),
      Effect.map((rows) => rows.map(ledgerCharge))
    )

  /** The workspace's mail outbox, newest first, as the admin API shows it. */
  const mail = (workspaceId: string) =>
    get(workspaceId).pipe(
      Effect.zipRight(outbox.list(workspaceId)),
      Effect.map((rows) => rows.map(mailMessage))
    )

  /**
   * First boot: when no workspace exists, the default workspace, its test key and its owner
   * (`owner@localhost`, whom the operator renames with the admin API). `announce` shows the key (it
   * is stored hashed, so it can be shown only now) and runs before the commit: a crash before it has
   * shown the key commits nothing, and the next boot makes and shows a new one. A crash after it has
   * shown the key but before the commit leaves a shown key that never worked, and the next boot
   * shows another. Never a key committed and not shown. Processes booting at once on one database
   * take turns, so only the first creates them.
   */
  const bootstrap = <E = never>(
    announce: (
      first: { readonly workspace: Workspace; readonly key: CreatedKey; readonly owner: Member }
    ) => Effect.Effect<void, E> = () => Effect.void as Effect.Effect<void, E>
  ) =>
    tx.withTransaction(
      Effect.gen(function*() {
        yield* tx.lock("workspaces:bootstrap")
        if ((yield* workspaces.count) > 0) {
          return Option.none<{ workspace: Workspace; key: CreatedKey; owner: Member }>()
        }
        const workspace = yield* create({
          name: "Default workspace",
          billing: { identity: "verified", mobileVerified: true }
        })
        const key = yield* createKey(workspace.id, { kind: "test", name: "First boot test key" })
        const { uuid } = yield* Ids
        const owner: MemberRecord = { id: uuid(), workspaceId: workspace.id, ...firstOwner, createdAt: yield* nowIso }
        yield* members.insert(owner)
        const first = { workspace, key, owner: toMember(owner) }
        yield* announce(first)
        return Option.some(first)
      })
    )

  return {
    get,
    list,
    create,
    update,
    createKey,
    listKeys,
    getKey,
    revokeKey,
    authenticate,
    forgetKey,
    forgetAllKeys,
    addNumber,
    listNumbers,
    removeNumber,
    ledger,
    mail,
    bootstrap
  } as const
})

export class Workspaces extends Context.Tag("core/Workspaces")<Workspaces, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Workspaces, make)
