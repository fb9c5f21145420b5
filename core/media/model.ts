/**
 * Media of MMS messages and call recordings: fetched once (outbound at send time, inbound and
 * recordings on receipt), stored in a blob store, and served back through short-lived signed URLs
 * (`/v1/media/...`, valid 1 h).
 */
import { Context, Data, Effect, Schema } from "effect"
import type { InvalidArgument } from "../kernel/errors.ts"

export const MAX_MEDIA_BYTES = 5 * 1024 * 1024
/**
 * Call recordings and voicemails from the carrier: 100 MB. A wav recording is 16-bit PCM, about
 * 1.9 MB a minute at 8 kHz on two channels, so a ten-minute call is about 19 MB, far past the 5 MB of
 * message media; 100 MB holds about 50 minutes of that (mp3 is several times smaller) while still
 * bounding what one download holds in memory.
 */
export const MAX_RECORDING_BYTES = 100 * 1024 * 1024
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

/**
 * The blob naming rule every BlobStore and signed media URL follows: workspace ids and keys are
 * `[A-Za-z0-9_-]` plus dots that do not lead, at most 200 characters, so a name is always safe as one
 * path segment (no separators, no leading dot) and `/` can join two names unambiguously.
 */
const BLOB_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/

export const isValidBlobName = (name: string): boolean => BLOB_NAME.test(name)

/** Dies on a workspace id or key that breaks the naming rule: a programmer error, never user input. */
export const assertBlobNames = (workspaceId: string, key: string): Effect.Effect<void> =>
  isValidBlobName(workspaceId) && isValidBlobName(key)
    ? Effect.void
    : Effect.die(
      new Error(`invalid blob name: ${JSON.stringify(workspaceId).slice(0, 80)}/${JSON.stringify(key).slice(0, 80)}`)
    )

/** Stores media bytes per workspace. `put` with a name that breaks the naming rule dies; `get` with one finds nothing. */
export interface BlobStore {
  readonly put: (workspaceId: string, key: string, bytes: Uint8Array, contentType: string) => Effect.Effect<void>
  readonly get: (
    workspaceId: string,
    key: string
  ) => Effect.Effect<{ readonly bytes: Uint8Array; readonly contentType: string } | null>
}
export const BlobStore = Context.GenericTag<BlobStore>("core/BlobStore")

/** What one download may take: bytes at most, and seconds for the whole exchange. */
export interface MediaLimits {
  readonly maxBytes: number
  readonly timeoutSeconds: number
}

/** Recordings' limits; message media keep the fetcher's own (MAX_MEDIA_BYTES, 15 s). 120 s lets 100 MB arrive at about 7 Mbit/s. */
export const RECORDING_LIMITS: MediaLimits = { maxBytes: MAX_RECORDING_BYTES, timeoutSeconds: 120 }

/** The file is larger than the limit (declared or as read); retrying the same URL will not help. */
export class MediaTooLarge extends Data.TaggedError("MediaTooLarge")<{ readonly message: string }> {}

/**
 * Fetches one media URL through the outbound-URL guard (https, public addresses, no redirects), at
 * most MAX_MEDIA_BYTES (or `limits`), with a timeout. A URL that cannot be fetched is an
 * InvalidArgument naming it; one larger than the limit is MediaTooLarge.
 */
export interface MediaFetcher {
  readonly fetch: (url: string, limits?: MediaLimits) => Effect.Effect<
    { readonly bytes: Uint8Array; readonly contentType: string; readonly filename: string },
    InvalidArgument | MediaTooLarge
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
