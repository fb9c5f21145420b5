/** US texting (10DLC) registration capabilities (SPEC "Messaging registration"). */
import { Effect } from "effect"
import { FailedPrecondition, Internal, ResourceExhausted } from "../kernel/errors.ts"
import { FilingAnswer, MessagingAnswer, OtpInput, RegistrationRequest, Registrations } from "../registration/service.ts"
import { NoInput, read, tool } from "./tool.ts"

export const getMessagingStatus = tool({
  name: "messaging_status",
  title: "Get the texting registration status",
  description:
    "Where the workspace's US texting (10DLC) registration stands: `step` (`none` before any filing), whether live keys can text (`canText`), and the brand and campaign reviews with any failure reasons. Reads what is stored; messaging_refresh asks the registry for news.",
  input: NoInput,
  output: MessagingAnswer,
  example: {},
  scope: "numbers:manage",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p) => Effect.flatMap(Registrations, (t) => t.status(p))
})

export const fileMessagingRegistration = tool({
  name: "messaging_register",
  title: "File the texting registration",
  description:
    "File the business (`business`) with the US 10DLC campaign registry and stage its campaign (`campaign`, defaults applied), created once the brand is accepted; needed before live keys can text. With a live key and no `mock` this is a purchase: it ends a free trial (send `acknowledge_trial_end: true`) and charges the plan and a 20.00 USD setup per local number not charged before; confirm with the user first. Test keys and `mock: true` run the pipeline on the simulated registry with no charge. Follow it with messaging_status or messaging_refresh.",
  input: RegistrationRequest,
  output: FilingAnswer,
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
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: false,
  errors: [FailedPrecondition, Internal],
  run: (p, input) => Effect.flatMap(Registrations, (t) => t.file(p, input))
})

export const refreshMessagingStatus = tool({
  name: "messaging_refresh",
  title: "Refresh the texting registration",
  description:
    "Ask the registry for the latest brand and campaign review and move the registration forward; once the campaign is approved, assign the workspace's local numbers to it and read where their assignments stand (a background poller does the same every minute).",
  input: NoInput,
  output: MessagingAnswer,
  example: {},
  scope: "numbers:manage",
  hints: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
  idempotencyKey: false,
  errors: [FailedPrecondition, Internal],
  run: (p) => Effect.flatMap(Registrations, (t) => t.refresh(p))
})

export const verifyMessagingOtp = tool({
  name: "messaging_verify_otp",
  title: "Verify the sole proprietor's PIN",
  description:
    "Submit the `pin` the registry texted to a sole proprietor's mobile (valid 24 hours, 5 tries); the campaign is then created. Use only when messaging_status shows `step` `brand_otp_pending`.",
  input: OtpInput,
  output: MessagingAnswer,
  example: { pin: "123456" },
  scope: "numbers:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: false,
  errors: [FailedPrecondition, Internal],
  run: (p, input) => Effect.flatMap(Registrations, (t) => t.verifyOtp(p, input))
})

export const resendMessagingOtp = tool({
  name: "messaging_resend_otp",
  title: "Resend the sole proprietor's PIN",
  description: "Have the registry text a fresh PIN to the sole proprietor's mobile; one resend a minute.",
  input: NoInput,
  output: MessagingAnswer,
  example: {},
  scope: "numbers:manage",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotencyKey: false,
  errors: [FailedPrecondition, ResourceExhausted, Internal],
  run: (p) => Effect.flatMap(Registrations, (t) => t.resendOtp(p))
})
