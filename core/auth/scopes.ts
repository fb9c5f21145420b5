import { Schema } from "effect"

/** Every scope of SPEC "Authentication". A key with no explicit scopes gets all of them. */
export const allScopes = [
  "contacts:read",
  "contacts:write",
  "conversations:read",
  "conversations:write",
  "messages:send",
  "calls:place",
  "numbers:read",
  "numbers:manage",
  "agent:manage",
  "webhooks:manage"
] as const

export const Scope = Schema.Literal(...allScopes)
export type Scope = typeof Scope.Type
