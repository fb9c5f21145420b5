import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../platform.ts"
import { SendMessageResult } from "../../../core/messaging/outbound.ts"
import { searchMessages, sendMessage } from "../../../core/tools/conversations.ts"
import { Api } from "../api.ts"
import { idempotent } from "../idempotency.ts"

export const MessagesLive = HttpApiBuilder.group(Api, "messages", (handlers) =>
  handlers
    .handle(
      "send",
      ({ headers, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotent({
            principal,
            key: headers["idempotency-key"],
            request: payload,
            status: 201,
            success: SendMessageResult,
            run: sendMessage.run(principal, payload)
          })
        ),
      { uninterruptible: true }
    )
    .handle("search", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => searchMessages.run(p, urlParams)))
)
