/**
 * Telnyx's carrier callback port (adapters/carrier/telnyxCallbacks.ts): every kind of Telnyx webhook
 * read as its CarrierEvent, call events and 10DLC changes included; a call event without its fields
 * acknowledged as ignored; signature and freshness failures as Unauthenticated, bodies that are not
 * Telnyx events as InvalidArgument.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import * as TelnyxCallbacks from "../../adapters/carrier/telnyxCallbacks.ts"
import type { CarrierEvent } from "../../core/carrier/callbacks.ts"
import {
  brandUpdatePayload,
  campaignUpdatePayload,
  createEd25519Signer,
  inboundPayload,
  statusPayload
} from "../support/fakeTelnyx.ts"

const signer = createEd25519Signer()
const port = TelnyxCallbacks.make({ publicKey: Redacted.make(signer.publicKey) })
const NOW = Date.parse("2026-11-24T03:00:30.000Z")

const envelope = (eventType: string, payload: unknown) =>
  JSON.stringify({
    data: { record_type: "event", id: "evt-1", event_type: eventType, occurred_at: "2026-11-24T03:00:30.000Z", payload }
  })

/** A body signed as Telnyx signs it, `skewSeconds` away from NOW. */
const signed = (
  rawBody: string,
  options: { readonly skewSeconds?: number; readonly signedBy?: typeof signer } = {}
) => {
  const timestamp = String(Math.floor(NOW / 1000) + (options.skewSeconds ?? 0))
  return {
    rawBody,
    headers: {
      "content-type": "application/json",
      "telnyx-timestamp": timestamp,
      "telnyx-signature-ed25519": (options.signedBy ?? signer).sign(timestamp, rawBody)
    },
    now: NOW
  }
}

const parse = (eventType: string, payload: unknown) => port.parse(signed(envelope(eventType, payload)))
const tagOf = (event: CarrierEvent) => event._tag

describe("Telnyx carrier callbacks", () => {
  it("answers to /v1/carrier/telnyx", () => {
    assert.strictEqual(port.name, "telnyx")
  })

  it.effect("messaging events: message.received is Inbound, message.sent and message.finalized are Status", () =>
    Effect.gen(function*() {
      const inbound = yield* parse(
        "message.received",
        inboundPayload({ id: "msg-1", from: "+13125550100", to: "+13122010001", text: "hi" })
      )
      assert.deepStrictEqual(inbound._tag === "Inbound" ? inbound.message : null, {
        carrierMessageId: "msg-1",
        from: "+13125550100",
        to: "+13122010001",
        body: "hi",
        media: []
      })
      for (const type of ["message.sent", "message.finalized"]) {
        const status = yield* parse(type, statusPayload({ id: "msg-2", status: "delivered" }))
        assert.deepStrictEqual(status._tag === "Status" ? status.report : null, {
          carrierMessageId: "msg-2",
          status: "delivered",
          optedOut: false
        })
      }
    }))

  it.effect("a call event is Call, with the event telnyxCallWebhooks.ts reads", () =>
    Effect.gen(function*() {
      const event = yield* parse("call.hangup", {
        call_control_id: "cc-1",
        call_leg_id: "leg-1",
        call_session_id: "cs-1",
        hangup_cause: "normal_clearing",
        hangup_source: "caller",
        start_time: "2026-11-24T03:00:00.000Z"
      })
      assert.strictEqual(event._tag, "Call")
      if (event._tag === "Call") {
        assert.deepInclude(event.event, {
          _tag: "Hangup",
          eventId: "evt-1",
          callSessionId: "cs-1",
          cause: "normal_clearing",
          durationSeconds: 30
        })
      }
    }))

  it.effect("a 10DLC brand or campaign update is RegistryChange, naming it", () =>
    Effect.gen(function*() {
      const brand = yield* parse("10dlc.brand.update", brandUpdatePayload("brand-1"))
      assert.deepStrictEqual(brand._tag === "RegistryChange" ? brand.change : null, { kind: "brand", id: "brand-1" })
      const campaign = yield* parse("10dlc.campaign.update", campaignUpdatePayload("campaign-1", "brand-1"))
      assert.deepStrictEqual(campaign._tag === "RegistryChange" ? campaign.change : null, {
        kind: "campaign",
        id: "campaign-1"
      })
    }))

  it.effect("other events, and a call event without the fields it needs, are Ignored", () =>
    Effect.gen(function*() {
      const other = yield* parse("number_order.completed", { id: "order-1" })
      assert.deepStrictEqual(other._tag === "Ignored" ? other.eventType : null, "number_order.completed")
      assert.strictEqual(tagOf(yield* parse("call.hangup", { hangup_cause: "normal_clearing" })), "Ignored")
      assert.strictEqual(tagOf(yield* parse("10dlc.brand.update", { brandName: "Acme" })), "Ignored")
    }))

  it.effect("a wrong key, a tampered body, a missing header or a stale timestamp is Unauthenticated", () =>
    Effect.gen(function*() {
      const body = envelope(
        "message.received",
        inboundPayload({ from: "+13125550100", to: "+13122010001", text: "forged" })
      )
      const good = signed(body)
      const { "telnyx-signature-ed25519": _omit, ...unsigned } = good.headers
      for (
        const request of [
          signed(body, { signedBy: createEd25519Signer() }),
          { ...good, rawBody: body.replace("forged", "FORGED") },
          { ...good, headers: unsigned },
          signed(body, { skewSeconds: -1000 })
        ]
      ) {
        const exit = yield* Effect.exit(port.parse(request))
        assert.isTrue(
          Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag === "Unauthenticated",
          JSON.stringify(exit)
        )
      }
    }))

  it.effect("a signed body that is not a Telnyx event, or a messaging payload without its fields, is InvalidArgument", () =>
    Effect.gen(function*() {
      for (
        const rawBody of [
          "{not json",
          JSON.stringify({ event_type: "message.received" }),
          envelope("message.received", { id: "msg-1" })
        ]
      ) {
        const exit = yield* Effect.exit(port.parse(signed(rawBody)))
        assert.isTrue(
          Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag === "InvalidArgument",
          JSON.stringify(exit)
        )
      }
    }))
})
