/**
 * In-memory BlobStore (tests, single-process dev). Same rules as the filesystem store: workspace ids
 * and keys are `[A-Za-z0-9_-]` plus dots that do not lead, at most 200 characters; `put` with an
 * invalid name is a defect (callers generate keys), `get` with one finds nothing. Bytes are copied
 * in and out so callers cannot mutate what is stored.
 */
import { Effect, Layer } from "effect"
import { BlobStore } from "../../core/media.ts"

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/

/** A workspace id or blob key that is safe as one path segment (no separators, no leading dot). */
export const isValidBlobName = (name: string): boolean => NAME.test(name)

/** Dies on a workspace id or key that breaks the naming rule: a programmer error, never user input. */
export const assertBlobNames = (workspaceId: string, key: string): Effect.Effect<void> =>
  isValidBlobName(workspaceId) && isValidBlobName(key)
    ? Effect.void
    : Effect.die(new Error(`invalid blob name: ${JSON.stringify(workspaceId).slice(0, 80)}/${JSON.stringify(key).slice(0, 80)}`))

export const make = (): BlobStore => {
  const blobs = new Map<string, { readonly bytes: Uint8Array; readonly contentType: string }>()
  return BlobStore.of({
    put: (workspaceId, key, bytes, contentType) =>
      Effect.zipRight(
        assertBlobNames(workspaceId, key),
        Effect.sync(() => {
          blobs.set(`${workspaceId}/${key}`, { bytes: bytes.slice(), contentType })
        })
      ),
    get: (workspaceId, key) =>
      Effect.sync(() => {
        if (!isValidBlobName(workspaceId) || !isValidBlobName(key)) return null
        const found = blobs.get(`${workspaceId}/${key}`)
        return found ? { bytes: found.bytes.slice(), contentType: found.contentType } : null
      })
  })
}

export const layer: Layer.Layer<BlobStore> = Layer.sync(BlobStore, make)
