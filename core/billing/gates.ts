/**
 * CONTRACT.md "Billing gates, in the order they are checked", as pure functions of the workspace's
 * billing state. Each answers the first gate that refuses (409 failed_precondition), or passes.
 * Whether a gate applies to a request (key kind, `mock`) is the caller's decision.
 */
import { Either } from "effect"
import { FailedPrecondition } from "../kernel/errors.ts"
import type { Billing } from "../workspaces/model.ts"
import { isAddOn, type NumberPurchase } from "./pricing.ts"

export const numberGateMessages = {
  plan: "Choose a plan before adding phone numbers",
  identity: "Verify your identity before adding phone numbers",
  mobile: "Verify your mobile number before adding phone numbers",
  appStore: "Workspaces billed through an app store cannot buy add-on numbers"
} as const

/**
 * `POST /numbers`, for live and test keys alike: a plan; while on a trial, a verified identity and
 * then a verified mobile; and no paid add-on (`isAddOn`) for a workspace billed through an app store.
 */
export const numberPurchaseGate = (
  billing: Billing,
  purchase: Pick<NumberPurchase, "type" | "localNumbers">
): Either.Either<void, FailedPrecondition> => {
  const message = billing.plan === null
    ? numberGateMessages.plan
    : billing.trial && billing.identity !== "verified"
    ? numberGateMessages.identity
    : billing.trial && !billing.mobileVerified
    ? numberGateMessages.mobile
    : billing.billedVia === "app_store" && isAddOn(purchase)
    ? numberGateMessages.appStore
    : null
  return message === null ? Either.void : Either.left(new FailedPrecondition({ message }))
}

export const registrationGateMessages = {
  acknowledgeTrialEnd: "Filing ends your free trial: send acknowledge_trial_end: true",
  paymentMethod: "Add a payment method before filing: a texting registration is charged to the card on file",
  subscription: "Add a payment method and reactivate your subscription before filing a texting registration",
  identity: "Add a payment method and submit your identity check before filing a texting registration"
} as const

/**
 * `POST /messaging/registration` with a live key and no `mock`, before anything is charged or filed:
 * on a trial, the caller must acknowledge that filing ends it; then a card on file, an active
 * subscription and, while on a trial, a submitted identity check. The card itself answers last, when
 * the filing is charged (`Payments.charge`: "Your card was declined").
 */
export const registrationFilingGate = (
  billing: Billing,
  acknowledgeTrialEnd: boolean
): Either.Either<void, FailedPrecondition> => {
  const message = billing.trial && !acknowledgeTrialEnd
    ? registrationGateMessages.acknowledgeTrialEnd
    : !billing.paymentMethod
    ? registrationGateMessages.paymentMethod
    : billing.subscription === "canceled"
    ? registrationGateMessages.subscription
    : billing.trial && billing.identity === "none"
    ? registrationGateMessages.identity
    : null
  return message === null ? Either.void : Either.left(new FailedPrecondition({ message }))
}
