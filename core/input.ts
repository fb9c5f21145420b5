/**
 * The checks every caller input passes before any Schema sees it, whatever transport carried it.
 * A Schema decodes a value element by element before its `maxItems` or key-count check runs, and
 * formats errors recursively: a 1 MiB body of 200,000 array elements cost 300-490 ms of event loop,
 * and one nested 3,000 deep overflowed the stack. One cheap walk with fixed bounds refuses both
 * first, so the worst input costs about what a normal one does; the bounds sit well above anything
 * a documented input allows (a contact carries at most 200 notes, 100 tags and 100 properties).
 */

export const InputBounds = {
  /** Nesting of arrays and objects. */
  depth: 16,
  /** Elements in one array. */
  arrayItems: 1_000,
  /** Keys in one object. */
  objectKeys: 1_000,
  /** Arrays, objects and scalars in the whole input. */
  values: 5_000
} as const

/**
 * NUL (which Postgres cannot store in text or jsonb) and lone UTF-16 surrogates (which no UTF-8
 * column or JSON answer can carry) are refused in every string a caller sends.
 */
const BAD_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a caller's string is refused, or undefined. */
export const textProblem = (s: string): string | undefined =>
  BAD_TEXT.test(s) ? (s.includes("\u0000") ? "must not contain NUL characters" : "must be well-formed Unicode (a lone surrogate)") : undefined

/**
 * Why a parsed JSON input is refused, naming where (`tags`, `properties.x`, `body` for the root),
 * or undefined. Iterative and stops at the first problem, so its cost is bounded by the bounds.
 */
export const jsonProblem = (input: unknown): string | undefined => {
  let values = 0
  const stack: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [{ value: input, path: "", depth: 0 }]
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!
    const where = path === "" ? "body" : path
    if (++values > InputBounds.values) return `body: more than ${InputBounds.values} values in all`
    if (typeof value === "string") {
      const problem = textProblem(value)
      if (problem !== undefined) return `${where}: ${problem}`
      continue
    }
    if (value === null || typeof value !== "object") continue
    if (depth >= InputBounds.depth) return `${where}: nested deeper than ${InputBounds.depth} levels`
    if (Array.isArray(value)) {
      if (value.length > InputBounds.arrayItems) return `${where}: more than ${InputBounds.arrayItems} items`
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: path === "" ? `${i}` : `${path}.${i}`, depth: depth + 1 })
      continue
    }
    const keys = Object.keys(value)
    if (keys.length > InputBounds.objectKeys) return `${where}: more than ${InputBounds.objectKeys} keys`
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!
      const problem = textProblem(key)
      // The key itself is not echoed: it is the refused text.
      if (problem !== undefined) return `${where}: a key ${problem}`
      stack.push({ value: (value as Record<string, unknown>)[key], path: path === "" ? key : `${path}.${key}`, depth: depth + 1 })
    }
  }
  return undefined
}
