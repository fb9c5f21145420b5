import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { listCalls, placeCall } from "../../../core/tools/calls.ts"
import { Api } from "../api.ts"
import { idempotentCreate } from "../idempotency.ts"
import { CurrentPrincipal } from "../platform.ts"

export const CallsLive = HttpApiBuilder.group(Api, "calls", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => listCalls.run(p, urlParams)))
    .handle("place", idempotentCreate(placeCall), { uninterruptible: true })
)
