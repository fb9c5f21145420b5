/**
 * Stored records and their views. Each record is one `Schema.Struct`; a public view is that
 * struct with fields picked or omitted, and `projection` copies a record onto such a view, so a
 * field added to the record reaches the view without another edit.
 */
import { Schema } from "effect"
import { compileLiteral, prop } from "./literal.ts"

/**
 * Copies the view's fields of a record, in the view's order (the public JSON order); `derived` gives
 * the view's fields the record does not hold. Compiled once per view into one object literal: it
 * runs for every row of every list, and effect's `Struct.pick`, an object spread or a key loop each
 * do per-key work on every row that one object literal does not (docs/architecture.md, "Rows
 * mapped, not decoded").
 */
export const projectionWith = <F extends Schema.Struct.Fields>(view: Schema.Struct<F>) =>
  compileLiteral<(record: object, derived: Partial<Schema.Struct.Type<F>>) => Schema.Struct.Type<F>>(
    ["r", "d"],
    Object.keys(view.fields).map((key) => ({
      key,
      expr: `${JSON.stringify(key)} in d ? ${prop("d", key)} : ${prop("r", key)}`
    }))
  )

/** `projectionWith` for a view whose fields the record all holds; one argument, so it can be given to `map`. */
export const projection = <F extends Schema.Struct.Fields>(view: Schema.Struct<F>) =>
  compileLiteral<(record: Schema.Struct.Type<F>) => Schema.Struct.Type<F>>(
    ["r"],
    Object.keys(view.fields).map((key) => ({ key, expr: prop("r", key) }))
  )

/**
 * A record field a new record starts with: the record's `make` fills it in when it is not given,
 * so the code that creates records does not list every field (and a new field needs no edit there).
 */
export const withDefault = <A, I>(schema: Schema.Schema<A, I>, value: () => A) =>
  Schema.propertySignature(schema).pipe(Schema.withConstructorDefault(value))

/** A nullable field that starts as `null`. */
export const nullable = <A, I>(schema: Schema.Schema<A, I>) => withDefault(Schema.NullOr(schema), () => null)
