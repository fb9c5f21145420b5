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
}

/** Fails with 403 naming the missing scope. */
export const requireScope = (principal: Principal, scope: Scope): Effect.Effect<void, PermissionDenied> =>
  principal.scopes.has(scope)
    ? Effect.void
    : Effect.fail(new PermissionDenied({ message: `This key lacks the scope ${scope}` }))
