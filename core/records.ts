/**
 * Stored records and their views. Each record is one `Schema.Struct`; a public view is that
 * struct with fields picked or omitted, and `projection` copies a record onto such a view, so a
 * field added to the record reaches the view without another edit.
 */
import { Schema, Struct } from "effect"

/** Keeps the view's fields of a record, in the view's order (the public JSON order). Compiled once per view. */
export const projection = <F extends Schema.Struct.Fields>(view: Schema.Struct<F>) => {
  const pick = Struct.pick(...Object.keys(view.fields))
  return (record: Schema.Struct.Type<F>): Schema.Struct.Type<F> => pick(record as Record<string, unknown>) as Schema.Struct.Type<F>
}

/**
 * A record field a new record starts with: the record's `make` fills it in when it is not given,
 * so the code that creates records does not list every field (and a new field needs no edit there).
 */
export const withDefault = <A, I>(schema: Schema.Schema<A, I>, value: () => A) =>
  Schema.propertySignature(schema).pipe(Schema.withConstructorDefault(value))

/** A nullable field that starts as `null`. */
export const nullable = <A, I>(schema: Schema.Schema<A, I>) => withDefault(Schema.NullOr(schema), () => null)
