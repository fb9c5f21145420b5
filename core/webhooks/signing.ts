/**
 * Standard Webhooks signing: `webhook-signature: v1,<base64 HMAC-SHA256(id.timestamp.body)>` keyed
 * with the base64-decoded part of the secret after `whsec_`. Web Crypto keeps it runtime-neutral.
 */
import { Effect } from "effect"

const enc = new TextEncoder()

const toBase64 = (bytes: Uint8Array): string => {
  let bin = ""
  for (const b of bytes) bin += String.fromCharCode(b)
  return btoa(bin)
}

export const generateSecret = (): string => `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`

const keyBytes = (secret: string): Uint8Array<ArrayBuffer> =>
  Uint8Array.from(atob(secret.startsWith("whsec_") ? secret.slice(6) : secret), (c) => c.charCodeAt(0))

// Imported HMAC keys by secret: importing costs more than signing. Bounded; cleared when full.
const keys = new Map<string, Promise<CryptoKey>>()
const hmacKey = (secret: string) => {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= 1000) keys.clear()
    key = crypto.subtle.importKey("raw", keyBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    keys.set(secret, key)
  }
  return key
}

export const sign = (secret: string, id: string, timestampSeconds: number, body: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const key = await hmacKey(secret)
    const mac = await crypto.subtle.sign("HMAC", key, enc.encode(`${id}.${timestampSeconds}.${body}`))
    return `v1,${toBase64(new Uint8Array(mac))}`
  })

/** One signature per active secret, space separated (the rotation overlap signs with both). */
export const signatureHeader = (secrets: ReadonlyArray<string>, id: string, timestampSeconds: number, body: string) =>
  Effect.map(Effect.forEach(secrets, (s) => sign(s, id, timestampSeconds, body)), (sigs) => sigs.join(" "))

/** The public event id of an outbox event: `evt_` + its uuid without dashes. */
export const eventIdOf = (outboxId: string) => `evt_${outboxId.replace(/-/g, "")}`
export const testEventId = (uuid: string) => `evt_test_${uuid.replace(/-/g, "")}`
