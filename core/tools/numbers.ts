/** Phone number capabilities (SPEC "Numbers"). */
import { Effect } from "effect"
import { AvailableNumbersInput, BuyNumberInput, Numbers } from "../numbers/service.ts"
import { NoInput, tool } from "./tool.ts"

export const listNumbers = tool({
  name: "list_numbers",
  description: "Every phone number of the workspace, oldest first, with who answers its calls (`voiceMode`).",
  input: NoInput,
  example: {},
  scope: "numbers:read",
  run: (p) => Effect.flatMap(Numbers, (n) => n.list(p))
})

export const searchAvailableNumbers = tool({
  name: "search_available_numbers",
  description: "Numbers the carrier can sell, in its order, at the monthly retail price; filter by `type` (local or toll_free), `startsWith` (area code), `contains`, `locality`, `state`.",
  input: AvailableNumbersInput,
  example: { startsWith: "415", limit: 5 },
  scope: "numbers:manage",
  run: (p, input) => Effect.flatMap(Numbers, (n) => n.available(p, input))
})

export const buyNumber = tool({
  name: "buy_number",
  description: "Buy a number from a search result: billed to the workspace (the first local number is in the plan; others are prorated monthly add-ons) and live at once. Test keys add it without ordering or charging (`simulated`).",
  input: BuyNumberInput,
  example: { phoneNumber: "+14155550123" },
  scope: "numbers:manage",
  run: (p, input) => Effect.flatMap(Numbers, (n) => n.buy(p, input))
})
