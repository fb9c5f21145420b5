/** Carrier webhooks: signed by the carrier (Ed25519 for Telnyx), not by an API key. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidArgument, NotFound, Unauthenticated } from "./errors.ts"

export class CarrierGroup extends HttpApiGroup.make("carrier")
  .add(
    HttpApiEndpoint.post("telnyx", "/telnyx")
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true) }).annotations({ examples: [{ ok: true }] }))
      .addError(NotFound)
      .annotate(OpenApi.Description, "Telnyx v2 messaging webhooks (message.received, message.sent, message.finalized), verified with the account's Ed25519 public key. 404 unless CARRIER=telnyx.")
  )
  .addError(InvalidArgument)
  .addError(Unauthenticated)
  .prefix("/v1/carrier")
  .annotate(OpenApi.Title, "Carrier webhooks").annotate(OpenApi.Description, "Inbound callbacks from the real carrier (Telnyx); not called by API clients.") {}
