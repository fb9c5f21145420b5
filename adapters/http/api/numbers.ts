/** SPEC "Numbers": list, search the carrier's inventory, buy. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import type { E164 } from "../../../core/kernel/phone.ts"
import { retailCost } from "../../../core/numbers/inventory.ts"
import { AvailableNumbersInput, BuyNumberInput } from "../../../core/numbers/service.ts"
import { buyNumber, listNumbers, searchAvailableNumbers } from "../../../core/tools/numbers.ts"
import { number } from "./examples.ts"
import { capability, IdempotencyHeaders, limitParam, publicGroup } from "./shared.ts"

const available = {
  phone_number: "+14155550123" as E164,
  phone_number_type: "local",
  region_information: [
    { region_type: "rate_center", region_name: "SAN FRANCISCO" },
    { region_type: "state", region_name: "CA" },
    { region_type: "country_code", region_name: "US" }
  ],
  cost_information: retailCost("local")
} as const

export class NumbersGroup extends publicGroup(
  HttpApiGroup.make("numbers")
    .add(
      HttpApiEndpoint.get("list", "/numbers")
        .addSuccess(listNumbers.output.annotations({ examples: [{ numbers: [number] }] }))
        .annotate(OpenApi.Description, "Every number in the workspace, oldest first.")
        .pipe(capability(listNumbers))
    )
    .add(
      HttpApiEndpoint.get("available", "/numbers/available")
        .setUrlParams(Schema.Struct({ ...AvailableNumbersInput.fields, limit: Schema.optional(limitParam(50)) }))
        .addSuccess(searchAvailableNumbers.output.annotations({ examples: [{ available: [available] }] }))
        .annotate(
          OpenApi.Description,
          "Numbers the carrier can sell, in the carrier's order, quoted at the monthly retail price (local 5.00, toll-free 10.00 USD). `startsWith` applies to local numbers only. Toll-free lines are calling only."
        )
        .pipe(capability(searchAvailableNumbers))
    )
    .add(
      HttpApiEndpoint.post("buy", "/numbers")
        .setPayload(BuyNumberInput.annotations({ examples: [{ phoneNumber: available.phone_number }] }))
        .addSuccess(
          buyNumber.output.annotations({ examples: [{ number: { ...number, e164: available.phone_number } }] }),
          { status: 201 }
        )
        .annotate(
          OpenApi.Description,
          "Buy a number from a search result (`Idempotency-Key` supported); it is live (`voiceMode` `app`, `status` `active`) when this returns. The billed type follows the number: +1 8xx is toll-free whatever `type` says. The first local number is included in the plan; each further local number is a 5.00 USD/month add-on and each toll-free line 10.00 USD/month, both prorated to the end of the month (UTC). 409 `failed_precondition`: `Choose a plan before adding phone numbers`, `Verify your identity before adding phone numbers`, `Verify your mobile number before adding phone numbers`, `Workspaces billed through an app store cannot buy add-on numbers`, `Your card was declined`, a number the workspace already has, or the carrier's message when the number was taken after the search. Test keys pass the same gates, then add the number without ordering or charging it (`simulated: true`): a test number, usable by test keys; a live key that sends or calls from it gets a 409 (`+1... was added with a test key and is not ordered at the carrier; buy it with a live key`). A local number bought with a live key once the texting campaign is active texts after it is assigned to the campaign (the next registry poll or `POST /messaging/refresh` asks, a later one confirms)."
        )
        .setHeaders(IdempotencyHeaders)
        .pipe(capability(buyNumber))
    )
).annotate(OpenApi.Title, "Numbers").annotate(
  OpenApi.Description,
  "Phone numbers: search the carrier's inventory, buy, and list the workspace's numbers."
) {}
