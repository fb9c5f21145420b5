/**
 * In-memory BlobStore (tests, single-process dev). Same naming rule as every BlobStore
 * (core/media/model.ts). Bytes are copied in and out so callers cannot mutate what is stored.
 */
import { Effect, Layer } from "effect"
import { assertBlobNames, BlobStore, isValidBlobName } from "../../core/media/model.ts"

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
