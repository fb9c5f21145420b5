/**
 * JSON Schema (as the OpenAPI document states it) to fast-check arbitraries, in three flavours:
 * valid values (formats, enums, patterns, bounds, and real values the server knows), boundary values
 * (empty, at and past each bound, unicode) and hostile ones (NUL, lone surrogates, control
 * characters, wrong types, deep nesting, big arrays, many keys). `value` mixes them at every node,
 * valid first, so fast-check shrinks a failure towards a valid request with the one value that broke
 * it.
 */
import fc from "fast-check"
import type { JsonSchema } from "./openapi.ts"

/** Request JSON written verbatim: what JSON.stringify cannot write, and huge or deep values built cheaply. */
export class RawJson {
  constructor(
    readonly json: string,
    readonly label: string
  ) {}
  [fc.toStringMethod]() {
    return this.label
  }
}

/** JSON.stringify with RawJson written as is; lone surrogates come out as `\udXXX` escapes. */
export const toJson = (value: unknown): string => {
  if (value instanceof RawJson) return value.json
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

export interface ValueContext {
  readonly resolve: (schema: JsonSchema) => JsonSchema
  /** Values the server holds for a name (an id made in setup, a workspace number...), by parameter or property name. */
  readonly known: (name: string) => ReadonlyArray<string>
  /** Words of the workspace's own text, for free text: a search then matches something (in both workspaces). */
  readonly words: ReadonlyArray<string>
  /** The same URL on the suite's own receiver: the server may fetch or deliver to what it is sent, so never an outside host. */
  readonly confine: (url: string) => string
}

/** Nodes below this depth are generated as their simplest valid value (recursive schemas end). */
const MAX_DEPTH = 6

const repeat = (label: string, min: number, max: number, make: (n: number) => string) =>
  fc.integer({ min, max }).map((n) => new RawJson(make(n), `${label}(${n})`))

const isUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\/[^/]/i.test(s)

/** A value with every URL in it moved to the receiver. */
const confineAll = (ctx: ValueContext, v: unknown): unknown =>
  typeof v === "string"
    ? isUrl(v) ? ctx.confine(v) : v
    : Array.isArray(v)
    ? v.map((x) => confineAll(ctx, x))
    : v !== null && typeof v === "object"
    ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, confineAll(ctx, x)]))
    : v

/** Hostile text: what a store, a log line, a regex or a URL parser may choke on. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "\u0000",
      "a\u0000b",
      "\ud800",
      "\udfff",
      "x\ud83d",
      "\u0001\u0002\u0003\u0007\u0008",
      "\u001b[31mred\u001b[0m",
      "line\r\nX-Injected: 1",
      "\u2028\u2029",
      "\ufeffbom",
      "\u007f\u0085\u00a0",
      "%00",
      "%2e%2e%2f%2e%2e%2f",
      "../../../../etc/passwd",
      "' OR '1'='1' --",
      "\\",
      "\"",
      "${jndi:ldap://x}",
      "<script>alert(1)</script>",
      "{{7*7}}",
      "%s%s%s%n",
      "\u202egnp.exe",
      "null",
      "__proto__",
      "\u0000".repeat(64)
    )
  },
  { weight: 1, arbitrary: fc.string16bits({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 100_000 }).map((n) => "x".repeat(n)) }
)

/** Unicode and length edges that are still text. */
const unicodeString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "Zoë Ñuñez",
    "🎉",
    "👨‍👩‍👧‍👦",
    "e\u0301",
    "\u200b",
    "   ",
    "\t",
    "﷽",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "日本語テキスト",
    "مرحبا"
  ),
  fc.string({ unit: "grapheme", maxLength: 30 })
)

