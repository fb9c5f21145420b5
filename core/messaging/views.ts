/** Activities as clients see them: stored media become short-lived signed URLs. */
import { Context, Effect, Layer } from "effect"
import { Activity, type ActivityRecord, Media } from "../conversations/model.ts"
import { projectionWith } from "../kernel/records.ts"
import { MediaUrls } from "../media/model.ts"

const activityOf = projectionWith(Activity)
const mediaOf = projectionWith(Media)

export const make = Effect.map(MediaUrls, (urls) => ({
  view: (a: ActivityRecord): Effect.Effect<Activity> =>
    Effect.map(
      Effect.forEach(a.media, (m) => Effect.map(urls.sign(a.workspaceId, m.key), (url) => mediaOf(m, { url }))),
      (media) => activityOf(a, { media })
    )
}))

export class ActivityViews
  extends Context.Tag("core/ActivityViews")<ActivityViews, Effect.Effect.Success<typeof make>>()
{}
export const layer = Layer.effect(ActivityViews, make)
