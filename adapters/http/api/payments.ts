/** The payment provider's webhooks (PAYMENTS=stripe): signed by the provider, not by an API key. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidArgument, NotFound } from "./errors.ts"

const ProviderParam = Schema.Struct({
  name: Schema.String.annotations({
    description: "The configured provider (PAYMENTS): `stripe`.",
    examples: ["stripe"]
  })
})

export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.post("webhook", "/:name")
      .setPath(ProviderParam)
      .addSuccess(Schema.Struct({ received: Schema.Literal(true) }).annotations({ examples: [{ received: true }] }))
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "The payment provider's webhooks. `stripe` (PAYMENTS=stripe): Stripe events signed with the endpoint's secret (STRIPE_WEBHOOK_SECRET, the `Stripe-Signature` header); a missing or wrong signature is 400 and nothing is applied. `checkout.session.completed` of a card setup makes the card the customer's default and sets the workspace's `billing.paymentMethod`; `payment_intent.succeeded` and `payment_intent.payment_failed` report a charge's outcome; other types are acknowledged and ignored. 404 for any other name, and with PAYMENTS=simulated or ledger."
      )
  )
  .addError(InvalidArgument)
  .prefix("/v1/payments")
  .annotate(OpenApi.Title, "Payment webhooks")
  .annotate(
    OpenApi.Description,
    "Inbound events from the configured payment provider (Stripe); not called by API clients."
  )
{}
