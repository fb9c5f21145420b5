/**
 * The Telnyx carrier adapter and webhook verifier against the fake Telnyx (test/support/fakeTelnyx.ts),
 * over real HTTP and real time: send mapping, 4xx rejections, bounded retries of 429/5xx, timeouts,
 * malformed bodies; Ed25519 webhook verification and parsing. The port's promises (who may send)
 * are test/adapters/carrier.messaging.contract.test.ts, run here and on the simulator.
 */
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import { createServer } from "node:http"
import * as TelnyxCarrier from "../../adapters/carrier/telnyx.ts"
import * as TelnyxClient from "../../adapters/carrier/telnyxClient.ts"
import { type TelnyxWebhookError, verifyAndParse } from "../../adapters/carrier/telnyxWebhooks.ts"
import { Carrier, type CarrierError, type OutboundMessage } from "../../core/messaging/carrier.ts"
import {
  blockedByStop,
  createEd25519Signer,
  type FakeTelnyx,
  inboundPayload,
  NOT_10DLC_REGISTERED,
  startFakeTelnyx,
  statusPayload
} from "../support/fakeTelnyx.ts"

const PROFILE = "40017f8e-0000-4000-8000-000000000001"
const SMS: OutboundMessage = { from: "+15550001111", to: "+15550002222", body: "Hello from Switchboard", mediaUrls: [] }
const MMS: OutboundMessage = {
  from: "+15550001111",
  to: "+15550002222",
  body: "A picture",
  mediaUrls: ["https://media.example.com/a.jpg?sig=1", "https://media.example.com/b.png?sig=2"]
}

let fake: FakeTelnyx
beforeAll(async () => {
  fake = await startFakeTelnyx()
})
afterAll(async () => {
  await fake.stop()
})
beforeEach(() => {
  fake.reset()
  // Telnyx sends only from numbers on the account, and US texts from 10DLC numbers assigned to an active campaign.
  fake.addNumber(SMS.from, { registered: true })
})

const send = (message: OutboundMessage, config: Partial<TelnyxClient.TelnyxConfig> = {}) =>
  Effect.gen(function*() {
    const carrier = yield* Carrier
    return yield* carrier.send(message)
  }).pipe(
    Effect.provide(
      TelnyxCarrier.layer({
        apiKey: Redacted.make(fake.apiKey),
        messagingProfileId: PROFILE,
        baseUrl: fake.baseUrl,
        ...config
      })
    )
  )

const sendFails = (message: OutboundMessage, config: Partial<TelnyxClient.TelnyxConfig> = {}) =>
  Effect.gen(function*() {
    const started = Date.now()
    const exit = yield* Effect.exit(send(message, config))
    const ms = Date.now() - started
    // A failure, never a defect or interruption.
    assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Fail", `expected a CarrierError, got ${String(exit)}`)
    const error = (exit as Exit.Failure<never, CarrierError>).cause as { error: CarrierError }
    assert.strictEqual(error.error._tag, "CarrierError")
    assert.notInclude(error.error.message, fake.apiKey)
    return { error: error.error, ms }
  })

