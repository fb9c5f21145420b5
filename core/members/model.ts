/** The people of a workspace (CONTRACT "Members and the console"): who signs in to the console, authors, is assigned and answers calls. */
import { Schema } from "effect"
import type { Scope } from "../auth/scopes.ts"
import { allScopes } from "../auth/scopes.ts"
import { NonEmptyText, Text } from "../kernel/text.ts"

export const Role = Schema.Literal("owner", "admin", "member")
export type Role = typeof Role.Type

/** A member as every edge shows it. Its `id` is SPEC's `authorUid`, `assigneeUid` and `memberUid`. */
export const Member = Schema.Struct({
  id: Schema.UUID,
  email: Schema.String,
  name: Schema.String,
  role: Role,
  phone: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})
export type Member = typeof Member.Type

/** A member as stored: the view plus its workspace. Emails are stored lower-cased. */
export const MemberRecord = Schema.Struct({ ...Member.fields, workspaceId: Schema.UUID })
export type MemberRecord = typeof MemberRecord.Type

export const toMember = ({ workspaceId: _, ...member }: MemberRecord): Member => member

/** An email as members are stored: trimmed and lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** The email of the owner the first boot makes for the default workspace, and the sign-in link it prints. */
export const FIRST_OWNER = "owner@localhost"
/** That owner (CONTRACT "Members and the console"), whom the operator renames with the admin API. */
export const firstOwner = { email: FIRST_OWNER, name: "Owner", role: "owner", phone: null } as const

const strict = { parseOptions: { onExcessProperty: "error" } } as const

// The shapes only: core/members/service.ts trims, lower-cases and checks the values, naming the field.
const EmailInput = Text(320).annotations({ description: "an email address; stored trimmed and lower-cased" })
const NameInput = NonEmptyText(200)
const PhoneInput = Text(32).annotations({
  description: "the phone the member answers calls on (E.164 or a 10-digit US number); rung when a call comes in"
})

/** The admin API's new member. */
export const CreateMemberInput = Schema.Struct({
  email: EmailInput,
  name: NameInput,
  role: Role,
  phone: Schema.optional(Schema.NullOr(PhoneInput))
}).annotations(strict)
export type CreateMemberInput = typeof CreateMemberInput.Type

/** The fields given change; `phone: null` clears the phone. */
export const UpdateMemberInput = Schema.Struct({
  email: Schema.optional(EmailInput),
  name: Schema.optional(NameInput),
  role: Schema.optional(Role),
  phone: Schema.optional(Schema.NullOr(PhoneInput))
}).annotations(strict)
export type UpdateMemberInput = typeof UpdateMemberInput.Type

const inbox: ReadonlyArray<Scope> = [
  "contacts:read",
  "contacts:write",
  "conversations:read",
  "conversations:write",
  "messages:send",
  "calls:place",
  "numbers:read"
]

/**
 * What a role may do, as the scopes a key would need: a `member` works the inbox and contacts; an
 * `admin` and the `owner` also numbers, registration, the agent and developer settings. Managing
 * members is the owner's alone, which no key scope names: the console's entries for it require the
 * role (core/tools/console.ts).
 */
export const roleScopes = (role: Role): ReadonlySet<Scope> => new Set(role === "member" ? inbox : allScopes)
