/**
 * Fixed-shape object builders compiled once from a list of keys. A function whose body is one
 * object literal (`{ id: r.id, ... }`) gives V8 a single hidden class and no per-key dictionary
 * work, which a loop assigning `out[key]` does not: the loop pays a dictionary lookup per key on
 * every row of every list (docs/architecture.md, "Rows mapped, not decoded"). The keys come from our
 * own schemas, never from input, and each is written as a JSON string literal.
 */

/** How one output key is read: `read(source)` is a JS expression over the parameter names given. */
export interface LiteralField {
  readonly key: string
  readonly expr: string
}

/** `(...params) => ({ key: expr, ... })`, compiled. */
export const compileLiteral = <F extends (...args: ReadonlyArray<any>) => unknown>(
  params: ReadonlyArray<string>,
  fields: ReadonlyArray<LiteralField>,
  helpers: Record<string, unknown> = {}
): F => {
  const body = `return { ${fields.map(({ key, expr }) => `${JSON.stringify(key)}: ${expr}`).join(", ")} }`
  const names = Object.keys(helpers)
  // eslint-disable-next-line no-new-func -- compiled once from our own schemas' keys (see the module comment)
  const outer = new Function(...names, `return function (${params.join(", ")}) { ${body} }`)
  return outer(...names.map((n) => helpers[n])) as F
}

/** A property read of `key` on the object named `from`, safe for any key. */
export const prop = (from: string, key: string): string => `${from}[${JSON.stringify(key)}]`
