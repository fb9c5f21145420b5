/**
 * Revocations across processes on one Postgres: the revoking statement NOTIFYs the key's id
 * (apiKeys.ts), and every process LISTENs and drops the key from its cache at once. While the
 * listening connection is down, notices are lost: the cache is emptied on every (re)connect, and its
 * short TTL (KEY_CACHE_MS) bounds what a missed notice can cost.
 */
import { Effect, Layer } from "effect"
import { Workspaces } from "../../core/workspaces/service.ts"
import { KEY_REVOKED_CHANNEL } from "./apiKeys.ts"
import { listenForever } from "./notices.ts"

export const layer = Layer.scopedDiscard(
  Effect.flatMap(Workspaces, (workspaces) =>
    listenForever(
      KEY_REVOKED_CHANNEL,
      "key revocation",
      (keyId) => Effect.sync(() => workspaces.forgetKey(keyId)),
      Effect.sync(workspaces.forgetAllKeys)
    ))
)
