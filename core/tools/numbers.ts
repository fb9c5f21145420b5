/** Phone number capabilities (SPEC "Numbers"). */
import { Effect } from "effect"
import { FailedPrecondition } from "../kernel/errors.ts"
import {
  AvailableNumbers,
  AvailableNumbersInput,
  BuyNumberInput,
  BuyNumberResult,
  NumberList,
  Numbers
} from "../numbers/service.ts"
import { NoInput, read, tool } from "./tool.ts"

export const listNumbers = tool({
  name: "numbers_list",
  title: "List the workspace's numbers",
  description:
    "Every phone number of the workspace, oldest first: its type, status and who answers its calls (`voiceMode`: the team in the app, the AI agent, voicemail, or forwarding to `forwardTo`).",
  input: NoInput,
  output: NumberList,
  example: {},
  scope: "numbers:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p) => Effect.flatMap(Numbers, (n) => n.list(p))
})

export const searchAvailableNumbers = tool({
  name: "numbers_search",
  title: "Search numbers to buy",
  description:
    "Numbers the carrier can sell now, in its order, with the monthly retail price; filter by `type` (`local`, the default, or `toll_free`), `startsWith` (area code; local only), `contains`, `locality`, `state`, `country` (default US); `limit` 1 to 50. Asks the carrier's live inventory; nothing is reserved. Buy one with numbers_buy.",
  input: AvailableNumbersInput,
  output: AvailableNumbers,
  example: { startsWith: "415", limit: 5 },
  scope: "numbers:manage",
  hints: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  idempotencyKey: false,
  errors: [],
  run: (p, input) => Effect.flatMap(Numbers, (n) => n.available(p, input))
})

export const buyNumber = tool({
  name: "numbers_buy",
  title: "Buy a phone number",
  description:
    "Buy `phoneNumber` from a numbers_search result; it is live at once. A purchase billed to the workspace: the first local number is in the plan, each further local number is 5.00 USD/month and a toll-free line 10.00 USD/month, prorated; confirm with the user first. Test keys add the number without ordering or charging it (`simulated`). Pass `idempotencyKey` to make a retry safe.",
  input: BuyNumberInput,
  output: BuyNumberResult,
  example: { phoneNumber: "+14155550123" },
  scope: "numbers:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: true,
  errors: [FailedPrecondition],
  run: (p, input) => Effect.flatMap(Numbers, (n) => n.buy(p, input))
})
