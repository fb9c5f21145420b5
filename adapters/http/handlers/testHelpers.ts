/** Test helpers (CONTRACT.md): drive the simulated carrier end to end. Test keys only. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import type { Principal } from "../../../core/auth/principal.ts"
import { CurrentPrincipal } from "../platform.ts"
import { ConversationStore } from "../../../core/conversations/store.ts"
import { NotFound, PermissionDenied } from "../../../core/errors.ts"
import { Ids, isUuid } from "../../../core/ids.ts"
import { Messaging } from "../../../core/messaging/service.ts"
import { ActivityViews } from "../../../core/messaging/views.ts"
import { NumberStore } from "../../../core/numbers.ts"
import { normalizePhone } from "../../../core/phone.ts"
import { Api } from "../api.ts"

export const TestHelpersLive = (enabled: boolean) =>
  HttpApiBuilder.group(Api, "testHelpers", (handlers) =>
    Effect.gen(function* () {
      const messaging = yield* Messaging
      const store = yield* ConversationStore
      const numbers = yield* NumberStore
      const views = yield* ActivityViews
      const gate = Effect.gen(function* () {
        if (!enabled) return yield* new NotFound({ message: "No such route" })
        const p: Principal = yield* CurrentPrincipal
        if (p.kind !== "test") return yield* new PermissionDenied({ message: "Test helpers accept test keys only" })
        return p
      })
      return handlers
        .handle(
          "inboundMessage",
          ({ payload }) =>
            Effect.gen(function* () {
              const p = yield* gate
              // Only the caller's own numbers: a test key cannot inject traffic into another workspace.
              const to = normalizePhone(payload.to)
              const owned = to._tag === "Right" ? yield* numbers.findByE164(to.right) : Option.none()
              if (Option.isNone(owned) || owned.value.workspaceId !== p.workspaceId) {
                return yield* new NotFound({ message: `to: ${payload.to} is not a number of this workspace` })
              }
              const { uuid } = yield* Ids
              const activity = yield* messaging.receive({
                carrierMessageId: `sim_in_${uuid()}`,
                from: payload.from,
                to: payload.to,
                body: payload.body ?? null,
                media: (payload.mediaUrls ?? []).map((url) => ({ url, contentType: null }))
              })
              const thread = Option.getOrThrow(yield* store.getThread(p.workspaceId, activity.conversationId))
              return { message: yield* views.view(activity), conversationId: activity.conversationId, contactId: thread.contactId! }
            }),
          { uninterruptible: true }
        )
        .handle("deliveryStatus", ({ payload }) =>
          Effect.gen(function* () {
            const p = yield* gate
            const notFound = new NotFound({ message: "No such outbound message" })
            if (!isUuid(payload.activityId)) return yield* notFound
            const activity = yield* store.getActivity(p.workspaceId, payload.activityId)
            if (Option.isNone(activity) || activity.value.direction !== "outbound") return yield* notFound
            const updated = yield* messaging.applyStatusTo(activity.value, payload.status)
            return { message: yield* views.view(updated) }
          })
        )
    })
  )
