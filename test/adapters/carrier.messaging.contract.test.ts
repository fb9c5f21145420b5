/**
 * The messaging carrier port (core/messaging/carrier.ts), one suite run over each adapter: the
 * simulator over the memory stores, and Telnyx over the fake Telnyx (test/support/fakeTelnyx.ts).
 * A number on the carrier's account sends SMS and MMS (accepted, `queued`, each message its own
 * id); any other `from` is `rejected` with the carrier's words; a carrier that cannot answer is
 * `unavailable`. What only one adapter does (Telnyx's request body, retries, 10DLC delivery
 * failures) stays in its own tests.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SimulatedCarrier from "../../adapters/carrier/simulated.ts"
import * as TelnyxCarrier from "../../adapters/carrier/telnyx.ts"
import { Carrier, type OutboundMessage } from "../../core/messaging/carrier.ts"
import { fakeAccount, fakeOutage, type Harness, simulated } from "../support/carrierContract.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"

/** One adapter, fresh for each test, and how a number gets on its carrier account. */
interface Subject {
  readonly carrier: Carrier
  readonly onAccount: (e164: string) => Effect.Effect<void>
}

const fake = useFakeTelnyx()

const simulator: Harness<Subject> = {
  name: "simulator",
  make: simulated(SimulatedCarrier.layer, (held) => Effect.map(Carrier, (carrier) => ({ carrier, onAccount: held })))
}

const telnyx: Harness<Subject> = {
  name: "Telnyx",
  make: Effect.sync(() => ({
    carrier: TelnyxCarrier.make(fakeAccount(fake())),
    // Registered: a US long code texts only once on an active 10DLC campaign (the service's gate, before the carrier).
    onAccount: (e164: string) => Effect.sync(() => fake().addNumber(e164, { registered: true }))
  })),
  outage: fakeOutage(fake)
}

const FROM = "+13125550100"
const SMS: OutboundMessage = { from: FROM, to: "+13125550199", body: "Hello from Switchboard", mediaUrls: [] }
const MMS: OutboundMessage = { ...SMS, body: "A picture", mediaUrls: ["https://media.example.com/a.jpg?sig=1"] }

const contract = (harness: Harness<Subject>) =>
  describe(`Carrier (${harness.name})`, () => {
    it.live("a number on the account sends an SMS: accepted, queued, with the carrier's id; each message its own", () =>
      Effect.gen(function*() {
        const { carrier, onAccount } = yield* harness.make
        yield* onAccount(FROM)
        const first = yield* carrier.send(SMS)
        const second = yield* carrier.send(SMS)
        assert.strictEqual(first.status, "queued")
        assert.strictEqual(second.status, "queued")
        assert.isNotEmpty(first.carrierMessageId)
        assert.notStrictEqual(first.carrierMessageId, second.carrierMessageId)
      }))

    it.live("an MMS (media URLs) from a number on the account is accepted and queued", () =>
      Effect.gen(function*() {
        const { carrier, onAccount } = yield* harness.make
        yield* onAccount(FROM)
        const accepted = yield* carrier.send(MMS)
        assert.strictEqual(accepted.status, "queued")
        assert.isNotEmpty(accepted.carrierMessageId)
      }))

    it.live("a `from` not on the account is `rejected`, in the carrier's words naming it", () =>
      Effect.gen(function*() {
        const { carrier, onAccount } = yield* harness.make
        yield* onAccount(FROM)
        for (const message of [SMS, MMS]) {
          const error = yield* Effect.flip(carrier.send({ ...message, from: "+13125550111" }))
          assert.strictEqual(error._tag, "CarrierError")
          assert.strictEqual(error.reason, "rejected")
          assert.include(error.message, "+13125550111")
        }
      }))

    if (harness.outage !== undefined) {
      const outage = harness.outage
      it.live("a carrier that keeps failing is `unavailable`", () =>
        Effect.gen(function*() {
          const { carrier, onAccount } = yield* harness.make
          yield* onAccount(FROM)
          outage()
          const error = yield* Effect.flip(carrier.send(SMS))
          assert.strictEqual(error.reason, "unavailable")
        }))
    }
  })

contract(simulator)
contract(telnyx)
