/**
 * The Telnyx v2 HTTP client every Telnyx adapter shares (messaging in telnyx.ts, the number
 * inventory in telnyxInventory.ts): bearer auth, JSON, a timeout per attempt, bounded retries of
 * the statuses a caller says were not processed, and Telnyx's two error shapes (research telnyx.md
 * §6). It runs over `fetch`, so unchanged on Node and Deno. What a failure means (rejected, taken,
 * unavailable) is each adapter's call: the same 4xx means different things on different endpoints.
 *
 * The API key never appears in an error, log or span.
 */
import { Duration, Effect, Either, Option, Redacted, Schedule, Schema } from "effect"
import { displayText } from "../../core/kernel/display.ts"

export interface TelnyxConfig {
  readonly apiKey: Redacted.Redacted<string>
  /** Outbound messages go through it, and numbers we buy are attached to it. */
  readonly messagingProfileId: string
  /** The voice (Call Control) connection numbers we buy are attached to; unset: attached later. */
  readonly connectionId?: string
  /** Default `https://api.telnyx.com`; `/v2/...` is appended. */
  readonly baseUrl?: string
  /** Per attempt, covering the response body as well. Default 10 000 ms. */
  readonly timeoutMs?: number
}

export const DEFAULT_BASE_URL = "https://api.telnyx.com"
export const DEFAULT_TIMEOUT_MS = 10_000
/** Retries after the first attempt, of the statuses the request names only. */
export const MAX_RETRIES = 2
/** The most we wait on a `Retry-After` / `x-ratelimit-reset` before retrying. */
export const MAX_RETRY_AFTER_MS = 5_000
/** First backoff delay when the response gives no hint; doubled each time, jittered 0.8–1.2×. */
export const BACKOFF_BASE_MS = 250

export interface TelnyxRequest {
  readonly method: "GET" | "POST" | "PUT"
  /** From the root, e.g. `/v2/messages`. */
  readonly path: string
  /** Sent percent-encoded, brackets included (`filter%5Bcountry_code%5D=US`), as Telnyx's SDK does. */
  readonly query?: ReadonlyArray<readonly [string, string]>
  /** Sent as JSON. */
  readonly body?: unknown
  /** Statuses that mean the request was not processed, so it is sent again (at most MAX_RETRIES times). */
  readonly retryOn: ReadonlySet<number>
}

/** A 2xx answer. */
export interface TelnyxAnswer {
  readonly status: number
  readonly text: string
}

export type TelnyxFailure =
  /** A non-2xx answer; `retried` when its status was one to retry, so the retries ran out on it. */
  | {
    readonly _tag: "Status"
    readonly status: number
    readonly text: string
    readonly retried: boolean
    readonly retryAfterMs: number | null
  }
  | { readonly _tag: "Timeout"; readonly ms: number }
  | { readonly _tag: "Unreachable"; readonly cause: string }

// ------------------------------------------------------------------------------------ error bodies

/** The v2 error envelope, and the FastAPI shape some endpoints use (research §6). */
const ErrorBody = Schema.Union(
  Schema.Struct({
    errors: Schema.NonEmptyArray(
      Schema.Struct({
        code: Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Number))),
        title: Schema.optional(Schema.NullOr(Schema.String)),
        detail: Schema.optional(Schema.NullOr(Schema.String))
      })
    )
  }),
  Schema.Struct({
    detail: Schema.Union(
      Schema.String,
      Schema.NonEmptyArray(Schema.Struct({ msg: Schema.String, loc: Schema.optional(Schema.Array(Schema.Unknown)) }))
    )
  })
)
const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text) as unknown)
  } catch {
    return Option.none()
  }
}

/** What Telnyx said, in its words (`errors[0].detail`, else its title; the FastAPI details joined), and its code. */
const parseError = (text: string): Option.Option<{ readonly words: string | null; readonly code: string | null }> =>
  parseJson(text).pipe(
    Option.flatMap(decodeErrorBody),
    Option.map((body) => {
      if ("errors" in body) {
        const first = body.errors[0]
        return {
          words: first.detail ?? first.title ?? null,
          code: first.code === undefined || first.code === null ? null : String(first.code)
        }
      }
      const words = typeof body.detail === "string"
        ? body.detail
        : body.detail.map((d) => (d.loc && d.loc.length > 0 ? `${d.loc.join(".")}: ${d.msg}` : d.msg)).join("; ")
      return { words, code: null }
    })
  )

/** Telnyx's own words for an error answer, shown through displayText (they may quote what was sent); null when it gave none. */
export const carrierWords = (text: string): string | null =>
  Option.match(parseError(text), { onNone: () => null, onSome: (e) => (e.words ? displayText(e.words) : null) })

/** `HTTP 422, code 10016: The 'to' parameter must be in +E.164 format`, or just `HTTP 422`. */
export const describeError = (status: number, text: string): string =>
  Option.match(parseError(text), {
    onNone: () => `HTTP ${status}`,
    onSome: ({ code, words }) => {
      const coded = code === null ? "" : `, code ${displayText(code, 32)}`
      return words ? `HTTP ${status}${coded}: ${displayText(words)}` : `HTTP ${status}${coded}`
    }
  })

