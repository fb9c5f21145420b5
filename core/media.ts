/**
 * Media of MMS messages: fetched once (outbound at send time, inbound on receipt), stored in a blob
 * store, and served back through short-lived signed URLs (`/v1/media/...`, valid 1 h).
 */
import { Context, Effect, Schema } from "effect"
import type { InvalidArgument } from "./errors.ts"

export const MAX_MEDIA_BYTES = 5 * 1024 * 1024
export const MEDIA_URL_TTL_SECONDS = 3600

/** A media file as an activity stores it; clients see it as a signed URL instead of the key. */
export const StoredMedia = Schema.Struct({
  /** Blob key, unique per workspace. */
  key: Schema.String,
  contentType: Schema.String,
  size: Schema.Number,
  filename: Schema.String
})
export type StoredMedia = typeof StoredMedia.Type

export interface BlobStore {
  readonly put: (workspaceId: string, key: string, bytes: Uint8Array, contentType: string) => Effect.Effect<void>
  readonly get: (workspaceId: string, key: string) => Effect.Effect<{ readonly bytes: Uint8Array; readonly contentType: string } | null>
}
export const BlobStore = Context.GenericTag<BlobStore>("core/BlobStore")

/**
 * Fetches one media URL through the outbound-URL guard (https, public addresses, no redirects), at
 * most MAX_MEDIA_BYTES, with a timeout. A URL that cannot be fetched is an InvalidArgument naming it.
 */
export interface MediaFetcher {
  readonly fetch: (url: string) => Effect.Effect<
    { readonly bytes: Uint8Array; readonly contentType: string; readonly filename: string },
    InvalidArgument
  >
}
export const MediaFetcher = Context.GenericTag<MediaFetcher>("core/MediaFetcher")

/** Signs and verifies media URLs; the HTTP media route serves a blob only for a valid signature. */
export interface MediaUrls {
  /** An absolute URL under PUBLIC_BASE_URL, valid for MEDIA_URL_TTL_SECONDS. */
  readonly sign: (workspaceId: string, key: string) => Effect.Effect<string>
  readonly verify: (workspaceId: string, key: string, expires: string, signature: string) => Effect.Effect<boolean>
}
export const MediaUrls = Context.GenericTag<MediaUrls>("core/MediaUrls")
