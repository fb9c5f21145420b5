/**
 * Stored records and their views. Each record is one `Schema.Struct`; a public view is that
 * struct with fields picked or omitted, and `projection` copies a record onto such a view, so a
 * field added to the record reaches the view without another edit.
 */
import { Schema } from "effect"

/**
 * Copies the view's fields of a record, in the view's order (the public JSON order); `derived` gives
 * the view's fields the record does not hold. A plain loop over keys listed once per view, with no
 * spread: it runs for every row of every list, and effect's `Struct.pick` or an object spread
 * measured 50-80 times slower here.
 */
export const projectionWith = <F extends Schema.Struct.Fields>(view: Schema.Struct<F>) => {
  const keys = Object.keys(view.fields)
  return (record: object, derived: Partial<Schema.Struct.Type<F>>): Schema.Struct.Type<F> => {
    const from = record as Record<string, unknown>
    const extra = derived as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const key of keys) out[key] = key in extra ? extra[key] : from[key]
    return out as Schema.Struct.Type<F>
  }
}

/** `projectionWith` for a view whose fields the record all holds; one argument, so it can be given to `map`. */
export const projection = <F extends Schema.Struct.Fields>(view: Schema.Struct<F>) => {
  const project = projectionWith(view)
  const none = {}
  return (record: Schema.Struct.Type<F>): Schema.Struct.Type<F> => project(record as object, none)
}

/**
 * A record field a new record starts with: the record's `make` fills it in when it is not given,
 * so the code that creates records does not list every field (and a new field needs no edit there).
 */
export const withDefault = <A, I>(schema: Schema.Schema<A, I>, value: () => A) =>
  Schema.propertySignature(schema).pipe(Schema.withConstructorDefault(value))

/** A nullable field that starts as `null`. */
export const nullable = <A, I>(schema: Schema.Schema<A, I>) => withDefault(Schema.NullOr(schema), () => null)
