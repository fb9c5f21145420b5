/**
 * MediaFetcher (Node and Deno): the outbound-URL guard first (https, public addresses), then one GET
 * through the outbound HTTP client (which refuses to dial a non-public address, so a DNS-rebinding
 * host cannot switch addresses after the check) with `redirect: "manual"` (a 3xx is a failure,
 * never followed), a hard timeout over the whole exchange, and the body read with a hard cap (a
 * declared or streamed size beyond it aborts the download). Every failure names the URL as
 * displayUrl shows it (no credentials, escaped, capped) and why: MediaTooLarge past the cap,
 * InvalidArgument otherwise. A caller's `limits` (recordings) replace the cap and the timeout.
 */
import { Effect, Layer } from "effect"
import { OutboundGuard } from "../../core/egress/guard.ts"
import { displayUrl } from "../../core/kernel/display.ts"
import { InvalidArgument } from "../../core/kernel/errors.ts"
import { MAX_MEDIA_BYTES, MediaFetcher, type MediaLimits, MediaTooLarge } from "../../core/media/model.ts"
import { describeFetchError, OutboundHttp } from "../net/http.ts"
import { readCapped } from "../net/streams.ts"

export interface FetcherOptions {
  /** The whole request including the body; default 15 s. */
  readonly timeoutMs?: number
  /** Default MAX_MEDIA_BYTES. */
  readonly maxBytes?: number
}

const DEFAULT_TYPE = "application/octet-stream"

const failure = (url: string, why: string) =>
  new InvalidArgument({ message: `url ${displayUrl(url)} could not be fetched: ${why}` })

/** The response's Content-Type if it looks like one (printable ASCII, `type/subtype[; params]`). */
export const contentTypeOf = (header: string | null): string => {
  const value = header?.trim() ?? ""
  return value.length <= 255 && /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;[\x20-\x7e]*)?$/.test(value)
    ? value.toLowerCase()
    : DEFAULT_TYPE
}

/** The last path segment, decoded, reduced to `[A-Za-z0-9._-]`, no leading dots, at most 100 characters. */
export const filenameOf = (url: URL): string => {
  const last = url.pathname.split("/").pop() ?? ""
  let decoded = last
  try {
    decoded = decodeURIComponent(last)
  } catch {
    // keep the raw segment
  }
  const clean = decoded
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
    .slice(0, 100)
  return clean === "" ? "media" : clean
}

const sizeText = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`)

type Outcome =
  | { readonly _tag: "ok"; readonly bytes: Uint8Array; readonly contentType: string }
  | { readonly _tag: "fail"; readonly why: string }
  | { readonly _tag: "tooLarge"; readonly why: string }

export const make = (options: FetcherOptions = {}) =>
  Effect.gen(function*() {
    const guard = yield* OutboundGuard
    const http = yield* OutboundHttp
    const defaults = { timeoutMs: options.timeoutMs ?? 15_000, maxBytes: options.maxBytes ?? MAX_MEDIA_BYTES }

    const download = (raw: string, url: URL, { maxBytes, timeoutMs }: typeof defaults) =>
      Effect.tryPromise({
        try: async (interrupt): Promise<Outcome> => {
          const tooLarge: Outcome = { _tag: "tooLarge", why: `it is larger than ${sizeText(maxBytes)}` }
          const timeout = AbortSignal.timeout(timeoutMs)
          const signal = AbortSignal.any([interrupt, timeout])
          try {
            const res = await http.fetch(url, {
              method: "GET",
              headers: { "user-agent": "Switchboard-Media/1", accept: "*/*" },
              redirect: "manual",
              signal
            })
            if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
              await res.body?.cancel().catch(() => undefined)
              return { _tag: "fail", why: `the server answered a redirect (${res.status}); redirects are not followed` }
            }
            if (res.status < 200 || res.status > 299) {
              await res.body?.cancel().catch(() => undefined)
              return { _tag: "fail", why: `the server answered ${res.status}` }
            }
            const declared = Number(res.headers.get("content-length") ?? "")
            if (Number.isFinite(declared) && declared > maxBytes) {
              await res.body?.cancel().catch(() => undefined)
              return tooLarge
            }
            const contentType = contentTypeOf(res.headers.get("content-type"))
            if (!res.body) return { _tag: "ok", bytes: new Uint8Array(0), contentType }
            const bytes = await readCapped(res.body, maxBytes, signal)
            if (bytes === null) return tooLarge
            return { _tag: "ok", bytes, contentType }
          } catch (e) {
            if (timeout.aborted) return { _tag: "fail", why: `no complete answer within ${timeoutMs / 1000} s` }
            throw e
          }
        },
        catch: (e) => failure(raw, `the request failed (${describeFetchError(e)})`)
      })

    return MediaFetcher.of({
      fetch: (raw, limits?: MediaLimits) =>
        Effect.gen(function*() {
          const url = yield* guard.check(raw)
          const outcome = yield* download(
            raw,
            url,
            limits === undefined ? defaults : { maxBytes: limits.maxBytes, timeoutMs: limits.timeoutSeconds * 1000 }
          )
          if (outcome._tag === "tooLarge") {
            return yield* new MediaTooLarge({ message: failure(raw, outcome.why).message })
          }
          if (outcome._tag === "fail") return yield* failure(raw, outcome.why)
          return { bytes: outcome.bytes, contentType: outcome.contentType, filename: filenameOf(url) }
        })
    })
  })

/** The fetcher with explicit options (tests use a short timeout). */
export const layerWith = (options: FetcherOptions): Layer.Layer<MediaFetcher, never, OutboundGuard | OutboundHttp> =>
  Layer.effect(MediaFetcher, make(options))

/** The fetcher with the production limits: 15 s, MAX_MEDIA_BYTES. */
export const layer: Layer.Layer<MediaFetcher, never, OutboundGuard | OutboundHttp> = layerWith({})
