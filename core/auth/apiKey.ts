/**
 * API keys: `svc_live_<40 base62>` or `svc_test_<40 base62>` (about 238 bits of entropy).
 * Only the SHA-256 digest of the whole token is stored; a request is authenticated by looking up
 * the digest, so a database leak reveals no usable key. Web Crypto keeps this runtime-neutral.
 */
import { Effect, Option } from "effect"
import type { KeyKind } from "./principal.ts"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const SECRET_LENGTH = 40
const TOKEN_PATTERN = /^svc_(live|test)_([0-9A-Za-z]{40})$/

export interface ParsedKey {
  readonly kind: KeyKind
  readonly token: string
}

/** Rejects anything that is not shaped like one of our keys before it reaches a store. */
export const parseToken = (token: string): Option.Option<ParsedKey> => {
  const m = TOKEN_PATTERN.exec(token)
  return m ? Option.some({ kind: m[1] as KeyKind, token }) : Option.none()
}

export const generateToken = (kind: KeyKind): string => {
  // Rejection sampling keeps every base62 character uniformly likely.
  let out = ""
  while (out.length < SECRET_LENGTH) {
    const bytes = crypto.getRandomValues(new Uint8Array(64))
    for (const b of bytes) {
      if (b < 248 && out.length < SECRET_LENGTH) out += BASE62[b % 62]
    }
  }
  return `svc_${kind}_${out}`
}

const toHex = (buf: ArrayBuffer): string =>
  Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("")

export const sha256Hex = (text: string): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).pipe(Effect.map(toHex))

export const hashToken = sha256Hex
