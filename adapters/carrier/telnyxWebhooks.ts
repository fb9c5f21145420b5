/**
 * Telnyx webhook verification and parsing (research telnyx.md §3 "Signature verification"):
 * Ed25519 over `${telnyx-timestamp}|${raw body}` with the account's public key (base64 of 32 raw
 * bytes), a 300 s tolerance on the timestamp, then the v2 envelope
 * `{data: {id, event_type, occurred_at, payload}}`. Web Crypto only, so it runs on Node and Deno.
 *
 * Telnyx may repeat events and deliver them out of order: dedupe on `eventId`, order by `occurredAt`.
 */
import { Data, Effect, Either, ParseResult, Schema } from "effect"
import type { InboundMessage, StatusReport } from "../../core/messaging/carrier.ts"
import { OPTED_OUT } from "./telnyx.ts"

export class TelnyxWebhookError extends Data.TaggedError("TelnyxWebhookError")<{
  readonly reason: "signature" | "timestamp" | "malformed"
  readonly message: string
}> {}

/** How far `telnyx-timestamp` may be from now, either way (the SDK's tolerance). */
export const TOLERANCE_SECONDS = 300

export const SIGNATURE_HEADER = "telnyx-signature-ed25519"
export const TIMESTAMP_HEADER = "telnyx-timestamp"

export type TelnyxWebhookEvent =
  | {
    readonly _tag: "Inbound"
    readonly eventId: string
    readonly occurredAt: string | null
    readonly message: InboundMessage
  }
  | {
    readonly _tag: "Status"
    readonly eventId: string
    readonly occurredAt: string | null
    readonly report: StatusReport
  }
  | {
    readonly _tag: "Ignored"
    readonly eventId: string
    readonly occurredAt: string | null
    readonly eventType: string
  }

export interface TelnyxWebhookInput {
  /** The request body exactly as received; never a re-serialisation. */
  readonly rawBody: string
  /** The `telnyx-signature-ed25519` header. */
  readonly signature: string | null
  /** The `telnyx-timestamp` header (Unix seconds). */
  readonly timestamp: string | null
  /** The account's Ed25519 public key: base64 of the 32 raw bytes. */
  readonly publicKey: string
  readonly nowSeconds: number
}

const fail = (reason: TelnyxWebhookError["reason"], message: string) =>
  Effect.fail(new TelnyxWebhookError({ reason, message }))

/** Strict base64 (standard or url alphabet, padding optional) to bytes; null when it is not base64. */
export const fromBase64 = (text: string): Uint8Array<ArrayBuffer> | null => {
  const s = text.trim().replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "")
  if (!/^[A-Za-z0-9+/]*$/.test(s) || s.length % 4 === 1) return null
  const bin = atob(s.padEnd(Math.ceil(s.length / 4) * 4, "="))
  const out = new Uint8Array(new ArrayBuffer(bin.length))
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

const verifySignature = (input: TelnyxWebhookInput, timestamp: string, signature: string) =>
  Effect.gen(function*() {
    const key = fromBase64(input.publicKey)
    if (key === null || key.length !== 32) {
      return yield* fail("signature", "the configured Telnyx public key is not base64 of 32 bytes")
    }
    const sig = fromBase64(signature)
    if (sig === null || sig.length !== 64) {
      return yield* fail("signature", `${SIGNATURE_HEADER} is not base64 of a 64-byte Ed25519 signature`)
    }
    const signed = new TextEncoder().encode(`${timestamp}|${input.rawBody}`)
    const ok = yield* Effect.tryPromise({
      try: async () => {
        const publicKey = await crypto.subtle.importKey("raw", key, { name: "Ed25519" }, false, ["verify"])
        return crypto.subtle.verify({ name: "Ed25519" }, publicKey, sig, signed)
      },
      catch: (e) =>
        new TelnyxWebhookError({
          reason: "signature",
          message: `the signature could not be checked: ${e instanceof Error ? e.message : String(e)}`
        })
    })
    if (!ok) return yield* fail("signature", "the signature does not match the body and timestamp")
  })

// ------------------------------------------------------------------------------------ payload shapes

