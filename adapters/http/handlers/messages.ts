import { Effect } from "effect"
import { CurrentPrincipal } from "../platform.ts"
import { searchMessages, sendMessage } from "../../../core/tools/conversations.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"
import { idempotentCreate } from "../idempotency.ts"

export const MessagesLive = group(Api, "messages", (handlers) =>
  handlers
    .handle("send", idempotentCreate(sendMessage), { uninterruptible: true })
    .handle("search", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => searchMessages.run(p, urlParams)))
)
