/** CONTRACT.md "Test helpers": drive the simulated carrier end to end. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { SimulatedCallInput, SimulatedCallResult } from "../../../core/calls/model.ts"
import { Activity } from "../../../core/conversations/model.ts"
import {
  ClockAnswer,
  ClockInput,
  RegistryOutcomeInput,
  SentOtpAnswer,
  SimulatedInboundInput,
  SimulatedStatusInput
} from "../../../core/messaging/simulator.ts"
import { NotFound } from "./errors.ts"
import { activity, call, contact, conversation } from "./examples.ts"
import { publicGroup, requires } from "./shared.ts"

const inbound = { from: conversation.participants[0], to: conversation.numberE164, body: "Is the table ready?" }

export class TestHelpersGroup extends publicGroup(
  HttpApiGroup.make("testHelpers")
    .add(
      HttpApiEndpoint.post("inboundMessage", "/inbound-messages")
        .setPayload(
          SimulatedInboundInput.annotations({ examples: [inbound] })
        )
        .addSuccess(
          Schema.Struct({ message: Activity, conversationId: Schema.UUID, contactId: Schema.UUID }).annotations({
            examples: [{
              message: { ...activity, direction: "inbound", deliveryStatus: "received", body: inbound.body },
              conversationId: conversation.id,
              contactId: contact.id
            }]
          }),
          { status: 201 }
        )
        .addError(NotFound)
        .annotate(
          OpenApi.Description,
          "Simulate an inbound SMS/MMS to workspace number `to`: it files the message in a thread, creating the contact and thread when new, as a carrier's delivery would. Test keys only."
        )
        .pipe(requires("messages:send", "conversations:write"))
    )
    .add(
      HttpApiEndpoint.post("inboundCall", "/inbound-calls")
        .setPayload(
          SimulatedCallInput.annotations({
            examples: [{ from: call.from, to: call.to, scenario: "answered", durationSeconds: 60 }]
          })
        )
        .addSuccess(SimulatedCallResult.annotations({ examples: [{ call, carrierCallId: call.carrierCallId }] }), {
          status: 201
        })
        .addError(NotFound)
        .annotate(
          OpenApi.Description,
          "Simulate an inbound call from `from` to workspace number `to`, played through its whole event sequence and filed in the caller's thread (a placeholder contact for an unknown caller). " +
            "`from` null is a caller who withheld their number: routed like any other, every `call.*` event and the call carry `from` null, and the call lands in the one thread the number keeps for withheld callers (`contactName` `Withheld caller`, `participants` empty, no contact; texting into it is a 409). `from` equal to `to` is a 400. `scenario`: " +
            "`answered`, answered as the number's routing says (the AI agent; in `app` mode the first member of the workspace with a `phone`, oldest first, as `memberUid`, and with no member with a phone the caller leaves a voicemail; or the outside line of `forward`; a number routed to voicemail takes a voicemail): `call.ringing`, `call.answered` or `call.forwarded`, `call.completed`, then (not for a forwarded call) `call.recording.completed`, `call.transcript.completed`, `call.summary.completed`; " +
            "`missed`, nobody answers: `call.ringing`, (`call.forwarded`,) `call.missed`; " +
            "`voicemail`, nobody answers and the caller leaves a voicemail: `call.ringing`, (`call.forwarded`,) `call.missed`, `call.voicemail.completed`, `call.transcript.completed`, `call.summary.completed`; " +
            "`flow_completed`, the call passes a phone-menu call flow (`call.flow.started`, `call.flow.completed`) that hands it to the number's routing, then as `answered`; " +
            "`flow_aborted`, the caller hangs up in the menu: `call.ringing`, `call.flow.started`, `call.flow.aborted`, `call.missed`. " +
            "`durationSeconds` (1 to 14400) defaults to 60 for a conversation, 20 for a voicemail, 0 for a missed call. Every event carries the answer's `carrierCallId`. Test keys only."
        )
        .pipe(requires("conversations:write"))
    )
    .add(
      HttpApiEndpoint.post("deliveryStatus", "/delivery-status")
        .setPayload(
          SimulatedStatusInput.annotations({ examples: [{ activityId: activity.id, status: "delivered" }] })
        )
        .addSuccess(
          Schema.Struct({ message: Activity }).annotations({
            examples: [{ message: { ...activity, deliveryStatus: "delivered" } }]
          })
        )
        .addError(NotFound)
        .annotate(OpenApi.Description, "Simulate a carrier status report for an outbound message. Test keys only.")
        .pipe(requires("messages:send"))
    )
    .add(
      HttpApiEndpoint.post("registry", "/registry")
        .setPayload(RegistryOutcomeInput.annotations({ examples: [{ brand: "otp", campaign: "approve" }] }))
        .addSuccess(
          Schema.Struct({ outcome: RegistryOutcomeInput }).annotations({
            examples: [{ outcome: { brand: "reject", reasons: ["EIN does not match the company name"] } }]
          })
        )
        .addError(NotFound)
        .annotate(
          OpenApi.Description,
          "The simulated registry's next review of this workspace: `brand` `accept` (default), `reject` or `otp` (a sole proprietor then gets a PIN, readable at `GET /test-helpers/otp`); `campaign` `approve` (default) or `reject`; `reasons` for a rejection. Each part is used by the next filing of its kind. Applies to mock-mode filings, and to every filing when the server runs the simulated carrier. Test keys only."
        )
        .pipe(requires("numbers:manage"))
    )
    .add(
      HttpApiEndpoint.get("otp", "/otp")
        .addSuccess(SentOtpAnswer.annotations({ examples: [{ pin: "493817", sentAt: "2026-08-17T10:00:00.000Z" }] }))
        .addError(NotFound)
        .annotate(
          OpenApi.Description,
          "The last PIN the simulated registry texted to this workspace's sole proprietor (404 before any). Test keys only."
        )
        .pipe(requires("numbers:manage"))
    )
    .add(
      HttpApiEndpoint.post("clock", "/clock")
        .setPayload(ClockInput.annotations({ examples: [{ advanceSeconds: 86_400 }] }))
        .addSuccess(
          ClockAnswer.annotations({ examples: [{ clock: { now: "2026-08-18T10:00:00.000Z", offsetSeconds: 86_400 } }] })
        )
        .addError(NotFound)
        .annotate(
          OpenApi.Description,
          "Moves this workspace's clock forward by `advanceSeconds` (1 to one year), like a Stripe test clock. It is read by the sole-proprietor PIN's 24-hour expiry, the one-a-minute resend limit, the idempotency window of test keys, the workspace's webhook retries, scheduled messages, broadcasts and quiet hours (due on the moved clock at the workers' next poll); timestamps and rate limits keep real time. Test keys only."
        )
        .pipe(requires("numbers:manage"))
    )
    .prefix("/test-helpers")
)
  .annotate(OpenApi.Title, "Test helpers")
  .annotate(
    OpenApi.Description,
    "Drive the simulated carrier end to end. Present when TEST_HELPERS is on; test keys only (live keys get 403)."
  )
{}
