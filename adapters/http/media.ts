/**
 * `GET /v1/media/:workspaceId/:key?expires=&signature=`: serves a stored media blob behind a signed,
 * expiring URL (no API key: the URL is the credential). A bad signature, an expired URL and a missing
 * blob all answer the same 404, so URLs cannot be probed. Served bytes carry `nosniff` and a sandbox
 * CSP so a stored HTML or SVG file cannot run script on the API origin.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, Schema } from "effect"
import { InvalidArgument, NotFound } from "../../core/errors.ts"
import { BlobStore, MediaUrls } from "../../core/media.ts"

const Binary = HttpApiSchema.withEncoding(
  Schema.Uint8ArrayFromSelf.annotations({ jsonSchema: { type: "string", format: "binary" } }),
  { kind: "Uint8Array", contentType: "application/octet-stream" }
)

export const MediaPath = Schema.Struct({ workspaceId: Schema.String, key: Schema.String })
export const MediaUrlParams = Schema.Struct({ expires: Schema.String, signature: Schema.String })

export class MediaGroup extends HttpApiGroup.make("media").add(
  HttpApiEndpoint.get("get", "/v1/media/:workspaceId/:key")
    .setPath(MediaPath)
    .setUrlParams(MediaUrlParams)
    .addSuccess(Binary.annotations({ description: "The media bytes, with their original content type." }))
    .addError(NotFound, { status: 404 })
    .addError(InvalidArgument, { status: 400 })
    .annotate(
      OpenApi.Description,
      "Download a message's media through the signed URL found in the message (valid 1 hour). No API key; an invalid, expired or unknown URL answers 404."
    )
) {}

const notFound = new NotFound({ message: "Media not found or link expired" })

export const serveMedia = (
  path: { readonly workspaceId: string; readonly key: string },
  urlParams: { readonly expires?: string | undefined; readonly signature?: string | undefined }
): Effect.Effect<HttpServerResponse.HttpServerResponse, NotFound | InvalidArgument, MediaUrls | BlobStore> =>
  Effect.gen(function* () {
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
