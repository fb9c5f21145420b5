/**
 * Answers of two runs (two servers, or one app with the fast path on and off) made comparable:
 * what must differ between them is named by order of first appearance, so two runs that agree on
 * everything else, and on which id is which where, give the same value.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

/**
 * Ids and times are always named; `named` says what other strings are: a kind (`cursor`) names
 * them by order like ids, a `<placeholder>` replaces them all alike, undefined keeps them.
 */
export const normalizer = (named: (value: string, key: string | undefined) => string | undefined = () => undefined) => {
  const names = new Map<string, string>()
  const name = (kind: string, value: string) => {
    let found = names.get(value)
    if (found === undefined) names.set(value, found = `<${kind} ${names.size}>`)
    return found
  }
  const walk = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v))
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]))
    }
    if (typeof value !== "string") return value
    if (UUID.test(value)) return name("id", value)
    if (TIME.test(value)) return name("time", value)
    const kind = named(value, key)
    return kind === undefined ? value : kind.startsWith("<") ? kind : name(kind, value)
  }
  return walk
}
