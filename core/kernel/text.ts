import { Schema } from "effect"

/** Bounded user text. Postgres cannot store U+0000 in text or jsonb, so it is a 400, never a 500. */
export const Text = (max: number) =>
  Schema.String.pipe(
    Schema.maxLength(max),
    Schema.filter((s) => !s.includes("\u0000") || "must not contain NUL characters")
  )

export const NonEmptyText = (max: number) => Text(max).pipe(Schema.minLength(1))
