/** Message media: fetched once and stored as blobs, for outbound and inbound messages alike. */
import { Effect } from "effect"
import { InvalidArgument } from "../kernel/errors.ts"
import { Ids } from "../kernel/ids.ts"
import { BlobStore, MediaFetcher, type StoredMedia } from "../media/model.ts"

export const makeAttachments = Effect.gen(function*() {
  const fetcher = yield* MediaFetcher
  const blobs = yield* BlobStore

  const storeEach = (workspaceId: string, urls: ReadonlyArray<string>, field: string) =>
    Effect.forEach(
      urls,
      (url, i) =>
        Effect.gen(function*() {
          const fetched = yield* fetcher.fetch(url).pipe(
            Effect.mapError((e) => new InvalidArgument({ message: `${field}[${i}]: ${e.message}` }))
          )
          const { uuid } = yield* Ids
          const key = uuid()
          yield* blobs.put(workspaceId, key, fetched.bytes, fetched.contentType)
          const stored: StoredMedia = {
            key,
            contentType: fetched.contentType,
            size: fetched.bytes.byteLength,
            filename: fetched.filename
          }
          return stored
        }),
      { concurrency: 4 }
    )
  /**
   * Fetches and stores each URL; errors name the offending `field[i]`. Most messages carry none,
   * and then skip the concurrent loop's setup.
   */
  const store = (workspaceId: string, urls: ReadonlyArray<string>, field: string): ReturnType<typeof storeEach> =>
    urls.length === 0 ? Effect.succeed([]) : storeEach(workspaceId, urls, field)

  return { store } as const
})

export type Attachments = Effect.Effect.Success<typeof makeAttachments>
