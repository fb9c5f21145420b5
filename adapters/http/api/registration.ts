/** SPEC "Messaging registration": the US texting (10DLC) registration. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import type { MessagingStatus } from "../../../core/registration/record.ts"
import { OtpInput, RegistrationRequest } from "../../../core/registration/service.ts"
import {
  fileMessagingRegistration,
  getMessagingStatus,
  refreshMessagingStatus,
  resendMessagingOtp,
  verifyMessagingOtp
} from "../../../core/tools/registration.ts"
import { capability, publicGroup } from "./shared.ts"

const pending: MessagingStatus = {
  step: "brand_pending",
  canText: false,
  messagingProfileId: "40019a44-bbd6-4b6c-8a2e-4f1e3d1a0b7c",
  brand: { status: "pending", identityStatus: "UNVERIFIED", failureReasons: [] },
  campaign: { status: "staged", useCase: "MIXED", failureReasons: [], submittedAt: null }
}
const active: MessagingStatus = {
  ...pending,
  step: "campaign_active",
  canText: true,
  brand: { status: "accepted", identityStatus: "VERIFIED", failureReasons: [] },
  campaign: { status: "approved", useCase: "MIXED", failureReasons: [], submittedAt: "2026-08-17T10:00:00.000Z" }
}
const otp: MessagingStatus = {
  ...pending,
  step: "brand_otp_pending",
  brand: {
    status: "otp_pending",
    identityStatus: "SELF_DECLARED",
    failureReasons: [],
    otpSentAt: "2026-08-17T10:00:00.000Z",
    otpMobileLast4: "0100"
  }
}

export class MessagingGroup extends publicGroup(
  HttpApiGroup.make("messaging")
    .add(
      HttpApiEndpoint.get("status", "/messaging")
        .addSuccess(getMessagingStatus.output.annotations({ examples: [{ messaging: active }] }))
        .annotate(
          OpenApi.Description,
          "Where the workspace's US texting (10DLC) registration stands. `step` is `none` before any filing."
        )
        .pipe(capability(getMessagingStatus))
    )
    .add(
      HttpApiEndpoint.post("file", "/messaging/registration")
        .setPayload(
          RegistrationRequest.annotations({
            examples: [Schema.decodeSync(RegistrationRequest)(fileMessagingRegistration.example)]
          })
        )
        .addSuccess(fileMessagingRegistration.output.annotations({ examples: [{ messaging: pending }] }), {
          status: 201
        })
        .annotate(
          OpenApi.Description,
          "File the brand with the campaign registry and stage the campaign, created automatically once the brand is accepted. " +
            "A live filing (live key, no `mock`) is a purchase: it ends a running free trial (send `acknowledge_trial_end: true`) and charges the plan (15.00 USD/month, prorated, when it ends the trial) plus a one-time 20.00 USD setup per local number never charged before, before anything is filed; a declined card files and charges nothing. The 4.00 USD/month messaging add-on starts when the campaign is approved. " +
            "The owner is mailed a receipt with a masked copy of the application; each filing is audit-logged with actor `api`. Test keys and `mock: true` run the whole pipeline on the simulated registry: no gate, no charge, nothing filed, `mock: true` in the answer; a mock registration lets test keys text, never live keys, and a live filing replaces it. " +
            "409 `failed_precondition`: `Filing ends your free trial: send acknowledge_trial_end: true`; a message beginning `Add a payment method` (no card, a canceled subscription, or a trial with no identity check submitted); `Your card was declined`; a registration already in progress or active; `A live registration is on file` (a mock filing over a live registration); the registry's rejection. 500 when the registry is unavailable (nothing is charged)."
        )
        .pipe(capability(fileMessagingRegistration))
    )
    .add(
      HttpApiEndpoint.post("refresh", "/messaging/refresh")
        .addSuccess(refreshMessagingStatus.output.annotations({ examples: [{ messaging: active }] }))
        .annotate(
          OpenApi.Description,
          "Ask the registry for the latest brand and campaign status and move the pipeline forward. A background poller does the same every minute, so calling it is optional. 409 when the registry refuses the request (its message says why); 500 when it is unavailable."
        )
        .pipe(capability(refreshMessagingStatus))
    )
    .add(
      HttpApiEndpoint.post("verifyOtp", "/messaging/otp/verify")
        .setPayload(OtpInput.annotations({ examples: [{ pin: "123456" }] }))
        .addSuccess(
          verifyMessagingOtp.output.annotations({
            examples: [{
              messaging: {
                ...active,
                step: "campaign_pending",
                canText: false,
                campaign: { ...active.campaign!, status: "pending" }
              }
            }]
          })
        )
        .annotate(
          OpenApi.Description,
          "Submit the PIN the registry texted to a sole proprietor's `mobilePhone`; the campaign is then created. 400 for a wrong PIN or one older than 24 hours; after 5 wrong PINs the PIN is void (400) until `POST /messaging/otp/resend` texts a new one. 409 `The registration is not waiting for a PIN`."
        )
        .pipe(capability(verifyMessagingOtp))
    )
    .add(
      HttpApiEndpoint.post("resendOtp", "/messaging/otp/resend")
        .addSuccess(resendMessagingOtp.output.annotations({ examples: [{ messaging: otp }] }))
        .annotate(
          OpenApi.Description,
          "Text a fresh PIN to the sole proprietor's `mobilePhone`. One resend a minute (the filing's own PIN does not count): an earlier repeat is 429 with `Retry-After`. 409 when the registration is not waiting for a PIN."
        )
        .pipe(capability(resendMessagingOtp))
    )
).annotate(OpenApi.Title, "Messaging registration").annotate(
  OpenApi.Description,
  "US texting (10DLC) registration: brand and campaign filing with the registry, and its status."
) {}
