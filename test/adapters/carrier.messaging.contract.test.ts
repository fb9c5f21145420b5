/**
 * The messaging carrier port (core/messaging/carrier.ts), one suite run over each adapter: the
 * simulator over the memory stores, and Telnyx over the fake Telnyx (test/support/fakeTelnyx.ts).
 * A number on the carrier's account sends SMS and MMS (accepted, `queued`, each message its own
 * id); any other `from` is `rejected` with the carrier's words; a carrier that cannot answer is
 * `unavailable`; the keywords a carrier answers itself are keywords of the service; a carrier that
 * keeps its own opt-outs (Telnyx's block rules) refuses a recipient who opted out with it as
 * `opted_out`, so the service records their opt-out. What only one adapter does (Telnyx's request body, retries, 10DLC delivery
 * failures) stays in its own tests.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as SimulatedCarrier from "../../adapters/carrier/simulated.ts"
import * as TelnyxCarrier from "../../adapters/carrier/telnyx.ts"
import { Carrier, type OutboundMessage } from "../../core/messaging/carrier.ts"
import { carrierWordOf, keywordOf } from "../../core/optouts/keywords.ts"
import { fakeAccount, fakeOutage, type Harness, simulated } from "../support/carrierContract.ts"
import { useFakeTelnyx } from "../support/fakeTelnyx.ts"

/** One adapter, fresh for each test, and how a number gets on its carrier account. */
interface Subject {
  readonly carrier: Carrier
  readonly onAccount: (e164: string) => Effect.Effect<void>
}

/** `optOut`: the recipient opts out with the carrier itself, texting `number` (only a carrier that keeps opt-outs). */
interface MessagingHarness extends Harness<Subject> {
  readonly optOut?: (recipient: string, number: string) => void
}

const fake = useFakeTelnyx()

const simulator: MessagingHarness = {
  name: "simulator",
  make: simulated(SimulatedCarrier.layer, (held) => Effect.map(Carrier, (carrier) => ({ carrier, onAccount: held })))
}

const telnyx: MessagingHarness = {
  name: "Telnyx",
  make: Effect.sync(() => ({
    carrier: TelnyxCarrier.make(fakeAccount(fake())),
    // Registered: a US long code texts only once on an active 10DLC campaign (the service's gate, before the carrier).
    onAccount: (e164: string) => Effect.sync(() => fake().addNumber(e164, { registered: true }))
  })),
  outage: fakeOutage(fake),
  // A block rule on the number's messaging profile (advanced-opt-in-out, "Default behavior").
  optOut: (recipient, number) => void fake().inboundText({ from: recipient, to: number, text: "STOP" })
}

const FROM = "+13125550100"
const SMS: OutboundMessage = { from: FROM, to: "+13125550199", body: "Hello from Switchboard", mediaUrls: [] }
const MMS: OutboundMessage = { ...SMS, body: "A picture", mediaUrls: ["https://media.example.com/a.jpg?sig=1"] }

const contract = (harness: MessagingHarness) =>
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

    it.live("the keywords it answers itself are keywords of the service, as the carrier reads a text", () =>
      Effect.gen(function*() {
        const { carrier } = yield* harness.make
        for (const word of carrier.answersKeywords) {
          assert.strictEqual(carrierWordOf(word), word)
          assert.strictEqual(keywordOf(word)?.word, word)
        }
      }))

    if (harness.optOut !== undefined) {
      const optOut = harness.optOut
      it.live("a recipient who opted out with the carrier: a text to them is `opted_out`; others are still accepted", () =>
        Effect.gen(function*() {
          const { carrier, onAccount } = yield* harness.make
          yield* onAccount(FROM)
          optOut(SMS.to, FROM)
          for (const message of [SMS, MMS]) {
            const error = yield* Effect.flip(carrier.send(message))
            assert.strictEqual(error.reason, "opted_out")
          }
          const other = yield* carrier.send({ ...SMS, to: "+13125550198" })
          assert.strictEqual(other.status, "queued")
        }))
    }

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
