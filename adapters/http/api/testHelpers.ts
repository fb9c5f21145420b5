/** CONTRACT.md "Test helpers": drive the simulated carrier end to end. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Activity } from "../../../core/conversations/model.ts"
import { SimulatedInboundInput, SimulatedStatusInput } from "../../../core/messaging/simulator.ts"
import { NotFound } from "./errors.ts"
import { activity, contact, conversation } from "./examples.ts"
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
            examples: [{ message: { ...activity, direction: "inbound", deliveryStatus: "received", body: inbound.body }, conversationId: conversation.id, contactId: contact.id }]
          }),
          { status: 201 }
        )
        .addError(NotFound)
        .annotate(OpenApi.Description, "Simulate an inbound SMS/MMS to workspace number `to`: it files the message in a thread, creating the contact and thread when new, as a carrier's delivery would. Test keys only.")
        .pipe(requires("messages:send", "conversations:write"))
    )
    .add(
      HttpApiEndpoint.post("deliveryStatus", "/delivery-status")
        .setPayload(
          SimulatedStatusInput.annotations({ examples: [{ activityId: activity.id, status: "delivered" }] })
        )
        .addSuccess(Schema.Struct({ message: Activity }).annotations({ examples: [{ message: { ...activity, deliveryStatus: "delivered" } }] }))
        .addError(NotFound)
        .annotate(OpenApi.Description, "Simulate a carrier status report for an outbound message. Test keys only.")
        .pipe(requires("messages:send"))
    )
    .prefix("/test-helpers")
)
  .annotate(OpenApi.Title, "Test helpers")
  .annotate(OpenApi.Description, "Drive the simulated carrier end to end. Present when TEST_HELPERS is on; test keys only (live keys get 403).") {}