/** A 2xx body decoded with `schema`, or why not (`expected` names the shape). */
export const decodeAnswer =
  <A, I>(schema: Schema.Schema<A, I>, expected: string) => (text: string): Either.Either<A, string> => {
    const decode = Schema.decodeUnknownEither(schema)
    return Option.match(parseJson(text), {
      onNone: () => Either.left("the body is not JSON"),
      onSome: (json) => Either.mapLeft(decode(json), () => `expected ${expected}`)
    })
  }

/**
 * The server's wait hint in ms, capped: `Retry-After` as seconds or an HTTP date, else on a 429
 * `x-ratelimit-reset` seconds (Telnyx documents the latter; whether it sends the former is unverified).
 */
export const retryAfterMs = (status: number, headers: Headers, nowMs: number): number | null => {
  const cap = (ms: number) => Math.min(Math.max(0, Math.ceil(ms)), MAX_RETRY_AFTER_MS)
  const retryAfter = headers.get("retry-after")?.trim()
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return cap(Number(retryAfter) * 1000)
    const at = Date.parse(retryAfter)
    if (!Number.isNaN(at)) return cap(at - nowMs)
  }
  const reset = status === 429 ? headers.get("x-ratelimit-reset")?.trim() : undefined
  if (reset && /^\d+(\.\d+)?$/.test(reset)) return cap(Number(reset) * 1000)
  return null
}

/** A timeout or a connection that failed, said the same way by every adapter. */
export const transportMessage = (f: Exclude<TelnyxFailure, { _tag: "Status" }>): string =>
  f._tag === "Timeout" ? `Telnyx did not answer within ${f.ms} ms` : `Telnyx could not be reached: ${f.cause}`

/** A 4xx with which Telnyx refused the request itself. */
export type Refusal = Extract<TelnyxFailure, { readonly _tag: "Status" }>

/**
 * A failure that says nothing about the request (out of retries, our credentials, a 408, a 5xx, a
 * transport failure): on the left, the message of an `unavailable` error; or, on the right, the
 * 4xx with which Telnyx refused the request itself, for the adapter to name.
 */
export const classify = (f: TelnyxFailure): Either.Either<Refusal, string> => {
  if (f._tag !== "Status") return Either.left(transportMessage(f))
  const why = describeError(f.status, f.text)
  if (f.retried) return Either.left(`Telnyx is unavailable (${why}); gave up after ${MAX_RETRIES} retries`)
  if (f.status === 401 || f.status === 403) return Either.left(`Telnyx refused our account (${why})`)
  if (f.status === 408 || f.status >= 500 || f.status < 400) return Either.left(`Telnyx failed (${why})`)
  return Either.right(f)
}

/** Telnyx's own words for a refusal, else its status and code. */
export const refusal = (r: Refusal): string => carrierWords(r.text) ?? describeError(r.status, r.text)

// ------------------------------------------------------------------------------------ the client

/** At most MAX_RETRIES retries, only of statuses to retry, waiting as the server asked or backing off. */
const retrySchedule = Schedule.exponential(Duration.millis(BACKOFF_BASE_MS), 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(MAX_RETRIES)),
  Schedule.zipRight(Schedule.identity<TelnyxFailure>()),
  Schedule.modifyDelay((last, backoff) =>
    last._tag === "Status" && last.retryAfterMs !== null ? Duration.millis(last.retryAfterMs) : backoff
  ),
  Schedule.whileInput((last: TelnyxFailure) => last._tag === "Status" && last.retried)
)

export type TelnyxClient = (request: TelnyxRequest) => Effect.Effect<TelnyxAnswer, TelnyxFailure>

export const makeClient = (config: TelnyxConfig): TelnyxClient => {
  const base = (config.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "")
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS

  const attempt = (
    request: TelnyxRequest,
    url: string,
    body: string | undefined
  ): Effect.Effect<TelnyxAnswer, TelnyxFailure> =>
    Effect.tryPromise({
      try: async (signal) => {
        const res = await fetch(url, {
          method: request.method,
          headers: {
            authorization: `Bearer ${Redacted.value(config.apiKey)}`,
            accept: "application/json",
            "user-agent": "Switchboard-Carrier/1",
            ...(body === undefined ? {} : { "content-type": "application/json" })
          },
          ...(body === undefined ? {} : { body }),
          redirect: "manual",
          signal
        })
        return { status: res.status, headers: res.headers, text: await res.text() }
      },
      catch: (e): TelnyxFailure => {
        const err = e as { cause?: { code?: string; message?: string }; message?: string }
        return { _tag: "Unreachable", cause: err.cause?.code ?? err.cause?.message ?? err.message ?? "request failed" }
      }
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: (): TelnyxFailure => ({ _tag: "Timeout", ms: timeoutMs })
      }),
      Effect.flatMap(({ headers, status, text }) =>
        status >= 200 && status < 300
          ? Effect.succeed({ status, text })
          : Effect.fail<TelnyxFailure>({
            _tag: "Status",
            status,
            text,
            retried: request.retryOn.has(status),
            retryAfterMs: retryAfterMs(status, headers, Date.now())
          })
      )
    )

  return (request) => {
    const query = request.query && request.query.length > 0
      ? `?${new URLSearchParams(request.query.map(([k, v]) => [k, v])).toString()}`
      : ""
    const body = request.body === undefined ? undefined : JSON.stringify(request.body)
    return Effect.suspend(() => attempt(request, `${base}${request.path}${query}`, body)).pipe(
      Effect.retry(retrySchedule)
    )
  }
}
