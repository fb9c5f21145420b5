/**
 * The Telnyx v2 carrier adapter (research telnyx.md §3 and §6): `POST /v2/messages` over `fetch`,
 * so it runs unchanged on Node and Deno.
 *
 * Failure mapping:
 * - 2xx with a `{data: {id, to: [{status}]}}` body: accepted. Any other 2xx body is `unavailable`
 *   and is not retried, because the message may already have gone out.
 * - 408, 429, 502, 503 and 504: retried at most `MAX_RETRIES` times; these mean the request was
 *   not processed. The delay is `Retry-After` (or on a 429 `x-ratelimit-reset`) seconds capped at
 *   `MAX_RETRY_AFTER_MS`, otherwise exponential backoff with jitter. When the retries run out:
 *   `unavailable`.
 * - Other 5xx (500 above all): `unavailable` without a retry. `/v2/messages` takes no idempotency
 *   key, and a 500 may have been processed: a blind retry could text the recipient twice.
 * - Any other 4xx: `rejected` at once, with the reason from Telnyx's `errors[0].detail`/`title`.
 * - Timeout (per attempt) or network failure: `unavailable`, not retried here. A hung request may
 *   have been processed, so the caller decides.
 *
 * The API key never appears in an error, log or span.
 */
import { Duration, Effect, Layer, Option, Redacted, Schedule, Schema } from "effect"
import { displayText } from "../../core/display.ts"
import { type Accepted, Carrier, CarrierError, type OutboundMessage } from "../../core/messaging/carrier.ts"
import { fromCarrier } from "../../core/messaging/deliveryStatus.ts"

export interface TelnyxConfig {
  readonly apiKey: Redacted.Redacted<string>
  readonly messagingProfileId: string
  /** Default `https://api.telnyx.com`; `/v2/...` is appended. */
  readonly baseUrl?: string
  /** Per attempt, covering the response body as well. Default 10 000 ms. */
  readonly timeoutMs?: number
}

export const DEFAULT_BASE_URL = "https://api.telnyx.com"
export const DEFAULT_TIMEOUT_MS = 10_000
/** Retries after the first attempt, for 408, 429, 502, 503 and 504 only. */
export const MAX_RETRIES = 2
/** The most we wait on a `Retry-After` / `x-ratelimit-reset` before retrying. */
export const MAX_RETRY_AFTER_MS = 5_000
/** First backoff delay when the response gives no hint; doubled each time, jittered 0.8–1.2×. */
export const BACKOFF_BASE_MS = 250

/** One attempt's failure, before the retry decision. */
interface AttemptFailure {
  readonly reason: "rejected" | "unavailable"
  readonly message: string
  readonly retryable: boolean
  readonly retryAfterMs: number | null
}

const failure = (
  reason: AttemptFailure["reason"],
  message: string,
  retryable = false,
  retryAfterMs: number | null = null
): AttemptFailure => ({ reason, message, retryable, retryAfterMs })

// ------------------------------------------------------------------------------------ response shapes

/** Only the fields we read; everything else in Telnyx's `OutboundMessage` is ignored. */
const SendResponse = Schema.Struct({
  data: Schema.Struct({
    id: Schema.NonEmptyString,
    to: Schema.NonEmptyArray(Schema.Struct({ status: Schema.optional(Schema.NullOr(Schema.String)) }))
  })
})
const decodeSendResponse = Schema.decodeUnknownEither(SendResponse)

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

/**
 * `HTTP 422, code 10016: The 'to' parameter must be in +E.164 format`, or just `HTTP 422`. The
 * carrier's text may quote what was sent, so it is shown through displayText.
 */
export const describeError = (status: number, text: string): string => {
  const body = parseJson(text).pipe(Option.flatMap(decodeErrorBody))
  if (Option.isNone(body)) return `HTTP ${status}`
  const value = body.value
  if ("errors" in value) {
    const first = value.errors[0]
    const why = first.detail ?? first.title
    const code = first.code === undefined || first.code === null ? "" : `, code ${displayText(String(first.code), 32)}`
    return why ? `HTTP ${status}${code}: ${displayText(why)}` : `HTTP ${status}${code}`
  }
  const why =
    typeof value.detail === "string"
      ? value.detail
      : value.detail
          .map((d) => (d.loc && d.loc.length > 0 ? `${d.loc.join(".")}: ${d.msg}` : d.msg))
          .join("; ")
  return `HTTP ${status}: ${displayText(why)}`
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

// ------------------------------------------------------------------------------------ the adapter

/** At most MAX_RETRIES retries, only of retryable failures, waiting as the server asked or backing off. */
const retrySchedule = Schedule.exponential(Duration.millis(BACKOFF_BASE_MS), 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(MAX_RETRIES)),
  Schedule.zipRight(Schedule.identity<AttemptFailure>()),
  Schedule.modifyDelay((last, backoff) => (last.retryAfterMs === null ? backoff : Duration.millis(last.retryAfterMs))),
  Schedule.whileInput((last: AttemptFailure) => last.retryable)
)

