/**
 * One operation of the document to an arbitrary HTTP request: its credentials, path, query, header
 * parameters and body, each valid, at a boundary or hostile (see values.ts), plus the transport's
 * own edges (content types, request ids, idempotency keys, malformed ids and targets).
 */
import fc from "fast-check"
import type { Operation } from "./openapi.ts"
import type { RawRequest } from "./rawHttp.ts"
import { hostileString, toJson, valueArbitraries, type ValueContext } from "./values.ts"

/** The security scheme of the operator's token; every other scheme of the document takes API keys, but the console's. */
export const ADMIN_SCHEME = "adminToken"
/** The console's session cookie (api/app.ts). */
export const SESSION_SCHEME = "session"

/** The credentials the world made for the fuzzed workspace (and the operator's). */
export interface Credentials {
  /** A test key with every scope. */
  readonly full: string
  /** A live key with every scope. */
  readonly live: string
  /** Test keys holding one scope each. */
  readonly scoped: ReadonlyArray<string>
  readonly revoked: string
  readonly adminToken: string
  /** Console sessions of the fuzzed workspace (`sb_session=...`), by role, and the console's origin. */
  readonly sessions: { readonly owner: string; readonly member: string; readonly origin: string }
}

/** The request as generated; `send` writes it as is. `operation` names what it was made from. */
export interface FuzzRequest extends RawRequest {
  readonly operation: string
}

export const clip = (
  s: string,
  max = 600
) => (s.length <= max ? s : `${s.slice(0, max - 100)}…${s.slice(-100)} (${s.length} characters)`)

/** The request as a person would send it again (long values clipped, their length given). */
export const describeRequest = (req: FuzzRequest) =>
  [
    `${req.operation}:`,
    `${req.method} ${JSON.stringify(clip(req.target))}`,
    ...req.headers.map(([n, v]) => `  ${n}: ${JSON.stringify(clip(v, 200))}`),
    req.body === null ? "  (no body)" : `  body (${req.bodyEncoding}): ${JSON.stringify(clip(req.body))}`
  ].join("\n")

