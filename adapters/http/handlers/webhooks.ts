import { Effect } from "effect"
import type { Principal } from "../../../core/auth/principal.ts"
import * as Tools from "../../../core/tools/webhooks.ts"
import { CurrentPrincipal } from "../platform.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

const withPrincipal = <A, E, R>(f: (p: Principal) => Effect.Effect<A, E, R>) => Effect.flatMap(CurrentPrincipal, f)

export const WebhooksLive = group(Api, "webhooks", (handlers) =>
  handlers
    .handle("events", () => withPrincipal((p) => Tools.listWebhookEventTypes.run(p, {})))
    .handle("list", () => withPrincipal((p) => Tools.listWebhooks.run(p, {})))
    .handle("create", ({ payload }) => withPrincipal((p) => Tools.createWebhook.run(p, payload)), { uninterruptible: true })
    .handle("get", ({ path }) => withPrincipal((p) => Tools.getWebhook.run(p, path)))
    .handle("update", ({ path, payload }) => withPrincipal((p) => Tools.updateWebhook.run(p, { ...path, ...payload })))
    .handle("delete", ({ path }) => withPrincipal((p) => Tools.deleteWebhook.run(p, path)))
    .handle("rotate", ({ path }) => withPrincipal((p) => Tools.rotateWebhookSecret.run(p, path)), { uninterruptible: true })
    .handle("test", ({ path }) => withPrincipal((p) => Tools.testWebhook.run(p, path)), { uninterruptible: true })
    .handle("deliveries", ({ path, urlParams }) => withPrincipal((p) => Tools.listWebhookDeliveries.run(p, { ...path, ...urlParams })))
)
