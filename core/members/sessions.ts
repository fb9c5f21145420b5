/**
 * Sign-in by email link and the console's sessions (CONTRACT "Members and the console"). Links and
 * sessions are bearer secrets: only their SHA-256 digests are stored, as for API keys, so a
 * database leak signs nobody in. A session belongs to an email and acts as one of its memberships,
 * which the person may switch.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { sha256Hex } from "../auth/apiKey.ts"
import type { Principal } from "../auth/principal.ts"
import { InvalidArgument, NotFound, Unauthenticated } from "../kernel/errors.ts"
import { Transactor } from "../kernel/transactor.ts"
import { Mailer } from "../mail/mailer.ts"
import { WorkspaceStore } from "../workspaces/store.ts"
import { type Member, type MemberRecord, normalizeEmail, roleScopes, toMember } from "./model.ts"
import { MemberStore } from "./store.ts"

/** A link is good for 15 minutes, once. */
export const LINK_TTL_MS = 15 * 60_000
/** A session ends after 30 days without use. */
export const SESSION_IDLE_MS = 30 * 24 * 60 * 60_000
/** At most this many links are mailed to one email per link lifetime: more are dropped silently (no enumeration, no mail bombing). */
export const LINKS_PER_WINDOW = 3
/** A session's last use is written at most this often, not on every request. */
const TOUCH_EVERY_MS = 60 * 60_000

export const SignInLink = Schema.Struct({
  hash: Schema.String,
  email: Schema.String,
  createdAt: Schema.String,
  expiresAt: Schema.String,
  usedAt: Schema.NullOr(Schema.String)
})
export type SignInLink = typeof SignInLink.Type

export const SessionRecord = Schema.Struct({
  hash: Schema.String,
  email: Schema.String,
  memberId: Schema.UUID,
  createdAt: Schema.String,
  lastUsedAt: Schema.String
})
export type SessionRecord = typeof SessionRecord.Type

/** The port of links and sessions. Adapters: adapters/{memory,sql}/sessions.ts. */
export interface SessionStore {
  readonly insertLink: (link: SignInLink) => Effect.Effect<void>
  /** How many links were made for `email` at or after `since`. */
  readonly countLinksSince: (email: string, since: string) => Effect.Effect<number>
  /** Marks the link used and answers it, when it is unused and expires after `at`; none otherwise. */
  readonly redeemLink: (hash: string, at: string) => Effect.Effect<Option.Option<SignInLink>>
  readonly insertSession: (session: SessionRecord) => Effect.Effect<void>
  readonly findSession: (hash: string) => Effect.Effect<Option.Option<SessionRecord>>
  readonly touchSession: (hash: string, at: string) => Effect.Effect<void>
  readonly setSessionMember: (hash: string, memberId: string) => Effect.Effect<void>
  readonly removeSession: (hash: string) => Effect.Effect<boolean>
}
export const SessionStore = Context.GenericTag<SessionStore>("core/SessionStore")

/** A signed-in person: the membership the session acts as. */
export interface SignedIn {
  readonly principal: Principal
  readonly member: Member
}

/** What the console shows of who is signed in: the workspace acted in, and every membership of the email. */
export interface Profile {
  readonly member: Member
  readonly workspace: { readonly id: string; readonly name: string }
  readonly workspaces: ReadonlyArray<{ readonly id: string; readonly name: string; readonly role: Member["role"] }>
}

/** Where links point: PUBLIC_BASE_URL. */
export class ConsoleOrigin extends Context.Tag("core/ConsoleOrigin")<ConsoleOrigin, { readonly baseUrl: string }>() {}

const BASE64URL = /^[A-Za-z0-9_-]{43}$/
const newSecret = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

export const signedOut = new Unauthenticated({ message: "Sign in to the console" })
const badLink = new InvalidArgument({ message: "This sign-in link was already used or has expired" })

