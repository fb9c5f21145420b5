/** Carrier webhooks: signed by the carrier (Ed25519 for Telnyx), not by an API key. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidArgument, NotFound, Unauthenticated } from "./errors.ts"

/** `{name}`: the configured carrier's (CARRIER), `telnyx`; any other name is 404. */
const CarrierParam = Schema.Struct({
  name: Schema.String.annotations({ description: "The configured carrier (CARRIER): `telnyx`.", examples: ["telnyx"] })
})

export class CarrierGroup extends HttpApiGroup.make("carrier")
  .add(
    HttpApiEndpoint.post("callback", "/:name")
      .setPath(CarrierParam)
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true) }).annotations({ examples: [{ ok: true }] }))
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "The configured carrier's webhooks. `telnyx` (CARRIER=telnyx): Telnyx v2 messaging (message.received, message.sent, message.finalized), Call Control and 10DLC events, verified with the account's Ed25519 public key. 404 for any other name, and with the simulated carrier."
      )
  )
  .addError(InvalidArgument)
  .addError(Unauthenticated)
  .prefix("/v1/carrier")
  .annotate(OpenApi.Title, "Carrier webhooks").annotate(
    OpenApi.Description,
    "Inbound callbacks from the configured carrier (Telnyx); not called by API clients."
  )
{}
