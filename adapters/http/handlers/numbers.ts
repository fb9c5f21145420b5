import { Effect } from "effect"
import { buyNumber, listNumbers, searchAvailableNumbers } from "../../../core/tools/numbers.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"
import { idempotentCreate } from "../idempotency.ts"
import { CurrentPrincipal } from "../platform.ts"

export const NumbersLive = group(Api, "numbers", (handlers) =>
  handlers
    .handle("list", () => Effect.flatMap(CurrentPrincipal, (p) => listNumbers.run(p, {})))
    .handle("available", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => searchAvailableNumbers.run(p, urlParams)))
    .handle("buy", idempotentCreate(buyNumber), { uninterruptible: true })
)