export const make = Effect.gen(function*() {
  const store = yield* SessionStore
  const members = yield* MemberStore
  const workspaces = yield* WorkspaceStore
  const mailer = yield* Mailer
  const tx = yield* Transactor
  const { baseUrl } = yield* ConsoleOrigin
  const origin = baseUrl.replace(/\/+$/, "")
  const iso = (ms: number) => new Date(ms).toISOString()

  /** Makes a link for `email` and answers its URL; the caller mails it (or, at first boot, prints it). */
  const issueLink = (email: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const token = newSecret()
      yield* store.insertLink({
        hash: yield* sha256Hex(token),
        email: normalizeEmail(email),
        createdAt: iso(now),
        expiresAt: iso(now + LINK_TTL_MS),
        usedAt: null
      })
      return `${origin}/app/sign-in/${token}`
    })

  /**
   * Mails a link to `email` when it belongs to a member and fewer than LINKS_PER_WINDOW links were
   * mailed to it lately. Answers the same in every case: the caller learns nothing of the email.
   */
  const requestLink = (email: string) =>
    Effect.gen(function*() {
      const normalized = normalizeEmail(email)
      const memberships = yield* members.findByEmail(normalized)
      const first = memberships[0]
      if (first === undefined) return
      // Counted and made holding the email's lock, so requests at once cannot all pass the count.
      const url = yield* tx.withTransaction(
        Effect.gen(function*() {
          yield* tx.lock(`sign-in:${normalized}`)
          const now = yield* Clock.currentTimeMillis
          if ((yield* store.countLinksSince(normalized, iso(now - LINK_TTL_MS))) >= LINKS_PER_WINDOW) {
            return Option.none<string>()
          }
          return Option.some(yield* issueLink(normalized))
        })
      )
      if (Option.isNone(url)) return
      // The mail goes with the first membership's workspace, where the operator reads its outbox.
      yield* mailer.send(first.workspaceId, {
        to: normalized,
        subject: "Your Switchboard sign-in link",
        text: [
          `Sign in to the Switchboard console:`,
          "",
          url.value,
          "",
          "The link works once, within 15 minutes. If you did not ask for it, ignore this mail."
        ].join("\n")
      }).pipe(Effect.catchAll((e) => Effect.logWarning("Sign-in mail not sent", e.message)))
    })

  const signedInAs = (member: MemberRecord): SignedIn => ({
    principal: {
      workspaceId: member.workspaceId,
      keyId: member.id,
      kind: "live",
      scopes: roleScopes(member.role),
      memberId: member.id
    },
    member: toMember(member)
  })

  const profile = ({ member, principal }: SignedIn) =>
    Effect.gen(function*() {
      const memberships = yield* members.findByEmail(member.email)
      const named = yield* Effect.forEach(memberships, (m) =>
        Effect.map(workspaces.get(m.workspaceId), (w) => ({
          id: m.workspaceId,
          name: Option.match(w, { onNone: () => "", onSome: (x) => x.name }),
          role: m.role
        })))
      const name = named.find((w) => w.id === principal.workspaceId)?.name ?? ""
      return {
        member,
        workspace: { id: principal.workspaceId, name },
        workspaces: named
      } satisfies Profile
    })

  /** Redeems a link: a new session acting as the email's oldest membership. Answers the session's token. */
  const redeem = (token: string) =>
    Effect.gen(function*() {
      if (!BASE64URL.test(token)) return yield* badLink
      const now = yield* Clock.currentTimeMillis
      const link = yield* store.redeemLink(yield* sha256Hex(token), iso(now))
      if (Option.isNone(link)) return yield* badLink
      const first = (yield* members.findByEmail(link.value.email))[0]
      // The member was removed after the link was mailed.
      if (first === undefined) return yield* badLink
      const session = newSecret()
      yield* store.insertSession({
        hash: yield* sha256Hex(session),
        email: link.value.email,
        memberId: first.id,
        createdAt: iso(now),
        lastUsedAt: iso(now)
      })
      return session
    })

  /** The person behind a session token; a session unused for 30 days is ended. */
  const authenticate = (token: string) =>
    Effect.gen(function*() {
      if (!BASE64URL.test(token)) return yield* signedOut
      const hash = yield* sha256Hex(token)
      const found = yield* store.findSession(hash)
      if (Option.isNone(found)) return yield* signedOut
      const session = found.value
      const now = yield* Clock.currentTimeMillis
      const last = Date.parse(session.lastUsedAt)
      if (now - last > SESSION_IDLE_MS) {
        yield* store.removeSession(hash)
        return yield* signedOut
      }
      const member = yield* members.get(session.memberId)
      // Removed members are signed out (the SQL store also deletes their sessions), and so is a
      // member whose email the operator changed: the link went to the old address.
      if (Option.isNone(member) || member.value.email !== session.email) return yield* signedOut
      if (now - last > TOUCH_EVERY_MS) yield* store.touchSession(hash, iso(now))
      return signedInAs(member.value)
    })

  /** Acts as the email's membership of `workspaceId` from now on. */
  const switchWorkspace = (token: string, workspaceId: string) =>
    Effect.gen(function*() {
      const current = yield* authenticate(token)
      const target = (yield* members.findByEmail(current.member.email)).find((m) => m.workspaceId === workspaceId)
      if (target === undefined) return yield* new NotFound({ message: "You are not a member of that workspace" })
      yield* store.setSessionMember(yield* sha256Hex(token), target.id)
      return signedInAs(target)
    })

  const signOut = (token: string) =>
    BASE64URL.test(token) ? Effect.asVoid(Effect.flatMap(sha256Hex(token), store.removeSession)) : Effect.void

  return { issueLink, requestLink, redeem, authenticate, profile, switchWorkspace, signOut }
})

export class Sessions extends Context.Tag("core/Sessions")<Sessions, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Sessions, make)