/** Any JSON value of the wrong kind for `schema`, or a structure built to be expensive. */
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, "", [], {}, "1", [null], { "": "" }),
  hostileString,
  fc.constantFrom(
    new RawJson("1e400", "1e400"),
    new RawJson("-1e400", "-1e400"),
    new RawJson("123456789012345678901234567890", "30-digit integer"),
    new RawJson("1e-400", "1e-400"),
    new RawJson("-0", "-0")
  ),
  repeat("nestedArrays", 1, 20_000, (n) => "[".repeat(n) + "]".repeat(n)),
  repeat("nestedObjects", 1, 20_000, (n) => "{\"a\":".repeat(n) + "1" + "}".repeat(n)),
  repeat("bigArray", 1_000, 200_000, (n) => `[${Array(n).fill("\"a\"").join(",")}]`),
  repeat("manyKeys", 1_000, 60_000, (n) => `{${Array.from({ length: n }, (_, i) => `"k${i}":"v"`).join(",")}}`),
  fc.dictionary(hostileString, fc.constant("v"), { maxKeys: 3 }),
  fc.anything({ maxDepth: 3 })
)

export const valueArbitraries = (ctx: ValueContext) => {
  const examplesOf = (
    s: JsonSchema
  ): Array<unknown> => [
    ...(Array.isArray(s.examples) ? s.examples : []),
    ...(s.example === undefined ? [] : [s.example])
  ]

  const branches = (s: JsonSchema): Array<JsonSchema> | undefined => s.anyOf ?? s.oneOf

  /** The schema's types: `type` as given, or inferred from the keywords present. */
  const typesOf = (s: JsonSchema): Array<string> => {
    if (Array.isArray(s.type)) return s.type
    if (typeof s.type === "string") return [s.type]
    if (s.properties !== undefined || s.additionalProperties !== undefined || s.patternProperties !== undefined) {
      return ["object"]
    }
    if (s.items !== undefined || s.prefixItems !== undefined) return ["array"]
    return []
  }

  const inLength = (s: JsonSchema) => (v: string) =>
    v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity)

  const validString = (s: JsonSchema, name: string): fc.Arbitrary<string> => {
    const min: number = s.minLength ?? 0
    const max: number = s.maxLength ?? Infinity
    const options: Array<fc.Arbitrary<string>> = []
    const known = ctx.known(name).filter(inLength(s))
    if (known.length > 0) options.push(fc.constantFrom(...known))
    const examples = examplesOf(s).filter((e): e is string => typeof e === "string").map((e) =>
      confineAll(ctx, e) as string
    )
    if (examples.length > 0) options.push(fc.constantFrom(...examples))
    switch (s.format) {
      case "uuid":
        options.push(fc.uuid())
        break
      case "date-time":
        options.push(
          fc.date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }).map((d) =>
            d.toISOString()
          )
        )
        break
      case "email":
        options.push(fc.emailAddress().filter(inLength(s)))
        break
      case "uri":
      case "url":
        options.push(fc.constantFrom("https://x/media.png", "https://x/hook", "https://x/a/b?c=d").map(ctx.confine))
        break
      default:
        if (typeof s.pattern === "string") options.push(fc.stringMatching(new RegExp(s.pattern)).filter(inLength(s)))
        // Text the document says is read as a number (`?limit=`; its range is not stated, boundary() tries the edges).
        else if (/\bnumber\b/i.test(s.description ?? "")) options.push(fc.integer({ min: 1, max: 100 }).map(String))
        else {
          options.push(fc.string({ minLength: min, maxLength: Math.min(max, min + 30) }))
          const words = ctx.words.filter(inLength(s))
          if (words.length > 0) options.push(fc.constantFrom(...words))
        }
    }
    return fc.oneof(...options)
  }

  const validNumber = (s: JsonSchema, integer: boolean): fc.Arbitrary<number> => {
    const low = typeof s.exclusiveMinimum === "number"
      ? s.exclusiveMinimum + (integer ? 1 : Number.EPSILON)
      : (s.minimum ?? -1e6)
    const high = typeof s.exclusiveMaximum === "number"
      ? s.exclusiveMaximum - (integer ? 1 : Number.EPSILON)
      : (s.maximum ?? 1e6)
    return integer
      ? fc.integer({ min: Math.ceil(low), max: Math.floor(high) })
      : fc.double({ min: low, max: high, noNaN: true, noDefaultInfinity: true })
  }

  /** Each property from its schema, or (as often) from the document's examples of the object. */
  const validObject = (s: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> => {
    const properties: Record<string, JsonSchema> = s.properties ?? {}
    const required = new Set<string>(s.required ?? [])
    const examples = examplesOf(s).filter((e): e is Record<string, unknown> =>
      e !== null && typeof e === "object" && !Array.isArray(e)
    )
    const property = (k: string, p: JsonSchema) => {
      const seen = examples.filter((e) => k in e).map((e) => confineAll(ctx, e[k]))
      return seen.length === 0
        ? value(p, k, depth + 1)
        : fc.oneof({ withCrossShrink: true }, fc.constantFrom(...seen), value(p, k, depth + 1))
    }
    const fixed = fc.record(
      Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, property(k, p)])),
      { requiredKeys: Object.keys(properties).filter((k) => required.has(k)) }
    )
    const open = s.additionalProperties !== undefined && s.additionalProperties !== false
      ? s.additionalProperties
      : Object.values(s.patternProperties ?? {})[0]
    if (open === undefined) return fixed as fc.Arbitrary<Record<string, unknown>>
    const extra = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 20 }),
      value(open === true ? {} : open, "", depth + 1),
      { maxKeys: 4 }
    )
    return fc.tuple(extra, fixed).map(([e, f]) => ({ ...e, ...f }))
  }

  const validArray = (s: JsonSchema, name: string, depth: number): fc.Arbitrary<Array<unknown>> => {
    if (Array.isArray(s.prefixItems)) {
      return fc.tuple(...s.prefixItems.map((p: JsonSchema) => value(p, name, depth + 1)))
    }
    const min: number = s.minItems ?? 0
    return fc.array(value(s.items ?? {}, name, depth + 1), {
      minLength: min,
      maxLength: Math.min(s.maxItems ?? Infinity, min + 4)
    })
  }

  /** A value the schema accepts. */
  const valid = (schema: JsonSchema, name: string, depth: number): fc.Arbitrary<unknown> => {
    const s = ctx.resolve(schema)
    if (s.const !== undefined) return fc.constant(s.const)
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
    const union = branches(s)
    if (union !== undefined) return fc.oneof(...union.map((b) => valid(b, name, depth)))
    if (Array.isArray(s.allOf)) return valid(Object.assign({}, ...s.allOf.map(ctx.resolve)), name, depth)
    const types = typesOf(s)
    if (types.length === 0) return depth >= MAX_DEPTH ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 })
    return fc.oneof(
      ...types.map((t): fc.Arbitrary<unknown> => {
        switch (t) {
          case "string":
            return validString(s, name)
          case "integer":
          case "number":
            return validNumber(s, t === "integer")
          case "boolean":
            return fc.boolean()
          case "null":
            return fc.constant(null)
          case "array":
            return depth >= MAX_DEPTH ? fc.constant([]) : validArray(s, name, depth)
          case "object":
            return depth >= MAX_DEPTH ? fc.constant({}) : validObject(s, depth)
          default:
            return fc.constant(null)
        }
      })
    )
  }

  /** Values at and just past the schema's bounds, and unicode edges. */
  const boundary = (schema: JsonSchema, name: string, depth: number): fc.Arbitrary<unknown> => {
    const s = ctx.resolve(schema)
    const union = branches(s)
    if (union !== undefined) return fc.oneof(...union.map((b) => boundary(b, name, depth)))
    const options: Array<fc.Arbitrary<unknown>> = []
    for (const t of typesOf(s)) {
      if (t === "string") {
        const lengths = [
          0,
          s.minLength,
          s.minLength === undefined ? undefined : s.minLength - 1,
          s.maxLength,
          s.maxLength === undefined ? undefined : s.maxLength + 1
        ]
          .filter((n): n is number => typeof n === "number" && n >= 0)
        options.push(
          fc.constantFrom(...lengths).map((n) => "a".repeat(n)),
          fc.constantFrom(...lengths).map((n) => "😀".repeat(Math.ceil(n / 2))),
          unicodeString,
          fc.constantFrom("0", "-1", "1.5", "1e3", "NaN", "Infinity", "9007199254740993", " 1", "0x10", "true")
        )
      } else if (t === "integer" || t === "number") {
        const edges = [0, -1, 1, -0, 0.5, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), Number.MAX_VALUE, Number.MIN_VALUE]
        for (const b of [s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum]) {
          if (typeof b === "number") edges.push(b, b - 1, b + 1)
        }
        options.push(fc.constantFrom(...edges))
      } else if (t === "array") {
        const item = depth >= MAX_DEPTH ? fc.constant(null) : valid(s.items ?? {}, name, depth + 1)
        const counts = [0, s.minItems, s.maxItems, s.maxItems === undefined ? undefined : s.maxItems + 1].filter((
          n
        ): n is number => typeof n === "number")
        options.push(fc.constantFrom(...counts).chain((n) => fc.array(item, { minLength: n, maxLength: n })))
      } else if (t === "object") {
        options.push(fc.constant({}))
      }
    }
    return options.length === 0 ? valid(s, name, depth) : fc.oneof(...options)
  }

  /** The schema's value with missing, extra or wrong fields, or a wrong or expensive value altogether. */
  const hostile = (schema: JsonSchema, name: string, depth: number): fc.Arbitrary<unknown> => {
    const s = ctx.resolve(schema)
    if (typesOf(s).includes("object") && depth < MAX_DEPTH) {
      const base = validObject(s, depth)
      const keys = Object.keys(s.properties ?? {})
      return fc.oneof(
        hostileJson,
        // An unknown field (or a key that means something to a JavaScript object).
        fc.tuple(
          base,
          fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "", "unknownField"), hostileString),
          fc.jsonValue({ maxDepth: 1 })
        )
          .map(([o, k, v]) => ({ ...o, [k]: v })),
        // A field left out, required or not.
        ...(keys.length === 0
          ? []
          : [
            fc.tuple(base, fc.constantFrom(...keys)).map(([o, k]) =>
              Object.fromEntries(Object.entries(o).filter(([x]) => x !== k))
            )
          ])
      )
    }
    if (!typesOf(s).includes("string") && branches(s) === undefined) return hostileJson
    return fc.oneof(
      // A valid value with one character no text field should take: NUL, a lone surrogate, a control character.
      {
        weight: 3,
        arbitrary: fc
          .tuple(
            valid(s, name, depth),
            fc.constantFrom("\u0000", "\u0000", "\ud800", "\udc00", "\u001b", "\r\n"),
            fc.nat()
          )
          .map((
            [v, c, at]
          ) => (typeof v === "string" ? v.slice(0, at % (v.length + 1)) + c + v.slice(at % (v.length + 1)) : c))
      },
      { weight: 3, arbitrary: hostileString },
      { weight: 1, arbitrary: hostileJson }
    )
  }

  /** Mostly valid, sometimes a boundary or a hostile value; fast-check shrinks towards valid. */
  const value = (schema: JsonSchema, name: string, depth = 0): fc.Arbitrary<unknown> =>
    depth >= MAX_DEPTH
      ? valid(schema, name, depth)
      : fc.oneof(
        { withCrossShrink: true },
        { weight: 24, arbitrary: valid(schema, name, depth) },
        { weight: 1, arbitrary: boundary(schema, name, depth) },
        { weight: 2, arbitrary: hostile(schema, name, depth) }
      )

  return {
    valid: (s: JsonSchema, name: string) => valid(s, name, 0),
    /** For a single value (a query or header parameter): hostile and boundary values more often than inside a body. */
    param: (s: JsonSchema, name: string) =>
      fc.oneof(
        { withCrossShrink: true },
        { weight: 6, arbitrary: valid(s, name, 0) },
        { weight: 1, arbitrary: boundary(s, name, 0) },
        { weight: 2, arbitrary: hostile(s, name, 0) }
      ),
    value
  }
}