const requestBody = (config: TelnyxConfig, message: OutboundMessage) => {
  const mms = message.mediaUrls.length > 0
  return {
    from: message.from,
    to: message.to,
    // Telnyx requires text for SMS; an MMS may be media only.
    ...(mms && message.body === "" ? {} : { text: message.body }),
    ...(mms ? { media_urls: [...message.mediaUrls] } : {}),
    messaging_profile_id: config.messagingProfileId,
    type: mms ? "MMS" : "SMS"
  }
}

export const make = (config: TelnyxConfig): Carrier => {
  const url = `${(config.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "")}/v2/messages`
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS

  const attempt = (body: string): Effect.Effect<Accepted, AttemptFailure> =>
    Effect.tryPromise({
      try: async (signal) => {
        const res = await fetch(url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${Redacted.value(config.apiKey)}`,
            "content-type": "application/json",
            accept: "application/json",
            "user-agent": "Switchboard-Carrier/1"
          },
          body,
          redirect: "manual",
          signal
        })
        return { status: res.status, headers: res.headers, text: await res.text() }
      },
      catch: (e) => {
        const err = e as { cause?: { code?: string; message?: string }; message?: string }
        return failure(
          "unavailable",
          `Telnyx could not be reached: ${err.cause?.code ?? err.cause?.message ?? err.message ?? "request failed"}`
        )
      }
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: () => failure("unavailable", `Telnyx did not answer within ${timeoutMs} ms`)
      }),
      Effect.flatMap(({ headers, status, text }) => {
        if (status >= 200 && status < 300) {
          const decoded = parseJson(text).pipe(
            Option.match({
              onNone: () => ({ ok: false as const, why: "the body is not JSON" }),
              onSome: (json) => {
                const r = decodeSendResponse(json)
                return r._tag === "Right"
                  ? { ok: true as const, data: r.right.data }
                  : { ok: false as const, why: "expected {data: {id, to: [{status}]}}" }
              }
            })
          )
          if (!decoded.ok) {
            return Effect.fail(
              failure(
                "unavailable",
                `Telnyx returned a malformed response (HTTP ${status}; ${decoded.why}); the message may have been sent`
              )
            )
          }
          const word = decoded.data.to[0].status
          return Effect.succeed<Accepted>({
            carrierMessageId: decoded.data.id,
            status: (word ? fromCarrier(word) : null) ?? "queued"
          })
        }
        const why = describeError(status, text)
        if (status === 408 || status === 429 || status === 502 || status === 503 || status === 504) {
          return Effect.fail(failure("unavailable", `Telnyx is unavailable (${why})`, true, retryAfterMs(status, headers, Date.now())))
        }
        if (status >= 500) return Effect.fail(failure("unavailable", `Telnyx failed (${why}); not retried, it may have been processed`))
        if (status >= 400) return Effect.fail(failure("rejected", `Telnyx rejected the message (${why})`))
        return Effect.fail(failure("unavailable", `Telnyx answered with an unexpected HTTP ${status}`))
      })
    )

  return Carrier.of({
    send: (message) =>
      Effect.suspend(() => attempt(JSON.stringify(requestBody(config, message)))).pipe(
        Effect.retry(retrySchedule),
        Effect.catchAll((f) =>
          Effect.fail(
            new CarrierError({
              reason: f.reason,
              message: f.retryable ? `${f.message}; gave up after ${MAX_RETRIES} retries` : f.message
            })
          )
        ),
        Effect.withSpan("Carrier.send", {
          attributes: { "carrier.name": "telnyx", "carrier.type": message.mediaUrls.length > 0 ? "MMS" : "SMS" }
        })
      )
  })
}

export const layer = (config: TelnyxConfig): Layer.Layer<Carrier> => Layer.succeed(Carrier, make(config))
