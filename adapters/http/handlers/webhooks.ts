import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type Principal, requireScope } from "../../../core/auth/principal.ts"
import { CurrentPrincipal } from "../platform.ts"
import { subscribableEvents as events } from "../../../core/events/subscribable.ts"
import { Webhooks } from "../../../core/webhooks/service.ts"
import { Api } from "../api.ts"

export const WebhooksLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    const withPrincipal = <A, E>(f: (p: Principal) => Effect.Effect<A, E>) =>
      Effect.flatMap(CurrentPrincipal, f)
    return handlers
      .handle("events", () => withPrincipal((p) => requireScope(p, "webhooks:manage")).pipe(Effect.as({ events })))
      .handle("list", () => withPrincipal((p) => webhooks.list(p)).pipe(Effect.map((webhooks) => ({ webhooks }))))
      .handle("create", ({ payload }) => withPrincipal((p) => webhooks.create(p, payload)).pipe(Effect.map((webhook) => ({ webhook }))), {
        uninterruptible: true
      })
      .handle("get", ({ path }) => withPrincipal((p) => webhooks.get(p, path.id)).pipe(Effect.map((webhook) => ({ webhook }))))
      .handle("update", ({ path, payload }) =>
        withPrincipal((p) => webhooks.update(p, path.id, payload)).pipe(Effect.map((webhook) => ({ webhook })))
      )
      .handle("delete", ({ path }) => withPrincipal((p) => webhooks.remove(p, path.id)))
      .handle("rotate", ({ path }) => withPrincipal((p) => webhooks.rotate(p, path.id)).pipe(Effect.map((webhook) => ({ webhook }))), {
        uninterruptible: true
      })
      .handle("test", ({ path }) => withPrincipal((p) => webhooks.test(p, path.id)).pipe(Effect.map((delivery) => ({ delivery }))), {
        uninterruptible: true
      })
      .handle("deliveries", ({ path, urlParams }) =>
        withPrincipal((p) => webhooks.deliveries(p, path.id, urlParams.limit ?? 50)).pipe(Effect.map((deliveries) => ({ deliveries })))
      )
  })
)
