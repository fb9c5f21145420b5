/**
 * Revocations across processes on one Postgres: the revoking statement NOTIFYs the key's id
 * (apiKeys.ts), and every process LISTENs and drops the key from its cache at once. While the
 * listening connection is down, notices are lost: the cache is emptied on every (re)connect, and its
 * short TTL (KEY_CACHE_MS) bounds what a missed notice can cost.
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Schedule, Stream } from "effect"
import { Workspaces } from "../../core/workspaces/service.ts"
import { KEY_REVOKED_CHANNEL } from "./apiKeys.ts"

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const pg = yield* PgClient.PgClient
    const workspaces = yield* Workspaces
    const listen = Effect.zipRight(
      Effect.sync(workspaces.forgetAllKeys),
      Stream.runForEach(pg.listen(KEY_REVOKED_CHANNEL), (keyId) => Effect.sync(() => workspaces.forgetKey(keyId)))
    ).pipe(Effect.tapErrorCause((cause) => Effect.logWarning("key revocation notices lost; listening again", cause)))
    const retry = Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))
    yield* Effect.forkScoped(Effect.retry(listen, retry))
  })
)
