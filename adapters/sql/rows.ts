/**
 * Stored records as table rows, derived from each record's schema: a field `fooBar` is the column
 * `foo_bar`; timestamptz columns arrive as Dates (pg and PGlite) and become ISO strings; a field
 * holding an array, a record, a struct or any JSON is a jsonb column, which arrives parsed (or, from another
 * driver, as JSON text) and is written as JSON text. Scalars (text, numbers, booleans) are columns
 * of their own type, read and written as they are.
 */
import { Schema, type SchemaAST as AST, String as Str } from "effect"
import { compileLiteral, prop } from "../../core/kernel/literal.ts"

/** Whether a field holds a structure (array, record, struct) or any JSON, stored in a jsonb column. */
const isJson = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "TupleType":
    case "TypeLiteral":
    case "ObjectKeyword":
    case "UnknownKeyword":
    case "AnyKeyword":
      return true
    case "Refinement":
      return isJson(ast.from)
    case "Transformation":
      return isJson(ast.to)
    case "Suspend":
      return isJson(ast.f())
    case "Union":
      return ast.types.some(isJson)
    default:
      return false
  }
}

/** A field's type: a plain schema, or a property signature (a field with a constructor default). */
const fieldType = (field: Schema.Struct.Field): AST.AST => {
  const ast = field.ast
  if (ast._tag === "PropertySignatureDeclaration") return ast.type
  if (ast._tag === "PropertySignatureTransformation") return ast.to.type
  return ast
}

export interface Table<A> {
  /** The table's columns for a SELECT list; with `alias`, `alias.col AS alias_col` (decode those with `table(record, "alias_")`). */
  readonly columns: (alias?: string) => string
  /**
   * One row as the record: columns renamed, timestamps as ISO strings, jsonb parsed. Not validated
   * field by field: the row was written from the same schema, and a full decode would run every
   * field through the Schema on every row of every list (docs/architecture.md, "Rows mapped, not
   * decoded").
   */
  readonly decode: (row: unknown) => A
  /** The same, validated by the record's schema; throws on a row the schema rejects (tests). */
  readonly decodeChecked: (row: unknown) => A
  /** The record as column values for `sql.insert` / `sql.update`. */
  readonly row: (record: A) => Record<string, unknown>
}

/** The table of a record; build it once per module, it compiles the checked decoder. */
export const table = <F extends Schema.Struct.Fields>(
  record: Schema.Struct<F>,
  prefix = ""
): Table<Schema.Struct.Type<F>> => {
  const columns = Object.entries(record.fields).map(([field, schema]) => {
    const column = Str.camelToSnake(field)
    return { field, column, key: prefix + column, json: isJson(fieldType(schema)) }
  })
  // One object literal per table (core/kernel/literal.ts): timestamps arrive as Dates, jsonb parsed or as text.
  const fromRow = compileLiteral<(row: unknown) => Record<string, unknown>>(
    ["r"],
    columns.map(({ field, key, json }) => ({ key: field, expr: `${json ? "json" : "scalar"}(${prop("r", key)})` })),
    {
      json: (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v),
      scalar: (v: unknown) => (v instanceof Date ? v.toISOString() : v)
    }
  )
  const toRow = (record: unknown) => {
    const r = record as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const { field, column, json } of columns) {
      out[column] = json && r[field] !== null
        ? JSON.stringify(r[field])
        : r[field]
    }
    return out
  }
  const fromRowSchema = Schema.transform(Schema.Object, record, { strict: false, decode: fromRow, encode: toRow })
  return {
    decode: fromRow as (row: unknown) => Schema.Struct.Type<F>,
    decodeChecked: Schema.decodeUnknownSync(fromRowSchema as unknown as Schema.Schema<Schema.Struct.Type<F>, object>),
    columns: (alias) =>
      columns.map(({ column }) => (alias === undefined ? column : `${alias}.${column} AS ${alias}_${column}`)).join(
        ", "
      ),
    row: toRow
  }
}

/** Postgres unique violation. */
export const isUniqueViolation = (e: unknown): boolean => {
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause
  return cause?.code === "23505"
}

/** Escapes LIKE metacharacters so user text matches literally. */
export const likeContains = (s: string): string => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
