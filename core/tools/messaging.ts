/** US texting (10DLC) registration capabilities (SPEC "Messaging registration"). */
import { Effect } from "effect"
import { OtpInput, RegistrationRequest, Texting } from "../texting/service.ts"
import { NoInput, tool } from "./tool.ts"

export const getMessagingStatus = tool({
  name: "get_messaging_status",
  description: "Where the workspace's US texting (10DLC) registration stands: `step`, whether it can text, the brand and campaign reviews.",
  input: NoInput,
  example: {},
  scope: "numbers:manage",
  run: (p) => Effect.flatMap(Texting, (t) => t.status(p))
})

export const fileMessagingRegistration = tool({
  name: "file_messaging_registration",
  description:
    "File the brand (`business`) and stage the campaign (`campaign`, defaults applied) with the 10DLC registry. With a live key and no `mock`, a purchase: ends a trial (send `acknowledge_trial_end: true`) and charges the plan and a 20 USD setup per local number not charged before. Test keys and `mock: true` run the pipeline on the simulated registry with no charge.",
  input: RegistrationRequest,
  example: {
    business: {
      displayName: "Acme Plumbing",
      companyName: "Acme Plumbing LLC",
      ein: "12-3456789",
      email: "owner@acme.example",
      vertical: "PROFESSIONAL",
      street: "1 Main St",
      city: "Springfield",
      state: "IL",
      postalCode: "62701"
    },
    acknowledge_trial_end: true
  },
  scope: "numbers:manage",
  run: (p, input) => Effect.flatMap(Texting, (t) => t.file(p, input))
})

export const refreshMessagingStatus = tool({
  name: "refresh_messaging_status",
  description: "Ask the registry for the latest brand and campaign review and move the registration forward.",
  input: NoInput,
  example: {},
  scope: "numbers:manage",
  run: (p) => Effect.flatMap(Texting, (t) => t.refresh(p))
})

export const verifyMessagingOtp = tool({
  name: "verify_messaging_otp",
  description: "Submit the PIN the registry texted to a sole proprietor's mobile (valid 24 hours); the campaign is then created.",
  input: OtpInput,
  example: { pin: "123456" },
  scope: "numbers:manage",
  run: (p, input) => Effect.flatMap(Texting, (t) => t.verifyOtp(p, input))
})

export const resendMessagingOtp = tool({
  name: "resend_messaging_otp",
  description: "Text a fresh PIN to the sole proprietor's mobile; one resend a minute.",
  input: NoInput,
  example: {},
  scope: "numbers:manage",
  run: (p) => Effect.flatMap(Texting, (t) => t.resendOtp(p))
})
