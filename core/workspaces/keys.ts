/** API keys as the admin API issues them (CONTRACT.md "Admin API"). */
import { Schema } from "effect"
import { KeyKind } from "../auth/principal.ts"
import { Scope } from "../auth/scopes.ts"
import { Text } from "../kernel/text.ts"

/** A key with no `scopes` gets every scope. */
export const CreateKeyInput = Schema.Struct({
  kind: KeyKind,
  scopes: Schema.optional(Schema.Array(Scope).pipe(Schema.minItems(1))),
  name: Schema.optional(Text(200))
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type CreateKeyInput = typeof CreateKeyInput.Type

/** A new key: the only time its `token` is shown; only its hash is stored. */
export const CreatedKey = Schema.Struct({
  id: Schema.UUID,
  kind: KeyKind,
  scopes: Schema.Array(Schema.String),
  name: Schema.NullOr(Schema.String),
  token: Schema.String,
  createdAt: Schema.String
})
export type CreatedKey = typeof CreatedKey.Type
