/**
 * The outbound HTTP client refuses to dial a host whose addresses are not all public, at connect
 * time: the address checked is the address dialled, so a DNS-rebinding host cannot slip past the
 * URL guard. A local receiver stands in for the private network; stub resolvers stand in for DNS.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll } from "vitest"
import * as OutboundHttp from "../../adapters/net/http.ts"
import * as Sender from "../../adapters/webhooks/sender.ts"
import { WebhookSender } from "../../core/webhooks/store.ts"

let server: Server
let port = 0
let hits = 0
beforeAll(async () => {
  server = createServer((req, res) => {
    hits++
    req.resume()
    res.end("ok")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const answering = (...addresses: Array<string>): OutboundHttp.Lookup => (_host, _options, callback) =>
  callback(null, addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })))

/** GET through the client; the status, or the failure as describeFetchError words it. */
const get = (client: Layer.Layer<OutboundHttp.OutboundHttp>, url: string) =>
  Effect.flatMap(OutboundHttp.OutboundHttp, (http) =>
    Effect.tryPromise({
      try: async () => {
        const res = await http.fetch(url, { method: "GET" })
        await res.body?.cancel().catch(() => undefined)
        return `status ${res.status}`
      },
      catch: (e) => e
    }).pipe(Effect.catchAll((e) => Effect.succeed(OutboundHttp.describeFetchError(e))))).pipe(Effect.provide(client))

describe("OutboundHttp", () => {
  it.live("refuses to connect when the host resolves to a loopback, private or link-local address", () =>
    Effect.gen(function*() {
      const before = hits
      assert.strictEqual(
        yield* get(OutboundHttp.layer(false, answering("127.0.0.1")), `http://rebind.test:${port}/`),
        "rebind.test resolves to a loopback address (127.0.0.1)"
      )
      assert.include(
        yield* get(OutboundHttp.layer(false, answering("10.1.2.3")), `http://rebind.test:${port}/`),
        "private"
      )
      assert.include(
        yield* get(OutboundHttp.layer(false, answering("169.254.169.254")), `http://metadata.test:${port}/`),
        "linkLocal"
      )
      // One bad address among public ones is enough: the connection may pick any of them.
      assert.include(
        yield* get(OutboundHttp.layer(false, answering("93.184.216.34", "::1")), `http://mixed.test:${port}/`),
        "loopback"
      )
      assert.strictEqual(hits, before, "nothing reached the private receiver")
    }))

  it.live("with private addresses allowed (local development) the same host is dialled", () =>
    Effect.gen(function*() {
      const before = hits
      assert.strictEqual(
        yield* get(OutboundHttp.layer(true, answering("127.0.0.1")), `http://rebind.test:${port}/`),
        "status 200"
      )
      assert.strictEqual(hits, before + 1)
    }))

  it.live("a resolver failure surfaces as the resolver's code", () =>
    Effect.gen(function*() {
      const failing: OutboundHttp.Lookup = (_host, _options, callback) =>
        callback(Object.assign(new Error("no such host"), { code: "ENOTFOUND" }), [])
      assert.strictEqual(yield* get(OutboundHttp.layer(false, failing), `http://nowhere.test:${port}/`), "ENOTFOUND")
    }))

  it.live("the webhook sender reports a rebinding host's delivery as an error naming the address", () =>
    Effect.gen(function*() {
      const before = hits
      const result = yield* Effect.flatMap(
        WebhookSender,
        (sender) =>
          sender.send({
            url: `http://rebind.test:${port}/hook`,
            headers: { "content-type": "application/json" },
            body: "{}",
            timeoutMs: 2000
          })
      ).pipe(Effect.provide(Sender.layer.pipe(Layer.provide(OutboundHttp.layer(false, answering("127.0.0.1"))))))
      assert.deepStrictEqual(result, { error: "rebind.test resolves to a loopback address (127.0.0.1)" })
      assert.strictEqual(hits, before)
    }))

  describe("the webhook sender's timeout and interruption", () => {
    let slow: Server
    let slowPort = 0
    /** Requests the slow receiver got, and how many of their connections closed before an answer. */
    const seen = { requests: 0, closedUnanswered: 0 }
    beforeAll(async () => {
      // Headers after 1.5 s for /late; never for /never; /slow-body answers 200 at once and ends its body after 1.5 s.
      slow = createServer((req, res) => {
        seen.requests++
        req.resume()
        res.on("close", () => {
          if (!res.writableEnded) seen.closedUnanswered++
        })
        if (req.url === "/late") setTimeout(() => res.end("late"), 1_500)
        if (req.url === "/slow-body") {
          res.writeHead(200).write("partial")
          setTimeout(() => res.end("rest"), 1_500)
        }
      })
      await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve))
      slowPort = (slow.address() as AddressInfo).port
    })
    afterAll(async () => {
      slow.closeAllConnections()
      await new Promise<void>((resolve) => slow.close(() => resolve()))
    })

    const send = (path: string, timeoutMs: number) =>
      Effect.flatMap(
        WebhookSender,
        (sender) => sender.send({ url: `http://127.0.0.1:${slowPort}${path}`, headers: {}, body: "{}", timeoutMs })
      ).pipe(
        Effect.provide(Sender.layer.pipe(Layer.provide(OutboundHttp.layer(true))))
      )

    it.live("an answer later than the timeout is a failed attempt, reported when the timeout ends", () =>
      Effect.gen(function*() {
        const started = Date.now()
        const result = yield* send("/late", 300)
        const took = Date.now() - started
        assert.deepStrictEqual(result, { error: "timed out after 300 ms" })
        assert.isAtLeast(took, 290)
        assert.isBelow(took, 1_200, "not waiting for the late answer")
      }))

    it.live("an answer within the timeout counts by its status, even when its body ends after the timeout", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* send("/late", 5_000), { status: 200 })
        assert.deepStrictEqual(yield* send("/slow-body", 1_000), { status: 200 })
      }))

    it.live("interrupting an attempt (shutdown) aborts its request at once", () =>
      Effect.gen(function*() {
        const before = { ...seen }
        const fiber = yield* Effect.fork(send("/never", 60_000))
        while (seen.requests === before.requests) yield* Effect.sleep("10 millis")
        const started = Date.now()
        yield* Fiber.interrupt(fiber)
        while (seen.closedUnanswered === before.closedUnanswered && Date.now() - started < 2_000) {
          yield* Effect.sleep("10 millis")
        }
        assert.strictEqual(seen.closedUnanswered, before.closedUnanswered + 1, "the receiver saw the request abandoned")
        assert.isBelow(Date.now() - started, 2_000)
      }))
  })
})
