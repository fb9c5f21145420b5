/**
 * The checks every caller input passes before any Schema sees it, whatever transport carried it.
 * A Schema decodes a value element by element before its `maxItems` or key-count check runs, and
 * formats errors recursively: a 1 MiB body of 200,000 array elements would hold the event loop
 * while every element is decoded and its error formatted, and one nested thousands deep overflows
 * the stack. One scan of the JSON text with fixed bounds refuses both first, so the worst input
 * costs about what a normal one does; the bounds sit at or above anything a documented input allows
 * (a broadcast names at most 10,000 phones and 10,000 contacts; a contact carries at most 200
 * notes, 100 tags and 100 properties; its longest text is a 10,000-character note).
 */
import { displayText } from "./display.ts"

export const InputBounds = {
  /** Nesting of arrays and objects. */
  depth: 16,
  /** Elements in one array: a broadcast's 10,000 phones. */
  arrayItems: 10_000,
  /** Keys in one object. */
  objectKeys: 1_000,
  /** Arrays, objects and scalars in the whole input: a broadcast's 10,000 phones and 10,000 contact ids, and its other fields. */
  values: 20_100,
  /** Characters of one string as sent (an escape counts its own length): a Schema refusing a long string quotes all of it in its error. */
  stringLength: 65_536
} as const

/**
 * NUL (which Postgres cannot store in text or jsonb) and lone UTF-16 surrogates (which no UTF-8
 * column or JSON answer can carry) are refused in every string a caller sends.
 */
const BAD_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a caller's string is refused, or undefined. */
export const textProblem = (s: string): string | undefined =>
  BAD_TEXT.test(s)
    ? (s.includes("\u0000") ? "must not contain NUL characters" : "must be well-formed Unicode (a lone surrogate)")
    : undefined

const NUL = "must not contain NUL characters"
const LONE = "must be well-formed Unicode (a lone surrogate)"

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff
const hexDigit = (
  c: number
) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1)
/** The code unit of the 4 hex digits at `at` (a `\uXXXX` escape), or -1. */
const hex4 = (text: string, at: number) => {
  let code = 0
  for (let k = at; k < at + 4; k++) {
    const d = hexDigit(text.charCodeAt(k))
    if (d < 0) return -1
    code = code * 16 + d
  }
  return code
}

/** Characters that need no look inside a string: not a quote, a backslash, NUL or a surrogate. */
const PLAIN = /[^"\\\u0000\uD800-\uDFFF]*/y

/** An open array or object: elements or keys so far, and (objects) the raw text of the last key. */
interface Frame {
  readonly array: boolean
  count: number
  key: string
  expectKey: boolean
}

/** A key as a path segment: decoded, shown escaped and cut short (it is caller text). */
const segment = (raw: string): string => {
  try {
    return displayText(JSON.parse(raw) as string, 64)
  } catch {
    return "?"
  }
}

/**
 * Why a JSON text is refused, naming where (`tags`, `properties.x`, `body` for the root), or
 * undefined. It scans the text once without building any value, and stops at the first bound
 * passed: refusing 200,000 array elements costs the first thousand. Malformed JSON is left to the
 * parser that reads the body next; the scan only bounds what that parser will build.
 */
export const jsonTextProblem = (text: string): string | undefined => {
  const frames: Array<Frame> = []
  let values = 0
  const where = (depth: number) => {
    const parts: Array<string> = []
    for (let k = 0; k < depth; k++) {
      parts.push(frames[k]!.array ? String(frames[k]!.count - 1) : segment(frames[k]!.key))
    }
    return parts.length === 0 ? "body" : parts.join(".")
  }
  /** A value starts: count it, and in an array count the element. */
  const startValue = (): string | undefined => {
    if (++values > InputBounds.values) return `body: more than ${InputBounds.values} values in all`
    const top = frames[frames.length - 1]
    if (top?.array === true && ++top.count > InputBounds.arrayItems) {
      return `${where(frames.length - 1)}: more than ${InputBounds.arrayItems} items`
    }
    return undefined
  }
  const n = text.length
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x3a /* : */) {
      i++
    } else if (c === 0x2c /* , */) {
      const top = frames[frames.length - 1]
      if (top !== undefined && !top.array) top.expectKey = true
      i++
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const problem = startValue()
      if (problem !== undefined) return problem
      if (frames.length >= InputBounds.depth) {
        return `${where(frames.length)}: nested deeper than ${InputBounds.depth} levels`
      }
      frames.push({ array: c === 0x5b, count: 0, key: "", expectKey: c === 0x7b })
      i++
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      frames.pop()
      i++
    } else if (c === 0x22 /* " */) {
      // A string: find its end, checking escapes and raw code units for NUL and lone surrogates.
      let problem: string | undefined
      let j = i + 1
      while (j < n) {
        let d = text.charCodeAt(j)
        if (d !== 0x22 && d !== 0x5c && d !== 0 && (d < 0xd800 || d > 0xdfff)) {
          // A run of plain characters is skipped by the regex engine, far faster than a loop here.
          PLAIN.lastIndex = j
          PLAIN.test(text)
          j = PLAIN.lastIndex
          if (j >= n) break
          d = text.charCodeAt(j)
        }
        if (d === 0x22) break
        if (d === 0x5c /* \ */) {
          if (text.charCodeAt(j + 1) !== 0x75 /* u */) {
            j += 2
            continue
          }
          const code = hex4(text, j + 2)
          if (code === 0) problem ??= NUL
          else if (isHigh(code)) {
            if (text.charCodeAt(j + 6) === 0x5c && text.charCodeAt(j + 7) === 0x75 && isLow(hex4(text, j + 8))) j += 6
            else problem ??= LONE
          } else if (isLow(code)) problem ??= LONE
          j += 6
          continue
        }
        if (d === 0) problem ??= NUL
        else if (isHigh(d)) {
          if (isLow(text.charCodeAt(j + 1))) j++
          else problem ??= LONE
        } else if (isLow(d)) problem ??= LONE
        j++
      }
      if (j - i - 1 > InputBounds.stringLength) problem = `longer than ${InputBounds.stringLength} characters`
      const top = frames[frames.length - 1]
      if (top !== undefined && !top.array && top.expectKey) {
        if (++top.count > InputBounds.objectKeys) {
          return `${where(frames.length - 1)}: more than ${InputBounds.objectKeys} keys`
        }
        // The key itself is not echoed: it is the refused text.
        if (problem !== undefined) return `${where(frames.length - 1)}: a key ${problem}`
        top.key = text.slice(i, j + 1)
        top.expectKey = false
      } else {
        const bound = startValue()
        if (bound !== undefined) return bound
        if (problem !== undefined) return `${where(frames.length)}: ${problem}`
      }
      i = j + 1
    } else {
      // A number, true, false or null (or junk the parser will refuse): one value, up to the next delimiter.
      const problem = startValue()
      if (problem !== undefined) return problem
      i++
      while (i < n) {
        const d = text.charCodeAt(i)
        if (
          d === 0x2c || d === 0x5d || d === 0x7d || d === 0x3a || d === 0x22 || d === 0x5b || d === 0x7b ||
          d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09
        ) break
        i++
      }
    }
  }
  return undefined
}

/** `jsonTextProblem` for a value a caller handed over in-process (a tool call): its JSON text is what is bounded. */
export const jsonProblem = (input: unknown): string | undefined => {
  let text: string | undefined
  try {
    text = JSON.stringify(input)
  } catch {
    return "body: is not JSON (a cycle or a bigint)"
  }
  return text === undefined ? undefined : jsonTextProblem(text)
}
