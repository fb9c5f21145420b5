import { Effect } from "effect"
import { CurrentPrincipal } from "../platform.ts"
import { getConversation, listConversations, updateConversation } from "../../../core/tools/conversations.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

export const ConversationsLive = group(Api, "conversations", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => listConversations.run(p, urlParams)))
    .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => getConversation.run(p, path)))
    .handle("update", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (p) => updateConversation.run(p, { ...path, ...payload })))
)
