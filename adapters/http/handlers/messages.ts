import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../platform.ts"
import { Conversations } from "../../../core/conversations/service.ts"
import { Messaging } from "../../../core/messaging/service.ts"
import { Api } from "../api.ts"
import { idempotent } from "../idempotency.ts"

export const MessagesLive = HttpApiBuilder.group(Api, "messages", (handlers) =>
  Effect.gen(function* () {
    const messaging = yield* Messaging
    const conversations = yield* Conversations
    return handlers
      .handle(
        "send",
        ({ headers, payload }) =>
          Effect.flatMap(CurrentPrincipal, (principal) =>
            idempotent({
              principal,
              key: headers["idempotency-key"],
              request: payload,
              status: 201,
              encode: (a) => a,
              run: messaging.send(principal, payload)
            })
          ),
        { uninterruptible: true }
      )
      .handle("search", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) => conversations.search(p, urlParams.q, urlParams.limit ?? 25)).pipe(
          Effect.map((results) => ({ results }))
        )
      )
  })
)
