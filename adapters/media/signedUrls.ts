/**
 * MediaUrls with HMAC-SHA256 (Web Crypto, Node and Deno):
 * `${baseUrl}/v1/media/${workspaceId}/${key}?expires=<unix seconds>&signature=<base64url MAC>`, the
 * MAC over `${workspaceId}/${key}/${expires}`, expiring MEDIA_URL_TTL_SECONDS after signing (Effect's
 * Clock). `verify` checks the MAC with `crypto.subtle.verify` (constant time) and that `expires` is
 * still in the future. Names follow the blob naming rule, so `/` in the MAC input is unambiguous.
 */
import { Clock, Effect, Either, Encoding, Layer } from "effect"
import { isValidBlobName, MEDIA_URL_TTL_SECONDS, MediaUrls } from "../../core/media/model.ts"

export interface SignedUrlsOptions {
  /** PUBLIC_BASE_URL, e.g. `https://api.example.com`; a trailing slash is ignored. */
  readonly baseUrl: string
  /** At least 16 bytes. */
  readonly secret: Uint8Array
}

const encoder = new TextEncoder()
const message = (workspaceId: string, key: string, expires: string) =>
  encoder.encode(`${workspaceId}/${key}/${expires}`)

export const make = (options: SignedUrlsOptions) =>
  Effect.gen(function*() {
    if (options.secret.byteLength < 16) return yield* Effect.dieMessage("media URL secret must be at least 16 bytes")
    const base = options.baseUrl.replace(/\/+$/, "")
    const hmac = yield* Effect.promise(() =>
      crypto.subtle.importKey("raw", new Uint8Array(options.secret), { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
        "verify"
      ])
    )
    return MediaUrls.of({
      sign: (workspaceId, key) =>
        Effect.gen(function*() {
          if (!isValidBlobName(workspaceId) || !isValidBlobName(key)) {
            return yield* Effect.dieMessage(
              `cannot sign a media URL for invalid names ${JSON.stringify(workspaceId).slice(0, 80)}/${
                JSON.stringify(key).slice(0, 80)
              }`
            )
          }
          const now = yield* Clock.currentTimeMillis
          const expires = String(Math.floor(now / 1000) + MEDIA_URL_TTL_SECONDS)
          const mac = yield* Effect.promise(() => crypto.subtle.sign("HMAC", hmac, message(workspaceId, key, expires)))
          const signature = Encoding.encodeBase64Url(new Uint8Array(mac))
          return `${base}/v1/media/${encodeURIComponent(workspaceId)}/${
            encodeURIComponent(key)
          }?expires=${expires}&signature=${signature}`
        }),
      verify: (workspaceId, key, expires, signature) =>
        Effect.gen(function*() {
          if (!isValidBlobName(workspaceId) || !isValidBlobName(key)) return false
          if (!/^[0-9]{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return false
          const decoded = Encoding.decodeBase64Url(signature)
          if (Either.isLeft(decoded)) return false
          // Only the canonical spelling (the last character's spare bits zero) is accepted.
          if (Encoding.encodeBase64Url(decoded.right) !== signature) return false
          const valid = yield* Effect.promise(() =>
            crypto.subtle.verify("HMAC", hmac, new Uint8Array(decoded.right), message(workspaceId, key, expires))
          )
          if (!valid) return false
          const now = yield* Clock.currentTimeMillis
          return Number(expires) * 1000 > now
        })
    })
  })

export const layer = (options: SignedUrlsOptions): Layer.Layer<MediaUrls> => Layer.effect(MediaUrls, make(options))
