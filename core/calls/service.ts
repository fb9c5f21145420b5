/**
 * The Calls service, assembled from its parts:
 * - history.ts: call history (`GET /calls`) and the writing of a finished call;
 * - inbound.ts: inbound calls routed by the number and the agent (core/agent/hours.ts), and the
 *   `inbound-calls` test helper;
 * - outbound.ts: the AI agent's outbound calls (`POST /calls`);
 * - carrierEvents.ts: a real carrier's calls (`onCarrierEvent`, Telnyx webhooks), step by step.
 * A call's live signals (`call.ringing`, `call.answered`, `call.forwarded`, flow events) commit in
 * their own transaction as the call arrives; the finished call's activity, its thread and the
 * events that report it (events.ts) commit together in one more.
 */
import { Context, Effect, Layer } from "effect"
import { makeCarrierEvents } from "./carrierEvents.ts"
import { makeHistory } from "./history.ts"
import { makeInbound } from "./inbound.ts"
import { makeOutbound } from "./outbound.ts"

export type { InboundCall } from "./inbound.ts"

export const make = Effect.gen(function*() {
  const history = yield* makeHistory
  const inbound = yield* makeInbound(history)
  const outbound = yield* makeOutbound(history)
  const carrier = yield* makeCarrierEvents(history, inbound)
  return {
    list: history.list,
    place: outbound.place,
    receive: inbound.receive,
    recordCall: history.recordCall,
    simulateInbound: inbound.simulateInbound,
    onCarrierEvent: carrier.onCarrierEvent
  } as const
})

export class Calls extends Context.Tag("core/Calls")<Calls, Effect.Effect.Success<typeof make>>() {}
export const layer = Layer.effect(Calls, make)
