/**
 * WebhookHmac by node:crypto (Node and Deno): synchronous, so a signature costs no promise, no
 * thread hop and no copy, where Web Crypto's costs all three on every delivery (docs/architecture.md,
 * "Webhook delivery in batches").
 */
import { Effect, Layer } from "effect"
import { createHmac, createSecretKey, type KeyObject } from "node:crypto"
import { secretBytes, WebhookHmac } from "../../core/webhooks/signing.ts"

// Key objects by secret: decoding the secret costs more than a short signature. Bounded; cleared when full.
const keys = new Map<string, KeyObject>()
const keyOf = (secret: string) => {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= 1000) keys.clear()
    key = createSecretKey(secretBytes(secret))
    keys.set(secret, key)
  }
  return key
}

export const layer = Layer.succeed(WebhookHmac, {
  sign: (secret, message) => Effect.sync(() => createHmac("sha256", keyOf(secret)).update(message).digest("base64"))
})
