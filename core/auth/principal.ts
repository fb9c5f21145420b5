import { Effect, Schema } from "effect"
import { PermissionDenied } from "../kernel/errors.ts"
import type { Scope } from "./scopes.ts"

export const KeyKind = Schema.Literal("live", "test")
export type KeyKind = typeof KeyKind.Type

/** Who is calling: resolved from an API key by the HTTP and MCP edges, passed to every use case. */
export interface Principal {
  readonly workspaceId: string
  readonly keyId: string
  readonly kind: KeyKind
  readonly scopes: ReadonlySet<Scope>
  /**
   * Set when a member acts through the console: the member's id (SPEC's `authorUid`). `keyId` is then
   * the member's id too, since no key is involved.
   */
  readonly memberId?: string
}

/** Who did it, as the audit log names actors: `member:<id>` or `key:<id>`. */
export const actorOf = (principal: Principal): string =>
  principal.memberId === undefined ? `key:${principal.keyId}` : `member:${principal.memberId}`

/** Fails with 403 naming the missing scope. */
export const requireScope = (principal: Principal, scope: Scope): Effect.Effect<void, PermissionDenied> =>
  principal.scopes.has(scope)
    ? Effect.void
    : Effect.fail(new PermissionDenied({ message: `This key lacks the scope ${scope}` }))
