/**
 * Standard Webhooks signing: `webhook-signature: v1,<base64 HMAC-SHA256(id.timestamp.body)>` keyed
 * with the base64-decoded part of the secret after `whsec_`. The HMAC is a port (WebhookHmac): Web
 * Crypto by default, runtime-neutral; the server provides a synchronous one (adapters/webhooks/hmac.ts).
 */
import { Context, Effect } from "effect"

const enc = new TextEncoder()

const toBase64 = (bytes: Uint8Array): string => {
  let bin = ""
  for (const b of bytes) bin += String.fromCharCode(b)
  return btoa(bin)
}

export const generateSecret = (): string => `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`

/** The HMAC key a secret stands for: the base64 after `whsec_`. */
export const secretBytes = (secret: string): Uint8Array<ArrayBuffer> =>
  Uint8Array.from(atob(secret.startsWith("whsec_") ? secret.slice(6) : secret), (c) => c.charCodeAt(0))

// Imported HMAC keys by secret: importing costs more than signing. Bounded; cleared when full.
const keys = new Map<string, Promise<CryptoKey>>()
const hmacKey = (secret: string) => {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= 1000) keys.clear()
    key = crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    keys.set(secret, key)
  }
  return key
}

/** Base64 HMAC-SHA256 of `message` keyed with `secret`'s bytes, by Web Crypto. */
const webCryptoHmac = (secret: string, message: string): Effect.Effect<string> =>
  Effect.promise(async () =>
    toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), enc.encode(message))))
  )

/**
 * The HMAC that signs deliveries. Web Crypto answers through a promise, a job on another thread and a
 * copy of the result per signature; a runtime with a synchronous HMAC provides it here instead.
 */
export class WebhookHmac extends Context.Reference<WebhookHmac>()("core/WebhookHmac", {
  defaultValue: () =>
    ({ sign: webCryptoHmac }) as { readonly sign: (secret: string, message: string) => Effect.Effect<string> }
}) {}

/** The `webhook-signature` header by `hmac`: one signature per active secret, space separated (the rotation overlap signs with both). */
export const signatureHeaderBy =
  (hmac: WebhookHmac["Type"]) => (secrets: ReadonlyArray<string>, id: string, timestampSeconds: number, body: string) =>
    Effect.map(
      Effect.forEach(secrets, (s) => hmac.sign(s, `${id}.${timestampSeconds}.${body}`)),
      (macs) => macs.map((m) => `v1,${m}`).join(" ")
    )

/** The `webhook-signature` header by the HMAC in context. */
export const signatureHeader = (secrets: ReadonlyArray<string>, id: string, timestampSeconds: number, body: string) =>
  Effect.flatMap(WebhookHmac, (hmac) => signatureHeaderBy(hmac)(secrets, id, timestampSeconds, body))

/** The public event id of an outbox event: `evt_` + its uuid without dashes. */
export const eventIdOf = (outboxId: string) => `evt_${outboxId.replace(/-/g, "")}`
export const testEventId = (uuid: string) => `evt_test_${uuid.replace(/-/g, "")}`
