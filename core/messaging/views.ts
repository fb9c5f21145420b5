/** Activities as clients see them: stored media become short-lived signed URLs. */
import { Context, Effect, Layer } from "effect"
import type { Activity, ActivityRecord } from "../conversations/model.ts"
import { MediaUrls } from "../media.ts"

export const make = Effect.map(MediaUrls, (urls) => ({
  view: (a: ActivityRecord): Effect.Effect<Activity> =>
    Effect.map(
      Effect.forEach(a.media, (m) =>
        Effect.map(urls.sign(a.workspaceId, m.key), (url) => ({ url, contentType: m.contentType, size: m.size, filename: m.filename }))
      ),
      (media) => ({
        id: a.id,
        type: a.type,
        direction: a.direction,
        authorUid: a.authorUid,
        body: a.body,
        media,
        deliveryStatus: a.deliveryStatus,
        call: a.call,
        aiTags: a.aiTags,
        callTranscript: a.callTranscript,
        createdAt: a.createdAt
      })
    )
}))

export class ActivityViews extends Context.Tag("core/ActivityViews")<ActivityViews, Effect.Effect.Success<typeof make>>() {}
export const layer = Layer.effect(ActivityViews, make)
