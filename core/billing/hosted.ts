/**
 * What a hosted payment provider (Stripe, PAYMENTS=stripe) adds to the Payments port: a page of its
 * own where the workspace's card is saved for later charges, and its webhooks, which report a card
 * set up and the outcome of charges (to PaymentEvents). With the simulator or the ledger there is
 * no such provider: the card setup route answers 409 and the webhook route 404.
 */
import { Context, Effect, Option, Schema } from "effect"
import { FailedPrecondition, type InvalidArgument } from "../kernel/errors.ts"
import { asPrecondition, type PaymentEvents, type PaymentFailed } from "./payments.ts"

export interface CardSetupUrls {
  /** Where the provider's page sends the card holder once the card is saved. */
  readonly successUrl: string
  /** Where it sends them when they leave without saving one. */
  readonly cancelUrl: string
}

export interface WebhookRequest {
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly rawBody: string
}

export interface HostedPayments {
  /** The provider's name in its webhook route (`/v1/payments/{name}`). */
  readonly name: string
  /** The provider's page that saves a card for the workspace's later off-session charges. */
  readonly setupUrl: (workspaceId: string, urls: CardSetupUrls) => Effect.Effect<string, PaymentFailed>
  /**
   * Verifies one of the provider's webhooks and applies it: InvalidArgument (nothing applied) when
   * its signature does not verify; a defect when the provider must send it again.
   */
  readonly receive: (request: WebhookRequest) => Effect.Effect<void, InvalidArgument, PaymentEvents>
}
export const HostedPayments = Context.GenericTag<HostedPayments>("core/HostedPayments")

const ReturnUrl = Schema.String.pipe(Schema.maxLength(2048), Schema.pattern(/^https?:\/\/\S+$/)).annotations({
  description: "An http(s) URL"
})

/** `POST /v1/admin/workspaces/{id}/payment-method/setup`: where the provider's page returns; default the console (`<PUBLIC_BASE_URL>/app`). */
export const CardSetupInput = Schema.Struct({
  successUrl: Schema.optional(ReturnUrl),
  cancelUrl: Schema.optional(ReturnUrl)
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type CardSetupInput = typeof CardSetupInput.Type

/** The card setup page of `workspaceId` with the configured provider; 409 without one, or when it does not answer. */
export const cardSetupUrl = (
  hosted: Option.Option<HostedPayments>,
  workspaceId: string,
  input: CardSetupInput,
  consoleUrl: string
): Effect.Effect<string, FailedPrecondition> =>
  Option.isNone(hosted)
    ? Effect.fail(new FailedPrecondition({ message: "Card setup needs PAYMENTS=stripe" }))
    : hosted.value.setupUrl(workspaceId, {
      successUrl: input.successUrl ?? consoleUrl,
      cancelUrl: input.cancelUrl ?? consoleUrl
    }).pipe(Effect.mapError(asPrecondition))
