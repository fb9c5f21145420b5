/**
 * The server's webhook HMAC (adapters/webhooks/hmac.ts, node:crypto) against the core's Web Crypto
 * default: the same signatures for the same secrets and messages, and headers the official
 * `standardwebhooks` verifier accepts, rotation overlap (two secrets) included.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Webhook } from "standardwebhooks"
import * as Hmac from "../../adapters/webhooks/hmac.ts"
import { generateSecret, signatureHeader, signatureHeaderBy, WebhookHmac } from "../../core/webhooks/signing.ts"

const messages = [
  "",
  "{}",
  JSON.stringify({ type: "message.delivered", data: { body: "héllo ✓ 👋 \u0000" } }),
  "x".repeat(100_000)
]

describe("webhook HMAC by node:crypto", () => {
  it.effect("signs exactly as Web Crypto does", () =>
    Effect.gen(function*() {
      const node = yield* Effect.provide(WebhookHmac, Hmac.layer)
      const web = yield* WebhookHmac
      for (let i = 0; i < 5; i++) {
        const secret = generateSecret()
        for (const body of messages) {
          const id = `evt_${i}`
          const a = yield* signatureHeaderBy(node)([secret], id, 1_700_000_000 + i, body)
          const b = yield* signatureHeaderBy(web)([secret], id, 1_700_000_000 + i, body)
          assert.match(a, /^v1,[A-Za-z0-9+/]{43}=$/)
          assert.strictEqual(a, b)
        }
      }
    }))

  it.effect("its headers pass the standardwebhooks verifier, with one secret and during a rotation", () =>
    Effect.gen(function*() {
      const [current, previous] = [generateSecret(), generateSecret()]
      const body = messages[2]!
      const timestamp = Math.floor(Date.now() / 1000)
      const header = yield* signatureHeader([current, previous], "evt_rotation", timestamp, body).pipe(
        Effect.provide(Hmac.layer)
      )
      assert.strictEqual(header.split(" ").length, 2)
      for (const secret of [current, previous]) {
        const verified = new Webhook(secret).verify(body, {
          "webhook-id": "evt_rotation",
          "webhook-timestamp": String(timestamp),
          "webhook-signature": header
        })
        assert.deepStrictEqual(verified, JSON.parse(body))
      }
      assert.throws(() =>
        new Webhook(generateSecret()).verify(body, {
          "webhook-id": "evt_rotation",
          "webhook-timestamp": String(timestamp),
          "webhook-signature": header
        })
      )
    }))
})