describe("Telnyx carrier: send", () => {
  it.live("a 10DLC number not assigned to an active campaign: accepted, then failed with 40010 as Telnyx reports it", () =>
    Effect.gen(function*() {
      fake.addNumber("+15550004444")
      const accepted = yield* send({ ...SMS, from: "+15550004444" })
      assert.strictEqual(accepted.status, "failed")
      const message = fake.messages.get(accepted.carrierMessageId!)!
      assert.deepStrictEqual(message["errors"], [NOT_10DLC_REGISTERED])
      assert.strictEqual((message["to"] as Array<{ status: string }>)[0]!.status, "delivery_failed")
      // A toll-free line is not 10DLC: no campaign needed.
      fake.addNumber("+18885550100")
      assert.strictEqual((yield* send({ ...SMS, from: "+18885550100" })).status, "queued")
    }))

  it.live("posts the documented body with the bearer key and maps {data} to Accepted", () =>
    Effect.gen(function*() {
      const accepted = yield* send(SMS)
      assert.strictEqual(fake.requests.length, 1)
      const req = fake.requests[0]!
      assert.strictEqual(req.method, "POST")
      assert.strictEqual(req.path, "/v2/messages")
      assert.strictEqual(req.headers["authorization"], `Bearer ${fake.apiKey}`)
      assert.match(req.headers["content-type"] ?? "", /^application\/json/)
      assert.deepStrictEqual(req.json, {
        from: SMS.from,
        to: SMS.to,
        text: SMS.body,
        messaging_profile_id: PROFILE,
        type: "SMS"
      })
      assert.strictEqual(req.answer, 200)
      const [id] = [...fake.messages.keys()]
      assert.deepStrictEqual(accepted, { carrierMessageId: id!, status: "queued" })
    }))

  it.live("sends MMS with media_urls and type MMS", () =>
    Effect.gen(function*() {
      const accepted = yield* send(MMS)
      assert.deepStrictEqual(fake.requests[0]!.json, {
        from: MMS.from,
        to: MMS.to,
        text: MMS.body,
        media_urls: MMS.mediaUrls,
        messaging_profile_id: PROFILE,
        type: "MMS"
      })
      assert.strictEqual(accepted.status, "queued")
      assert.isTrue(fake.messages.has(accepted.carrierMessageId))
    }))

  it.live("a 422 is rejected at once, with Telnyx's detail", () =>
    Effect.gen(function*() {
      const { error } = yield* sendFails({ ...SMS, to: "5550002222" })
      assert.strictEqual(error.reason, "rejected")
      assert.include(error.message, "The 'to' parameter must be in +E.164 format.")
      assert.include(error.message, "422")
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.live("a 401 (wrong key) is rejected at once", () =>
    Effect.gen(function*() {
      const { error } = yield* sendFails(SMS, { apiKey: Redacted.make("KEY_wrong") })
      assert.strictEqual(error.reason, "rejected")
      assert.include(error.message, "401")
      assert.include(error.message, "API key in the request is missing or invalid")
      assert.notInclude(error.message, "KEY_wrong")
      assert.strictEqual(fake.requests.length, 1)
      assert.strictEqual(fake.requests[0]!.answer, 401)
    }))

  it.live("other 4xx (a scripted 403) is rejected without retry, using the title when there is no detail", () =>
    Effect.gen(function*() {
      fake.script({ type: "error", status: 403, code: "10010", title: "Authorization failed" }, 3)
      const { error } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "rejected")
      assert.include(error.message, "Authorization failed")
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.live("a recipient blocked on the profile (STOP texted to it): 409 with 40300 is opted_out, not retried", () =>
    Effect.gen(function*() {
      fake.inboundText({ from: SMS.to, to: SMS.from, text: "STOP" })
      const { error } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "opted_out")
      assert.include(error.message, "409")
      assert.include(error.message, "due to an existing block rule")
      assert.deepStrictEqual(fake.requests.map((r) => r.answer), [409])
    }))

  it.live("another 409 is rejected, not opted_out", () =>
    Effect.gen(function*() {
      fake.script({ type: "error", status: 409, code: "10015", title: "Bad Request" })
      const { error } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "rejected")
    }))

  it.live("a 429 with Retry-After is retried after the requested wait, then succeeds", () =>
    Effect.gen(function*() {
      fake.script({ type: "rateLimit", retryAfterSeconds: 1 })
      const accepted = yield* send(SMS)
      assert.strictEqual(fake.requests.length, 2)
      assert.deepStrictEqual(
        fake.requests.map((r) => r.answer),
        [429, 200]
      )
      const waited = fake.requests[1]!.at - fake.requests[0]!.at
      assert.isAtLeast(waited, 950)
      assert.isBelow(waited, 2_500)
      assert.strictEqual(accepted.carrierMessageId, [...fake.messages.keys()][0])
    }))

  it.live("a 429 without Retry-After backs off (x-ratelimit-reset) and succeeds", () =>
    Effect.gen(function*() {
      fake.script({ type: "rateLimit", retryAfterSeconds: null })
      yield* send(SMS)
      assert.deepStrictEqual(
        fake.requests.map((r) => r.answer),
        [429, 200]
      )
    }))

  it.live("503 three times is unavailable after two retries (bounded)", () =>
    Effect.gen(function*() {
      fake.script({ type: "serverError", status: 503 }, 5)
      const { error, ms } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "503")
      assert.include(error.message, "gave up after 2 retries")
      assert.strictEqual(fake.requests.length, 3)
      // Exponential backoff with 0.8–1.2 jitter: about 250 ms, then about 500 ms.
      const [r0, r1, r2] = fake.requests.map((r) => r.at)
      assert.isAtLeast(r1! - r0!, 180)
      assert.isBelow(r1! - r0!, 700)
      assert.isAtLeast(r2! - r1!, 380)
      assert.isBelow(r2! - r1!, 1_000)
      assert.isBelow(ms, 3_000)
    }))

  it("Retry-After: seconds or an HTTP date, capped; x-ratelimit-reset only on a 429", () => {
    const at = Date.parse("2026-01-01T00:00:00Z")
    const h = (init: Record<string, string>) => new Headers(init)
    assert.strictEqual(TelnyxClient.retryAfterMs(429, h({ "retry-after": "2" }), at), 2_000)
    assert.strictEqual(
      TelnyxClient.retryAfterMs(503, h({ "retry-after": "3600" }), at),
      TelnyxClient.MAX_RETRY_AFTER_MS
    )
    assert.strictEqual(TelnyxClient.retryAfterMs(503, h({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), at), 3_000)
    assert.strictEqual(TelnyxClient.retryAfterMs(429, h({ "x-ratelimit-reset": "1" }), at), 1_000)
    assert.strictEqual(TelnyxClient.retryAfterMs(503, h({ "x-ratelimit-reset": "1" }), at), null)
    assert.strictEqual(TelnyxClient.retryAfterMs(429, h({ "retry-after": "soon" }), at), null)
  })

  it.live("a 502 then success is retried", () =>
    Effect.gen(function*() {
      fake.script({ type: "serverError", status: 502 })
      const accepted = yield* send(SMS)
      assert.deepStrictEqual(
        fake.requests.map((r) => r.answer),
        [502, 200]
      )
      assert.strictEqual(accepted.status, "queued")
    }))

  it.live("a 500 is unavailable at once: it may have been processed, so it is not resent", () =>
    Effect.gen(function*() {
      fake.script({ type: "serverError", status: 500 })
      const { error } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "unavailable")
      assert.deepStrictEqual(fake.requests.map((r) => r.answer), [500])
    }))

  it.live("a retry that meets a 4xx stops there as rejected", () =>
    Effect.gen(function*() {
      fake.script({ type: "serverError", status: 502 })
      fake.script({ type: "error", status: 422, code: "10015", title: "Bad Request", detail: "nope" })
      const { error } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "rejected")
      assert.include(error.message, "nope")
      assert.strictEqual(fake.requests.length, 2)
    }))

  it.live("a hang is unavailable within the timeout, and not retried", () =>
    Effect.gen(function*() {
      fake.script({ type: "hang" }, 3)
      const { error, ms } = yield* sendFails(SMS, { timeoutMs: 300 })
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "300 ms")
      assert.isAtLeast(ms, 290)
      assert.isBelow(ms, 1_500)
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.live("a malformed 200 body is unavailable with a clear message, not a defect", () =>
    Effect.gen(function*() {
      fake.script({ type: "malformed" })
      const { error } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "malformed")
      assert.include(error.message, "not JSON")
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.live("a 200 JSON body without data.id is unavailable", () =>
    Effect.gen(function*() {
      fake.script({ type: "malformed", body: JSON.stringify({ data: { to: [{ status: "queued" }] } }) })
      const { error } = yield* sendFails(SMS)
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "malformed")
    }))

  it.live("a refused connection is unavailable", () =>
    Effect.gen(function*() {
      const other = yield* Effect.promise(() => startFakeTelnyx())
      const baseUrl = other.baseUrl
      yield* Effect.promise(() => other.stop())
      const { error } = yield* sendFails(SMS, { baseUrl })
      assert.strictEqual(error.reason, "unavailable")
      assert.include(error.message, "could not be reached")
    }))
})

// ------------------------------------------------------------------------------------ webhooks

const now = () => Math.floor(Date.now() / 1000)

const verify = (
  hook: { rawBody: string; headers: Record<string, string> },
  overrides: { nowSeconds?: number; publicKey?: string } = {}
) =>
  verifyAndParse({
    rawBody: hook.rawBody,
    signature: hook.headers["telnyx-signature-ed25519"] ?? null,
    timestamp: hook.headers["telnyx-timestamp"] ?? null,
    publicKey: overrides.publicKey ?? fake.publicKey,
    nowSeconds: overrides.nowSeconds ?? now()
  })

const rejects = (effect: Effect.Effect<unknown, TelnyxWebhookError>, reason: TelnyxWebhookError["reason"]) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip(effect)
    assert.strictEqual(error._tag, "TelnyxWebhookError")
    assert.strictEqual(error.reason, reason, error.message)
    return error
  })

const inbound = () =>
  inboundPayload({
    id: "b0c1d2e3-0000-4000-8000-00000000abcd",
    from: "+15557770000",
    to: "+15550001111",
    text: "Photo attached",
    media: [
      { url: "https://media.telnyx.example/1.jpg", contentType: "image/jpeg" },
      { url: "https://media.telnyx.example/2.bin", contentType: null }
    ]
  })

describe("Telnyx carrier: errorCodes", () => {
  it("reads the codes of a v2 error body: Telnyx's documented 40300 refusal, with or without meta; numbers as strings", () => {
    const documented = JSON.stringify({ errors: [blockedByStop("+15550001111", "+15550002222")] })
    assert.deepStrictEqual(TelnyxCarrier.errorCodes(documented), [TelnyxCarrier.OPTED_OUT])
    const withMeta = JSON.stringify({
      errors: [{
        code: "40300",
        title: "Blocked due to STOP message",
        detail: "Messages cannot be sent from '+15550001111' to '+15550002222' due to an existing block rule.",
        meta: { url: "https://developers.telnyx.com/api/errors/40300" }
      }]
    })
    assert.deepStrictEqual(TelnyxCarrier.errorCodes(withMeta), ["40300"])
    assert.deepStrictEqual(TelnyxCarrier.errorCodes(JSON.stringify({ errors: [{ code: 40300 }, { title: "x" }] })), [
      "40300"
    ])
  })

  it("no codes from what is not a v2 error body: not JSON, the 10DLC validation shape, empty", () => {
    for (
      const text of ["", "<html>Bad gateway</html>", "{\"errors\": [", JSON.stringify({ detail: [{ loc: ["body"] }] })]
    ) {
      assert.deepStrictEqual(TelnyxCarrier.errorCodes(text), [], text)
    }
  })
})

describe("Telnyx webhooks: verifyAndParse", () => {
  it.live("the public key is base64 of 32 raw bytes", () =>
    Effect.sync(() => {
      assert.strictEqual(Buffer.from(fake.publicKey, "base64").length, 32)
    }))

  it.live("a signed message.received parses to Inbound with media", () =>
    Effect.gen(function*() {
      const hook = fake.signedWebhook("message.received", inbound(), { eventId: "evt-1" })
      const event = yield* verify(hook)
      assert.strictEqual(event._tag, "Inbound")
      if (event._tag !== "Inbound") return
      assert.strictEqual(event.eventId, "evt-1")
      assert.isString(event.occurredAt)
      assert.deepStrictEqual(event.message, {
        carrierMessageId: "b0c1d2e3-0000-4000-8000-00000000abcd",
        from: "+15557770000",
        to: "+15550001111",
        body: "Photo attached",
        media: [
          { url: "https://media.telnyx.example/1.jpg", contentType: "image/jpeg" },
          { url: "https://media.telnyx.example/2.bin", contentType: null }
        ]
      })
    }))

  it.live("message.finalized with delivery_failed parses to Status", () =>
    Effect.gen(function*() {
      const hook = fake.signedWebhook(
        "message.finalized",
        statusPayload({ id: "msg-1", status: "delivery_failed", errors: [{ code: "40008", title: "Undeliverable" }] }),
        { eventId: "evt-2" }
      )
      const event = yield* verify(hook)
      assert.deepStrictEqual(
        { _tag: event._tag, eventId: event.eventId, report: event._tag === "Status" ? event.report : null },
        {
          _tag: "Status",
          eventId: "evt-2",
          report: { carrierMessageId: "msg-1", status: "delivery_failed", optedOut: false }
        }
      )
    }))

  it.live("message.finalized whose errors carry 40300 (string or number) reports the recipient's opt-out", () =>
    Effect.gen(function*() {
      for (const code of ["40300", 40300]) {
        const error = { ...blockedByStop("+15550001111", "+15550002222"), code }
        const payload = { ...statusPayload({ id: "msg-3", status: "delivery_failed" }), errors: [error] }
        const event = yield* verify(fake.signedWebhook("message.finalized", payload))
        assert.deepStrictEqual(event._tag === "Status" ? event.report : null, {
          carrierMessageId: "msg-3",
          status: "delivery_failed",
          optedOut: true
        })
      }
    }))

  it.live("message.sent parses to Status sent", () =>
    Effect.gen(function*() {
      const event = yield* verify(fake.signedWebhook("message.sent", statusPayload({ id: "msg-2", status: "sent" })))
      assert.strictEqual(event._tag, "Status")
      if (event._tag === "Status") {
        assert.deepStrictEqual(event.report, { carrierMessageId: "msg-2", status: "sent", optedOut: false })
      }
    }))

  it.live("an unknown event type is Ignored", () =>
    Effect.gen(function*() {
      const event = yield* verify(fake.signedWebhook("call.initiated", { call_control_id: "x" }, { eventId: "evt-3" }))
      assert.deepStrictEqual(
        { _tag: event._tag, eventId: event.eventId, eventType: event._tag === "Ignored" ? event.eventType : null },
        { _tag: "Ignored", eventId: "evt-3", eventType: "call.initiated" }
      )
    }))

  it.live("a flipped signature byte fails on the signature", () =>
    Effect.gen(function*() {
      const hook = fake.signedWebhook("message.received", inbound())
      const sig = Buffer.from(hook.headers["telnyx-signature-ed25519"], "base64")
      sig[10] = sig[10]! ^ 0x01
      yield* rejects(
        verify({ ...hook, headers: { ...hook.headers, "telnyx-signature-ed25519": sig.toString("base64") } }),
        "signature"
      )
    }))

  it.live("a body altered after signing fails on the signature", () =>
    Effect.gen(function*() {
      const hook = fake.signedWebhook("message.received", inbound())
      const rawBody = hook.rawBody.replace("Photo attached", "Photo attacked")
      assert.notStrictEqual(rawBody, hook.rawBody)
      yield* rejects(verify({ ...hook, rawBody }), "signature")
      // Re-serialising the same JSON differently also breaks it: the raw bytes are what is signed.
      yield* rejects(verify({ ...hook, rawBody: JSON.stringify(JSON.parse(hook.rawBody), null, 2) }), "signature")
    }))

  it.live("a timestamp 301 s old (or ahead) fails on the timestamp; 300 s is accepted", () =>
    Effect.gen(function*() {
      const t = now()
      yield* rejects(
        verify(fake.signedWebhook("message.received", inbound(), { timestamp: t - 301 }), { nowSeconds: t }),
        "timestamp"
      )
      yield* rejects(
        verify(fake.signedWebhook("message.received", inbound(), { timestamp: t + 301 }), { nowSeconds: t }),
        "timestamp"
      )
      const ok = yield* verify(fake.signedWebhook("message.received", inbound(), { timestamp: t - 300 }), {
        nowSeconds: t
      })
      assert.strictEqual(ok._tag, "Inbound")
    }))

  it.live("a timestamp changed after signing fails on the signature", () =>
    Effect.gen(function*() {
      const hook = fake.signedWebhook("message.received", inbound())
      const shifted = String(Number(hook.headers["telnyx-timestamp"]) - 5)
      yield* rejects(verify({ ...hook, headers: { ...hook.headers, "telnyx-timestamp": shifted } }), "signature")
    }))

  it.live("missing or garbled headers fail with the right reason", () =>
    Effect.gen(function*() {
      const hook = fake.signedWebhook("message.received", inbound())
      const { "telnyx-signature-ed25519": _sig, ...noSig } = hook.headers
      const { "telnyx-timestamp": _ts, ...noTs } = hook.headers
      yield* rejects(verify({ rawBody: hook.rawBody, headers: noSig }), "signature")
      yield* rejects(verify({ rawBody: hook.rawBody, headers: noTs }), "timestamp")
      yield* rejects(verify({ rawBody: hook.rawBody, headers: {} }), "timestamp")
      yield* rejects(verify({ ...hook, headers: { ...hook.headers, "telnyx-timestamp": "yesterday" } }), "timestamp")
      yield* rejects(
        verify({ ...hook, headers: { ...hook.headers, "telnyx-signature-ed25519": "not base64!" } }),
        "signature"
      )
      yield* rejects(verify({ ...hook, headers: { ...hook.headers, "telnyx-signature-ed25519": "AAAA" } }), "signature")
    }))

  it.live("a signature made with another key fails on the signature", () =>
    Effect.gen(function*() {
      const other = createEd25519Signer()
      yield* rejects(verify(fake.signedWebhook("message.received", inbound(), { signer: other })), "signature")
      // ...and verifies against that other key.
      const ok = yield* verify(fake.signedWebhook("message.received", inbound(), { signer: other }), {
        publicKey: other.publicKey
      })
      assert.strictEqual(ok._tag, "Inbound")
    }))

  it.live("a public key that is not 32 bytes fails on the signature", () =>
    Effect.gen(function*() {
      const hook = fake.signedWebhook("message.received", inbound())
      yield* rejects(verify(hook, { publicKey: Buffer.alloc(31).toString("base64") }), "signature")
    }))

  it.live("signed but malformed JSON, or missing fields, fails as malformed", () =>
    Effect.gen(function*() {
      const sign = (rawBody: string) => {
        const timestamp = String(now())
        const other = createEd25519Signer()
        return {
          rawBody,
          headers: { "telnyx-signature-ed25519": other.sign(timestamp, rawBody), "telnyx-timestamp": timestamp },
          key: other.publicKey
        }
      }
      for (
        const rawBody of [
          "{not json",
          JSON.stringify({ event_type: "message.received" }),
          JSON.stringify({ data: { id: "e", event_type: "message.received", payload: { id: "m", to: [] } } }),
          JSON.stringify({ data: { id: "e", event_type: "message.finalized", payload: { id: "m", to: [{}] } } })
        ]
      ) {
        const hook = sign(rawBody)
        yield* rejects(verify(hook, { publicKey: hook.key }), "malformed")
      }
      // The fake's own builder with its payload stripped of `from`.
      const { from: _from, ...noFrom } = inbound()
      const error = yield* rejects(verify(fake.signedWebhook("message.received", noFrom)), "malformed")
      assert.include(error.message, "from")
    }))

  it.live("deliverWebhook POSTs a signed event that a receiver verifies", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const receiver = createServer((req, res) => {
        let body = ""
        req.on("data", (c: Buffer) => (body += c.toString("utf8")))
        req.on("end", () => {
          void Effect.runPromise(
            Effect.either(
              verifyAndParse({
                rawBody: body,
                signature: (req.headers["telnyx-signature-ed25519"] as string | undefined) ?? null,
                timestamp: (req.headers["telnyx-timestamp"] as string | undefined) ?? null,
                publicKey: fake.publicKey,
                nowSeconds: now()
              })
            )
          ).then((result) => {
            seen.push(result._tag === "Right" ? result.right._tag : result.left.reason)
            res.writeHead(result._tag === "Right" ? 204 : 401).end()
          })
        })
      })
      yield* Effect.promise(() => new Promise<void>((done) => receiver.listen(0, "127.0.0.1", () => done())))
      const { port } = receiver.address() as { port: number }
      const url = `http://127.0.0.1:${port}/telnyx`
      const a = yield* Effect.promise(() => fake.deliverWebhook(url, "message.received", inbound()))
      const b = yield* Effect.promise(() =>
        fake.deliverWebhook(url, "message.finalized", statusPayload({ id: "m", status: "delivered" }))
      )
      const c = yield* Effect.promise(() =>
        fake.deliverWebhook(url, "message.sent", statusPayload({ id: "m", status: "sent" }), {
          signer: createEd25519Signer()
        })
      )
      yield* Effect.promise(() => new Promise<void>((done) => receiver.close(() => done())))
      assert.deepStrictEqual([a.status, b.status, c.status], [204, 204, 401])
      assert.deepStrictEqual(seen, ["Inbound", "Status", "signature"])
    }))
})