/** The v2 webhook envelope every Telnyx event comes in, 10DLC ones included. */
export const Envelope = Schema.Struct({
  data: Schema.Struct({
    id: Schema.NonEmptyString,
    event_type: Schema.NonEmptyString,
    occurred_at: Schema.optional(Schema.NullOr(Schema.String)),
    payload: Schema.optional(Schema.Unknown)
  })
})

const Party = Schema.Struct({
  phone_number: Schema.NonEmptyString,
  status: Schema.optional(Schema.NullOr(Schema.String))
})

const InboundPayload = Schema.Struct({
  id: Schema.NonEmptyString,
  from: Party,
  to: Schema.NonEmptyArray(Party),
  text: Schema.optional(Schema.NullOr(Schema.String)),
  media: Schema.optional(
    Schema.NullOr(
      Schema.Array(
        Schema.Struct({ url: Schema.NonEmptyString, content_type: Schema.optional(Schema.NullOr(Schema.String)) })
      )
    )
  )
})

const StatusPayload = Schema.Struct({
  id: Schema.NonEmptyString,
  to: Schema.NonEmptyArray(Schema.Struct({ status: Schema.NonEmptyString })),
  errors: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ code: Schema.optional(Schema.Union(Schema.String, Schema.Number)) })))
  )
})

const decode = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string) =>
  Either.match(Schema.decodeUnknownEither(schema, { errors: "first" })(value), {
    onLeft: (e) => fail("malformed", `${what}: ${ParseResult.TreeFormatter.formatErrorSync(e).replace(/\s+/g, " ")}`),
    onRight: (a) => Effect.succeed(a)
  })

const parse = (rawBody: string): Effect.Effect<TelnyxWebhookEvent, TelnyxWebhookError> =>
  Effect.gen(function*() {
    let json: unknown
    try {
      json = JSON.parse(rawBody)
    } catch {
      return yield* fail("malformed", "the body is not JSON")
    }
    const { data } = yield* decode(Envelope, json, "not a Telnyx event envelope")
    const eventId = data.id
    const occurredAt = data.occurred_at ?? null
    switch (data.event_type) {
      case "message.received": {
        const p = yield* decode(InboundPayload, data.payload, "message.received payload")
        const message: InboundMessage = {
          carrierMessageId: p.id,
          from: p.from.phone_number,
          to: p.to[0].phone_number,
          body: p.text ?? null,
          media: (p.media ?? []).map((m) => ({ url: m.url, contentType: m.content_type ?? null }))
        }
        return { _tag: "Inbound", eventId, occurredAt, message } as const
      }
      case "message.sent":
      case "message.finalized": {
        const p = yield* decode(StatusPayload, data.payload, `${data.event_type} payload`)
        const report: StatusReport = {
          carrierMessageId: p.id,
          status: p.to[0].status,
          optedOut: (p.errors ?? []).some((e) => String(e.code) === OPTED_OUT)
        }
        return { _tag: "Status", eventId, occurredAt, report } as const
      }
      default:
        return { _tag: "Ignored", eventId, occurredAt, eventType: data.event_type } as const
    }
  })

/** Verifies the signature and freshness of a Telnyx webhook, then parses it. */
export const verifyAndParse = (input: TelnyxWebhookInput): Effect.Effect<TelnyxWebhookEvent, TelnyxWebhookError> =>
  Effect.gen(function*() {
    const timestamp = input.timestamp?.trim() ?? ""
    const signature = input.signature?.trim() ?? ""
    if (timestamp === "") return yield* fail("timestamp", `the ${TIMESTAMP_HEADER} header is missing`)
    if (signature === "") return yield* fail("signature", `the ${SIGNATURE_HEADER} header is missing`)
    if (!/^\d{1,12}$/.test(timestamp)) return yield* fail("timestamp", `${TIMESTAMP_HEADER} is not Unix seconds`)
    const skew = Math.abs(input.nowSeconds - Number(timestamp))
    if (!(skew <= TOLERANCE_SECONDS)) {
      return yield* fail(
        "timestamp",
        `${TIMESTAMP_HEADER} is ${Math.round(skew)} s from now (tolerance ${TOLERANCE_SECONDS} s)`
      )
    }
    yield* verifySignature(input, timestamp, signature)
    return yield* parse(input.rawBody)
  })
