/**
 * Serves a stored media blob behind its signed URL. A bad signature, an expired URL and a missing
 * blob all answer the same 404, so URLs cannot be probed. Served bytes carry `nosniff` and a sandbox
 * CSP so a stored HTML or SVG file cannot run script on the API origin.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { NotFound } from "../../../core/kernel/errors.ts"
import { BlobStore, MediaUrls } from "../../../core/media/model.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

const notFound = new NotFound({ message: "Media not found or link expired" })

export const serveMedia = (
  path: { readonly workspaceId: string; readonly key: string },
  urlParams: { readonly expires?: string | undefined; readonly signature?: string | undefined }
): Effect.Effect<HttpServerResponse.HttpServerResponse, NotFound, MediaUrls | BlobStore> =>
  Effect.gen(function*() {
    const { expires, signature } = urlParams
    if (expires === undefined || signature === undefined) return yield* notFound
    const urls = yield* MediaUrls
    const valid = yield* urls.verify(path.workspaceId, path.key, expires, signature)
    if (!valid) return yield* notFound
    const blobs = yield* BlobStore
    const blob = yield* blobs.get(path.workspaceId, path.key)
    if (blob === null) return yield* notFound
    return HttpServerResponse.uint8Array(blob.bytes, {
      contentType: blob.contentType,
      headers: {
        "cache-control": "private, max-age=3600",
        "x-content-type-options": "nosniff",
        "content-disposition": "inline",
        "content-security-policy": "default-src 'none'; sandbox"
      }
    })
  })

export const MediaLive = group(
  Api,
  "media",
  (handlers) => handlers.handle("get", ({ path, urlParams }) => serveMedia(path, urlParams))
)