/** Percent-encodes everything but RFC 3986 unreserved characters (lone surrogates become U+FFFD). */
export const encode = (s: string) =>
  Array.from(
    Buffer.from(s, "utf8"),
    (b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`
  ).join("")

/** Malformed path segments, already as they go on the wire. */
const junkSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "%00",
    "abc%00",
    "%2e%2e",
    "..",
    ".",
    "%2F",
    "a%2Fb",
    "%2e%2e%2f%2e%2e%2fadmin",
    "%ED%A0%80",
    "%FF",
    "%C0%AE",
    "%",
    "%zz",
    "%25",
    "%20",
    "+",
    "null",
    "undefined",
    "-1",
    "0",
    "1e9",
    "%7B%7D",
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff"
  ),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => `${u}%00`),
  fc.uuid().map((u) => `%7B${u}%7D`),
  fc.uuid().map((u) => u.replace(/-/g, "")),
  hostileString.map(encode),
  // Long ids; past 16 KiB the request line alone exceeds Node's header limit.
  fc.integer({ min: 100, max: 20_000 }).map((n) => "a".repeat(n)),
  // Bytes a careful client would never put in a request line unencoded.
  fc.constantFrom("a b", "a\u0000b", "a\tb", "\u00e9", "a\rb", "<>", "a#b", "a?b=c")
)

const junkQuery: fc.Arbitrary<string> = fc.constantFrom(
  "&",
  "&&",
  "=",
  "a=%",
  "=x",
  "%00=%00",
  "a[b]=c",
  "a=1&a=2",
  "%zz=1",
  ";",
  "a=b=c"
)

/** `arbitrary` once in `every` requests, else null (which it shrinks to). */
const rarely = <T>(arbitrary: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | null> =>
  fc.oneof({ withCrossShrink: true }, { weight: every - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary })

/** Values for a query or header parameter are text: a non-string value is sent as its JSON. */
const asText = (v: unknown) => (typeof v === "string" ? v : toJson(v))

const idempotencyKey: fc.Arbitrary<string> = fc.oneof(
  fc.uuid(),
  fc.string({ minLength: 1, maxLength: 255 }),
  fc.constantFrom("", " ", "a".repeat(255), "a".repeat(256), "k\u00e9y", "k\u0000"),
  fc.integer({ min: 256, max: 8_000 }).map((n) => "k".repeat(n))
)

const requestId: fc.Arbitrary<string> = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
  fc.constantFrom("", "a".repeat(65), "has space", "semi;colon", "ünïcode", "a\u0000b", "%00")
)

const contentTypes = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/json;charset=latin1",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/vnd.api+json",
  "application/jsonx",
  "",
  "*/*"
)

/** Bodies that are not the JSON of any value: broken, empty, wrongly encoded. */
const rawBody: fc.Arbitrary<{ text: string; encoding: "utf8" | "latin1" }> = fc.oneof(
  fc.constantFrom(
    "",
    "{",
    "}",
    "nul",
    "{'a':1}",
    "{\"a\":1,}",
    "{\"a\":1}garbage",
    "[1,2",
    "\"unterminated",
    "\ufeff{}",
    "{}{}",
    "{\"a\":1,\"a\":2}",
    "\u0000"
  )
    .map((text) => ({ text, encoding: "utf8" as const })),
  // Invalid UTF-8: lone continuation bytes, overlong forms, a surrogate encoded as UTF-8.
  fc.constantFrom("{\"firstName\":\"\xff\xfe\"}", "\xc0\xae", "{\"a\":\"\xed\xa0\x80\"}", "\x80\x80\x80").map((
    text
  ) => ({ text, encoding: "latin1" as const })),
  fc.string({ unit: "binary-ascii", maxLength: 200 }).map((text) => ({ text, encoding: "latin1" as const })),
  // Just over the documented 1 MiB limit.
  fc.constant({ text: `{"a":"${"x".repeat(1024 * 1024)}"}`, encoding: "utf8" as const })
)

export interface RequestContext extends ValueContext {
  readonly credentials: Credentials
}

export const operationRequest = (op: Operation, ctx: RequestContext): fc.Arbitrary<FuzzRequest> => {
  const values = valueArbitraries(ctx)
  const { credentials } = ctx

  const authorization: fc.Arbitrary<ReadonlyArray<readonly [string, string]>> = (() => {
    const bearer = (token: string) => [["authorization", `Bearer ${token}`] as const]
    const wrong = fc.oneof(
      fc.constant([]),
      fc.constantFrom(
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Bearer svc_test_short",
        `Bearer ${credentials.full}x`,
        `Token ${credentials.full}`,
        `Bearer  ${credentials.full}`
      )
        .map((v) => [["authorization", v] as const]),
      fc.stringMatching(/^[0-9A-Za-z]{40}$/).map((s) => bearer(`svc_test_${s}`)),
      fc.constant(
        [["authorization", `Bearer ${credentials.full}`], ["authorization", `Bearer ${credentials.live}`]] as const
      ),
      hostileString.map((s) => [["authorization", `Bearer ${s}`] as const])
    )
    if (op.security.includes(SESSION_SCHEME) || op.path.startsWith("/v1/app/")) {
      const { member, origin, owner } = credentials.sessions
      const session = (
        cookie: string,
        from: string | null
      ) => [["cookie", cookie] as const, ...(from === null ? [] : [["origin", from] as const])]
      return fc.oneof(
        { weight: 12, arbitrary: fc.constant(session(owner, origin)) },
        { weight: 4, arbitrary: fc.constant(session(member, origin)) },
        // Another site's request with the cookie (CSRF), and none at all.
        { weight: 1, arbitrary: fc.constantFrom(session(owner, "https://evil.example"), session(owner, null)) },
        { weight: 1, arbitrary: fc.constant(bearer(credentials.full)) },
        { weight: 1, arbitrary: hostileString.map((s) => [["cookie", `sb_session=${s}`] as const]) },
        { weight: 1, arbitrary: wrong }
      )
    }
    if (op.security.includes(ADMIN_SCHEME)) {
      return fc.oneof(
        { weight: 12, arbitrary: fc.constant(bearer(credentials.adminToken)) },
        { weight: 1, arbitrary: fc.constant(bearer(credentials.full)) },
        { weight: 1, arbitrary: wrong }
      )
    }
    if (op.security.length > 0) {
      return fc.oneof(
        { weight: 20, arbitrary: fc.constant(bearer(credentials.full)) },
        { weight: 4, arbitrary: fc.constantFrom(...credentials.scoped).map(bearer) },
        { weight: 1, arbitrary: fc.constant(bearer(credentials.live)) },
        { weight: 1, arbitrary: fc.constant(bearer(credentials.revoked)) },
        { weight: 1, arbitrary: fc.constant(bearer(credentials.adminToken)) },
        { weight: 2, arbitrary: wrong }
      )
    }
    return fc.oneof({ weight: 8, arbitrary: fc.constant([]) }, {
      weight: 1,
      arbitrary: fc.constant(bearer(credentials.full))
    }, { weight: 1, arbitrary: wrong })
  })()

  // Path: each `{param}` is a real value, another value of its schema, or a malformed segment.
  const segments = op.path.split("/").map((segment, i, all): fc.Arbitrary<string> => {
    const param = /^\{(.+)\}$/.exec(segment)?.[1]
    if (param === undefined) return fc.constant(segment)
    const schema = op.parameters.find((p) => p.in === "path" && p.name === param)?.schema ?? { type: "string" }
    const known = ctx.known(`${op.path}#${all[i - 1] ?? ""}.${param}`)
    return fc.oneof(
      { withCrossShrink: true },
      ...(known.length > 0 ? [{ weight: 12, arbitrary: fc.constantFrom(...known).map(encode) }] : []),
      // Not empty: `/contacts/` is another URL (the list, or no route), not a contact with an empty id.
      { weight: 3, arbitrary: values.valid(schema, param).map((v) => encode(asText(v))).filter((v) => v !== "") },
      { weight: 3, arbitrary: junkSegment }
    )
  })
  const path = fc.tuple(...segments).map((parts) => parts.join("/"))

  const queryParams = op.parameters.filter((p) => p.in === "query")
  const query: fc.Arbitrary<string> = fc
    .tuple(
      fc.tuple(
        ...queryParams.map((p) => {
          const known = ctx.known(`${op.path}#${p.name}`)
          const pair = fc.tuple(
            fc.constant(p.name),
            fc.oneof(
              { withCrossShrink: true },
              ...(known.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...known) }] : []),
              { weight: 1, arbitrary: values.param(p.schema, p.name).map(asText) }
            ),
            // The same parameter twice.
            rarely(fc.string({ maxLength: 5 }), 15)
          )
          // Optional parameters one time in three: each can refuse a request by itself.
          return p.required ? fc.option(pair, { freq: 15 }) : rarely(pair, 3)
        })
      ),
      rarely(
        fc.oneof(
          junkQuery,
          fc.tuple(fc.string({ maxLength: 10 }), hostileString).map(([k, v]) => `${encode(k)}=${encode(v)}`)
        ),
        10
      )
    )
    .map(([params, junk]) => {
      const pairs = params.flatMap((
        p
      ) => (p === null
        ? []
        : [`${encode(p[0])}=${encode(p[1])}`, ...(p[2] === null ? [] : [`${encode(p[0])}=${encode(p[2])}`])])
      )
      if (junk !== null) pairs.push(junk)
      return pairs.length === 0 ? "" : `?${pairs.join("&")}`
    })

  // Header parameters the document declares (Idempotency-Key...), and the ones every route takes.
  const headerParams = op.parameters.filter((p) => p.in === "header")
  const declaredHeaders = fc.tuple(
    ...headerParams.map((p) =>
      fc.option(
        fc.oneof(
          { withCrossShrink: true },
          {
            weight: 4,
            arbitrary: p.name.toLowerCase() === "idempotency-key"
              ? idempotencyKey
              : values.param(p.schema, p.name).map(asText)
          },
          { weight: 1, arbitrary: hostileString }
        ).map((v) => [p.name, v] as const),
        { freq: p.required ? 20 : 2 }
      )
    )
  )
  const commonHeaders = fc.tuple(
    rarely(requestId.map((v) => ["x-request-id", v] as const), 3),
    rarely(idempotencyKey.map((v) => ["idempotency-key", v] as const), 10),
    rarely(fc.tuple(fc.constantFrom("x-custom", "accept", "origin", "x-forwarded-for", "cookie"), hostileString), 20)
  )

  const jsonBody = op.body === undefined ? fc.constant(null) : values.value(op.body, "")
  const body = fc.oneof(
    { withCrossShrink: true },
    {
      weight: op.body === undefined ? 1 : 12,
      arbitrary: jsonBody.map((
        v
      ) => (v === null && op.body === undefined ? null : { text: toJson(v), encoding: "utf8" as const }))
    },
    { weight: 1, arbitrary: rawBody },
    { weight: op.body === undefined ? 12 : 1, arbitrary: fc.constant(null) }
  )
  const contentType = fc.oneof(
    { withCrossShrink: true },
    { weight: 14, arbitrary: fc.constant("application/json") },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: contentTypes }
  )

  return fc
    .record({ authorization, path, query, declaredHeaders, commonHeaders, body, contentType })
    .map(({ authorization, path, query, declaredHeaders, commonHeaders, body, contentType }) => {
      const req: FuzzRequest = {
        operation: op.id,
        method: op.method,
        target: path + query,
        headers: [
          ...authorization,
          ...(body !== null && contentType !== null ? [["content-type", contentType] as const] : []),
          ...declaredHeaders.filter((h) => h !== null),
          ...commonHeaders.filter((h) => h !== null)
        ],
        body: body?.text ?? null,
        bodyEncoding: body?.encoding ?? "utf8"
      }
      // How fast-check prints a counterexample: clipped, not megabytes of body.
      return Object.assign(req, { [fc.toStringMethod]: () => describeRequest(req) })
    })
}
