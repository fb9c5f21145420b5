import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../platform.ts"
import { Conversations } from "../../../core/conversations/service.ts"
import { Api } from "../api.ts"

export const ConversationsLive = HttpApiBuilder.group(Api, "conversations", (handlers) =>
  Effect.gen(function* () {
    const conversations = yield* Conversations
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) => conversations.list(p, urlParams)).pipe(
          Effect.map((page) => ({ conversations: page.items, nextCursor: page.nextCursor }))
        )
      )
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => conversations.get(p, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => conversations.patch(p, path.id, payload)).pipe(Effect.map((conversation) => ({ conversation })))
      )
  })
)
