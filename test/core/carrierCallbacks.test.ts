/**
 * The carrier callback use case (core/carrier/receive.ts) with a fake carrier port and fake
 * services that record what reaches them: each event kind goes to its service; what a carrier's
 * retry cannot fix is acknowledged and logged; the port's refusals and Internal failures fail.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Logger, Option, TestClock } from "effect"
import { Calls } from "../../core/calls/service.ts"
import type { CarrierCallEvent } from "../../core/calls/voice.ts"
import { CarrierCallbacks, CarrierEvent } from "../../core/carrier/callbacks.ts"
import { receiveCallback } from "../../core/carrier/receive.ts"
import { Internal, InvalidArgument, NotFound, Unauthenticated } from "../../core/kernel/errors.ts"
import type { InboundMessage, StatusReport } from "../../core/messaging/carrier.ts"
import { Messaging } from "../../core/messaging/service.ts"
import { Registrations } from "../../core/registration/service.ts"

const UNKNOWN_NUMBER = "+15550009999"
const UNSTORABLE = "not a number"

const inbound = (to: string): InboundMessage => ({
  carrierMessageId: `msg-${to}`,
  from: "+13125550100",
  to,
  body: "hi",
  media: []
})
const report: StatusReport = { carrierMessageId: "msg-out", status: "delivered" }
const hangup = (eventId: string): CarrierCallEvent => ({
  _tag: "Hangup",
  eventId,
  occurredAt: "2026-11-24T03:00:30.000Z",
  callControlId: "cc-1",
  callLegId: null,
  callSessionId: "cs-1",
  clientState: null,
  cause: "normal_clearing",
  source: "caller",
  startTime: null,
  endTime: null,
  durationSeconds: null
})

/** A carrier whose signature is the `x-sig: good` header and whose bodies name an event of `events`. */
const fakeCarrier = (events: Record<string, CarrierEvent>, seen: { now: Array<number> }): CarrierCallbacks => ({
  name: "fake",
  parse: ({ headers, rawBody, now }) =>
    Effect.suspend((): Effect.Effect<CarrierEvent, InvalidArgument | Unauthenticated> => {
      seen.now.push(now)
      if (headers["x-sig"] !== "good") return Effect.fail(new Unauthenticated({ message: "bad signature" }))
      const event = events[rawBody]
      return event === undefined
        ? Effect.fail(new InvalidArgument({ message: "not a callback" }))
        : Effect.succeed(event)
    })
})

const events: Record<string, CarrierEvent> = {
  inbound: CarrierEvent.Inbound({ message: inbound("+13122010001") }),
  unknownNumber: CarrierEvent.Inbound({ message: inbound(UNKNOWN_NUMBER) }),
  unstorable: CarrierEvent.Inbound({ message: inbound(UNSTORABLE) }),
  status: CarrierEvent.Status({ report }),
  call: CarrierEvent.Call({ event: hangup("evt-1") }),
  callFails: CarrierEvent.Call({ event: hangup("evt-internal") }),
  brand: CarrierEvent.RegistryChange({ change: { kind: "brand", id: "brand-1" } }),
  brandFails: CarrierEvent.RegistryChange({ change: { kind: "brand", id: "brand-broken" } }),
  ignored: CarrierEvent.Ignored({ eventType: "number_order.completed" })
}

/** Every call the services received, by service, and every log line. */
interface Seen {
  readonly received: Array<InboundMessage>
  readonly statuses: Array<StatusReport>
  readonly calls: Array<CarrierCallEvent>
  readonly changes: Array<{ readonly kind: string; readonly id: string }>
  readonly logs: Array<{ readonly level: string; readonly message: unknown }>
  readonly now: Array<number>
}

/** Only the members the use case may call; any other is a defect, so a test fails loudly. */
const only = <S>(members: Record<string, unknown>): S =>
  new Proxy(members, {
    get: (target, key) => {
      if (typeof key === "string" && !(key in target)) throw new Error(`unexpected service member ${key}`)
      return target[key as string]
    }
  }) as S

