/**
 * Whether a JSON value has the shape a schema of the document describes: types, enums, required and
 * unknown properties, items, patterns, unions. Keywords it does not know pass (it checks the shape
 * of 2xx answers, where a false alarm would be worse than a gap).
 */
import type { JsonSchema } from "./openapi.ts"

/** Where and how `value` departs from `schema`, or undefined when it fits. */
export const mismatch = (
  schema: JsonSchema,
  value: unknown,
  resolve: (s: JsonSchema) => JsonSchema,
  at = "$"
): string | undefined => {
  const s = resolve(schema)
  const union: Array<JsonSchema> | undefined = s.anyOf ?? s.oneOf
  if (union !== undefined) {
    const misses = union.map((b) => mismatch(b, value, resolve, at))
    if (misses.every((m) => m !== undefined)) return misses.join(" and ")
  }
  for (const part of s.allOf ?? []) {
    const miss = mismatch(part, value, resolve, at)
    if (miss !== undefined) return miss
  }
  if (s.const !== undefined && value !== s.const) {
    return `${at} is ${JSON.stringify(value)}, not ${JSON.stringify(s.const)}`
  }
  if (Array.isArray(s.enum) && !s.enum.includes(value)) {
    return `${at} is ${JSON.stringify(value)}, not one of ${JSON.stringify(s.enum)}`
  }
  const types: Array<string> = Array.isArray(s.type) ? s.type : typeof s.type === "string" ? [s.type] : []
  const actual = value === null ? "null" : Array.isArray(value) ? "array" : typeof value
  if (
    types.length > 0 &&
    !types.some((t) =>
      t === actual || (t === "integer" && Number.isInteger(value)) || (t === "number" && actual === "number")
    )
  ) {
    return `${at} is ${actual}, not ${types.join(" or ")}`
  }
  if (typeof value === "string" && typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value)) {
    return `${at} ${JSON.stringify(value)} does not match ${s.pattern}`
  }
  if (Array.isArray(value)) {
    const items: JsonSchema | undefined = s.items
    if (items !== undefined) {
      for (const [i, v] of value.entries()) {
        const miss = mismatch(items, v, resolve, `${at}[${i}]`)
        if (miss !== undefined) return miss
      }
    }
  } else if (value !== null && typeof value === "object") {
    const properties: Record<string, JsonSchema> = s.properties ?? {}
    for (const name of s.required ?? []) if (!(name in value)) return `${at}.${name} is missing`
    for (const [name, v] of Object.entries(value)) {
      const own = properties[name] ?? Object.values<JsonSchema>(s.patternProperties ?? {})[0] ??
        (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined)
      if (own !== undefined) {
        const miss = mismatch(own, v, resolve, `${at}.${name}`)
        if (miss !== undefined) return miss
      } else if (s.additionalProperties === false) return `${at}.${name} is not in the schema`
    }
  }
  return undefined
}
