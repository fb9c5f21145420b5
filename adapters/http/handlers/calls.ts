import { Effect } from "effect"
import { listCalls, placeCall } from "../../../core/tools/calls.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"
import { idempotentCreate } from "../idempotency.ts"
import { CurrentPrincipal } from "../platform.ts"

export const CallsLive = group(Api, "calls", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => listCalls.run(p, urlParams)))
    .handle("place", idempotentCreate(placeCall), { uninterruptible: true })
)
