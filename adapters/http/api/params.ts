/** Path, query and header parameters shared by several groups. */
import { Schema } from "effect"

export const IdParam = Schema.Struct({ id: Schema.String })

export const Deleted = Schema.Struct({ deleted: Schema.Literal(true) }).annotations({ examples: [{ deleted: true }] })

/** `?limit=`: an integer from 1 to `max`, named in the 400 message. */
export const limitParam = (max: number) =>
  Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(1, max),
    Schema.annotations({ message: () => `must be an integer from 1 to ${max}` })
  )

/** `Idempotency-Key` (SPEC "Idempotency"); see idempotency.ts. */
export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String)
})
