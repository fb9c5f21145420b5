/**
 * Opaque, tamper-evident cursors bound to their query.
 *
 * A cursor is `base64url(JSON {s, p, t}).base64url(HMAC-SHA256)` where `s` fingerprints the list and
 * its filters, `p` is the keyset position (e.g. `[createdAt, id]` of the last row) and `t` the issue
 * time. Any edit breaks the MAC; a cursor replayed against another list or other filters, or older
 * than `maxAgeMs`, is rejected. Keyset positions keep pages stable under concurrent inserts.
 */
import { Clock, Context, Effect, Either, Layer, Schema } from "effect"
import { InvalidArgument } from "./errors.ts"

const enc = new TextEncoder()
const dec = new TextDecoder()

const toB64url = (bytes: Uint8Array): string => {
  let bin = ""
  for (const b of bytes) bin += String.fromCharCode(b)
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

const fromB64url = (s: string): Either.Either<Uint8Array, void> => {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return Either.left(undefined)
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"))
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0))
    // atob ignores the unused low bits of the last character, so several strings decode to the
    // same bytes; only the canonical encoding is accepted, or an edited cursor could still verify.
    return toB64url(bytes) === s ? Either.right(bytes) : Either.left(undefined)
  } catch {
    return Either.left(undefined)
  }
}

const Payload = Schema.Struct({
  s: Schema.String,
  p: Schema.Array(Schema.Union(Schema.String, Schema.Number)),
  t: Schema.Number
})
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(Payload))

export type Position = ReadonlyArray<string | number>

export interface CursorCodec {
  readonly encode: (scope: string, position: Position) => Effect.Effect<string>
  /** `scope` must equal the one the cursor was made for. */
  readonly decode: (scope: string, cursor: string) => Effect.Effect<Position, InvalidArgument>
}

export const CursorCodec = Context.GenericTag<CursorCodec>("core/CursorCodec")

const invalid = new InvalidArgument({ message: "cursor is invalid, modified or expired; restart from the first page" })

export const makeCursorCodec = (secret: Uint8Array, maxAgeMs = 24 * 60 * 60 * 1000): Effect.Effect<CursorCodec> =>
  Effect.gen(function*() {
    const key = yield* Effect.promise(() =>
      crypto.subtle.importKey("raw", new Uint8Array(secret), { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
        "verify"
      ])
    )
    const mac = (data: string) =>
      Effect.promise(() => crypto.subtle.sign("HMAC", key, enc.encode(data))).pipe(
        Effect.map((sig) => new Uint8Array(sig).subarray(0, 16))
      )
    const encode: CursorCodec["encode"] = (scope, position) =>
      Effect.gen(function*() {
        const t = yield* Clock.currentTimeMillis
        const body = toB64url(enc.encode(JSON.stringify({ s: scope, p: position, t })))
        return `${body}.${toB64url(yield* mac(body))}`
      })
    const decode: CursorCodec["decode"] = (scope, cursor) =>
      Effect.gen(function*() {
        const [body, sig, ...rest] = cursor.split(".")
        if (body === undefined || sig === undefined || rest.length > 0 || cursor.length > 1024) return yield* invalid
        const given = fromB64url(sig)
        if (Either.isLeft(given)) return yield* invalid
        // The MAC is truncated to 16 bytes, so recompute and compare in constant time.
        const ok = timingSafeEqual(yield* mac(body), given.right)
        if (!ok) return yield* invalid
        const raw = fromB64url(body)
        if (Either.isLeft(raw)) return yield* invalid
        const payload = decodePayload(dec.decode(raw.right))
        if (Either.isLeft(payload) || payload.right.s !== scope) return yield* invalid
        const now = yield* Clock.currentTimeMillis
        if (now - payload.right.t > maxAgeMs) return yield* invalid
        return payload.right.p
      })
    return { encode, decode }
  })

const timingSafeEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}

export const layerCursorCodec = (secret: Uint8Array) => Layer.effect(CursorCodec, makeCursorCodec(secret))

/** One page of results plus the cursor for the next, per SPEC "Pagination". */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/** A page size from 1 to `max`, as a JSON number (the REST query string reads it from text). */
export const PageSize = (max: number) => Schema.Int.pipe(Schema.between(1, max))