const setup = () => {
  const seen: Seen = { received: [], statuses: [], calls: [], changes: [], logs: [], now: [] }
  const services = Layer.mergeAll(
    Layer.succeed(
      Messaging,
      only<Messaging["Type"]>({
        receive: (m: InboundMessage) =>
          Effect.suspend((): Effect.Effect<unknown, NotFound | InvalidArgument> => {
            seen.received.push(m)
            if (m.to === UNKNOWN_NUMBER) {
              return Effect.fail(new NotFound({ message: `${m.to} is not a workspace number` }))
            }
            if (m.to === UNSTORABLE) return Effect.fail(new InvalidArgument({ message: "to is not a phone number" }))
            return Effect.succeed({})
          }),
        applyStatus: (r: StatusReport) => Effect.sync(() => void seen.statuses.push(r)).pipe(Effect.as(Option.none()))
      })
    ),
    Layer.succeed(
      Calls,
      only<Calls["Type"]>({
        onCarrierEvent: (e: CarrierCallEvent) =>
          Effect.suspend(() => {
            seen.calls.push(e)
            return e.eventId === "evt-internal"
              ? Effect.fail(new Internal({ message: "store unavailable" }))
              : Effect.void
          })
      })
    ),
    Layer.succeed(
      Registrations,
      only<Registrations["Type"]>({
        onRegistryChange: (c: { kind: string; id: string }) =>
          Effect.suspend(() => {
            seen.changes.push(c)
            return c.id === "brand-broken"
              ? Effect.fail(new Internal({ message: "registry unavailable" }))
              : Effect.succeedNone
          })
      })
    ),
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ logLevel, message }) => void seen.logs.push({ level: logLevel.label, message }))
    )
  )
  const receive = (rawBody: string, signature = "good") =>
    receiveCallback(fakeCarrier(events, seen), { headers: { "x-sig": signature }, rawBody }).pipe(
      Effect.provide(services),
      Effect.exit
    )
  return { seen, receive }
}

const routed = (seen: Seen) => [seen.received.length, seen.statuses.length, seen.calls.length, seen.changes.length]

describe("receiveCallback", () => {
  it.effect("each event reaches its service: inbound -> receive, status -> applyStatus, call -> onCarrierEvent, registry -> onRegistryChange", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      assert.isTrue(Exit.isSuccess(yield* receive("inbound")))
      assert.deepStrictEqual(seen.received, [inbound("+13122010001")])
      assert.isTrue(Exit.isSuccess(yield* receive("status")))
      assert.deepStrictEqual(seen.statuses, [report])
      assert.isTrue(Exit.isSuccess(yield* receive("call")))
      assert.deepStrictEqual(seen.calls, [hangup("evt-1")])
      assert.isTrue(Exit.isSuccess(yield* receive("brand")))
      assert.deepStrictEqual(seen.changes, [{ kind: "brand", id: "brand-1" }])
      assert.deepStrictEqual(routed(seen), [1, 1, 1, 1])
      assert.deepStrictEqual(seen.logs, [])
    }))

  it.effect("an event about nothing we act on is acknowledged and reaches no service", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      assert.isTrue(Exit.isSuccess(yield* receive("ignored")))
      assert.deepStrictEqual(routed(seen), [0, 0, 0, 0])
    }))

  it.effect("an inbound message for a number we do not hold is acknowledged and logged, not failed", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      assert.isTrue(Exit.isSuccess(yield* receive("unknownNumber")))
      assert.deepStrictEqual(seen.received.map((m) => m.to), [UNKNOWN_NUMBER])
      assert.deepStrictEqual(seen.logs, [{
        level: "WARN",
        message: ["Inbound message for an unknown number", `${UNKNOWN_NUMBER} is not a workspace number`]
      }])
    }))

  it.effect("an inbound message that cannot be stored is acknowledged and logged", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      assert.isTrue(Exit.isSuccess(yield* receive("unstorable")))
      assert.deepStrictEqual(seen.logs, [{
        level: "WARN",
        message: ["Inbound message could not be stored", "to is not a phone number"]
      }])
    }))

  it.effect("a registration that cannot move forward is acknowledged and logged", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      assert.isTrue(Exit.isSuccess(yield* receive("brandFails")))
      assert.deepStrictEqual(seen.changes, [{ kind: "brand", id: "brand-broken" }])
      assert.deepStrictEqual(seen.logs, [
        {
          level: "WARN",
          message: ["10DLC webhook: the registration could not be moved forward", "registry unavailable"]
        }
      ])
    }))

  it.effect("a call step that fails Internal fails, so the carrier delivers it again", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      assert.deepStrictEqual(yield* receive("callFails"), Exit.fail(new Internal({ message: "store unavailable" })))
      assert.strictEqual(seen.calls.length, 1)
    }))

  it.effect("the port's refusals fail as they are, and nothing reaches a service", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      assert.deepStrictEqual(
        yield* receive("inbound", "forged"),
        Exit.fail(new Unauthenticated({ message: "bad signature" }))
      )
      assert.deepStrictEqual(yield* receive("{not json"), Exit.fail(new InvalidArgument({ message: "not a callback" })))
      assert.deepStrictEqual(routed(seen), [0, 0, 0, 0])
    }))

  it.effect("the port is given the time from the Clock, for the signature's freshness", () =>
    Effect.gen(function*() {
      const { seen, receive } = setup()
      yield* TestClock.setTime(1_790_000_000_000)
      yield* receive("ignored")
      assert.deepStrictEqual(seen.now, [1_790_000_000_000])
    }))
})
