/** How a refused input is worded, whichever transport it came through. */
import { ParseResult } from "effect"
import { displayText } from "./display.ts"
import { InvalidArgument } from "./errors.ts"

type Issue = Pick<ParseResult.ArrayFormatterIssue, "_tag" | "path" | "message">

/**
 * One readable sentence per offending field. A union (e.g. `string | null`) reports one issue per
 * member; they are folded into "Expected string or null" and the optional member is left out.
 * Every transport says it the same way: REST bodies and queries, tool inputs, the admin CLI.
 */
export const decodeMessage = (e: { readonly issues: ReadonlyArray<Issue>; readonly message: string }) => {
  const byPath = new Map<string, Array<Issue>>()
  for (const issue of e.issues) {
    const path = issue.path.map(String).join(".")
    byPath.set(path, [...(byPath.get(path) ?? []), issue])
  }
  // A body that may be null (`NullOr(Struct)`, an optional body) also reports that the object it got is not null: said by its fields' issues already.
  const root = byPath.get("")
  if (byPath.size > 1 && root !== undefined && root.every((i) => i.message.startsWith("Expected null, actual"))) {
    byPath.delete("")
  }
  const parts: Array<string> = []
  for (const [path, issues] of byPath) {
    // Paths hold the caller's own keys, and messages quote the caller's values: shown escaped and capped.
    const field = displayText(path || "body", 100)
    if (issues.some((i) => i._tag === "Unexpected")) parts.push(`${field}: unknown field`)
    else if (issues.some((i) => i._tag === "Missing")) parts.push(`${field}: is required`)
    else if (path === "" && issues.every((i) => i.message.startsWith("Expected {"))) {
      parts.push("body: must be a JSON object")
    } else {
      const expected: Array<string> = []
      let actual = ""
      const other: Array<string> = []
      for (const i of issues) {
        const m = /^Expected (.+), actual (.+)$/s.exec(i.message)
        if (m) {
          if (m[1] !== "undefined") expected.push(m[1]!)
          actual = m[2]!
        } else other.push(i.message)
      }
      if (other.length > 0) parts.push(`${field}: ${displayText(other.join("; "), 200)}`)
      else if (expected.length > 0) {
        parts.push(`${field}: expected ${expected.join(" or ")}, got ${displayText(actual, 60)}`)
      }
    }
  }
  return parts.length > 0 ? parts.slice(0, 5).join("; ") : e.message
}

/** A refused input as the `400 invalid_argument` every transport answers. */
export const invalidInput = (error: ParseResult.ParseError): InvalidArgument =>
  new InvalidArgument({
    message: decodeMessage({ issues: ParseResult.ArrayFormatter.formatErrorSync(error), message: error.message })
  })
