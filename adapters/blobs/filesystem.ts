/**
 * BlobStore on a directory: bytes at `<dir>/<workspaceId>/<key>`, the content type in a sidecar
 * `<dir>/<workspaceId>/.<key>.type` (keys never start with a dot, so sidecars and temp files cannot
 * collide with a key). Names follow the blob naming rule (core/media/model.ts), so no path traversal is
 * possible; `put` with an invalid name dies (callers generate keys), `get` finds nothing.
 * Every write goes to a temp file in the same directory and is renamed into place (atomic). The
 * sidecar is written before the bytes, so a readable blob always has its type. Node and Deno.
 */
import { Effect, Layer } from "effect"
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { assertBlobNames, BlobStore, isValidBlobName } from "../../core/media/model.ts"

const DEFAULT_TYPE = "application/octet-stream"

const isNotFound = (e: unknown) => {
  const code = (e as { code?: string } | null)?.code
  return code === "ENOENT" || code === "ENOTDIR" || (e as { name?: string } | null)?.name === "NotFound"
}

const writeAtomic = async (path: string, dir: string, data: Uint8Array | string) => {
  const temp = join(dir, `.tmp-${crypto.randomUUID()}`)
  try {
    await writeFile(temp, data)
    await rename(temp, path)
  } catch (e) {
    await rm(temp, { force: true }).catch(() => undefined)
    throw e
  }
}

export const make = (dir: string): BlobStore => {
  const root = resolve(dir)
  return BlobStore.of({
    put: (workspaceId, key, bytes, contentType) =>
      Effect.zipRight(
        assertBlobNames(workspaceId, key),
        Effect.promise(async () => {
          const folder = join(root, workspaceId)
          await mkdir(folder, { recursive: true })
          await writeAtomic(join(folder, `.${key}.type`), folder, contentType)
          await writeAtomic(join(folder, key), folder, bytes)
        })
      ),
    get: (workspaceId, key) =>
      !isValidBlobName(workspaceId) || !isValidBlobName(key)
        ? Effect.succeed(null)
        : Effect.promise(async () => {
          const folder = join(root, workspaceId)
          let bytes: Uint8Array
          try {
            bytes = new Uint8Array(await readFile(join(folder, key)))
          } catch (e) {
            if (isNotFound(e)) return null
            throw e
          }
          let contentType = DEFAULT_TYPE
          try {
            contentType = (await readFile(join(folder, `.${key}.type`), "utf8")) || DEFAULT_TYPE
          } catch (e) {
            if (!isNotFound(e)) throw e
          }
          return { bytes, contentType }
        })
  })
}

export const layer = (dir: string): Layer.Layer<BlobStore> => Layer.sync(BlobStore, () => make(dir))
