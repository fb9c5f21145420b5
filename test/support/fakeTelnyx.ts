/**
 * A fake Telnyx v2 for tests (research telnyx.md, "What a faithful fake Telnyx server for tests must
 * implement", messaging part): `POST /v2/messages` and `GET /v2/messages/{id}` with Telnyx's auth,
 * validation and error shapes, scriptable faults, a record of every request, and Ed25519-signed
 * webhooks (`message.sent`, `message.finalized`, `message.received`, or any event type).
 */
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export const DEFAULT_API_KEY = "KEY_fake_telnyx_test_key"

// ------------------------------------------------------------------------------------ signing

export interface Ed25519Signer {
  /** Base64 of the 32 raw public-key bytes, as Mission Control shows it. */
  readonly publicKey: string
  /** Base64 of the 64-byte signature over `${timestamp}|${rawBody}`. */
  readonly sign: (timestamp: string, rawBody: string) => string
}

/** A fresh Ed25519 key pair; the fake holds one, and tests can make another to sign with the wrong key. */
export const createEd25519Signer = (): Ed25519Signer => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519")
  const jwk = publicKey.export({ format: "jwk" })
  const raw = Buffer.from(jwk.x!, "base64url")
  const key: KeyObject = privateKey
  return {
    publicKey: raw.toString("base64"),
    sign: (timestamp, rawBody) => sign(null, Buffer.from(`${timestamp}|${rawBody}`, "utf8"), key).toString("base64")
  }
}

// ------------------------------------------------------------------------------------ payload builders

export interface InboundInput {
  readonly from: string
  readonly to: string
  readonly text?: string | null
  readonly media?: ReadonlyArray<{ readonly url: string; readonly contentType: string | null }>
  readonly id?: string
  readonly messagingProfileId?: string
}

/** A `message.received` payload as Telnyx sends it (note `media[].hash_sha256`, `to[].status "webhook_delivered"`). */
export const inboundPayload = (input: InboundInput): Record<string, unknown> => {
  const media = input.media ?? []
  return {
    record_type: "message",
    id: input.id ?? randomUUID(),
    direction: "inbound",
    type: media.length > 0 ? "MMS" : "SMS",
    messaging_profile_id: input.messagingProfileId ?? "fake-profile",
    from: { phone_number: input.from, carrier: "T-Mobile USA", line_type: "Wireless", status: "received" },
    to: [{ phone_number: input.to, carrier: "Telnyx", line_type: "Wireless", status: "webhook_delivered" }],
    text: input.text === undefined ? "" : input.text,
    media: media.map((m) => ({ url: m.url, content_type: m.contentType, hash_sha256: null, size: null })),
    encoding: "GSM-7",
    parts: 1,
    received_at: new Date().toISOString(),
    errors: []
  }
}

export interface StatusInput {
  readonly id: string
  readonly status: string
  readonly from?: string
  readonly to?: string
  readonly errors?: ReadonlyArray<{ readonly code: string; readonly title: string; readonly detail?: string }>
}

/** A `message.sent` / `message.finalized` payload for an outbound message. */
export const statusPayload = (input: StatusInput): Record<string, unknown> => ({
  record_type: "message",
  id: input.id,
  direction: "outbound",
  type: "SMS",
  from: { phone_number: input.from ?? "+15550000001", carrier: "Telnyx", line_type: "Wireless" },
  to: [{ phone_number: input.to ?? "+15550000002", carrier: "T-Mobile USA", line_type: "Wireless", status: input.status }],
  errors: input.errors ?? [],
  sent_at: new Date().toISOString(),
  completed_at: null
})

// ------------------------------------------------------------------------------------ the server

export type FakeFault =
  /** 429 with `errors[0].code "10011"`; `Retry-After` unless `retryAfterSeconds` is null (default 1). */
  | { readonly type: "rateLimit"; readonly retryAfterSeconds?: number | null }
  /** A 5xx with a Telnyx error body (default 500). */
  | { readonly type: "serverError"; readonly status?: number }
  /** Never answers (until stop() or the client gives up). */
  | { readonly type: "hang" }
  /** 200 with a body that is not a Telnyx message (default: truncated JSON). */
  | { readonly type: "malformed"; readonly body?: string }
  /** Any status with a v2 error envelope. */
  | { readonly type: "error"; readonly status: number; readonly code: string; readonly title: string; readonly detail?: string }

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The parsed body, or undefined when it was not JSON. */
  readonly json: unknown
  readonly at: number
  /** What the fake did: a status code, or "hang". */
  readonly answer: number | "hang"
}

export interface SignedWebhook {
  readonly rawBody: string
  readonly headers: {
    readonly "content-type": "application/json"
    readonly "telnyx-signature-ed25519": string
    readonly "telnyx-timestamp": string
  }
}

export interface WebhookOptions {
  /** Unix seconds; default now. */
  readonly timestamp?: number
  /** The event id (`data.id`); default a fresh uuid. */
  readonly eventId?: string
  /** Sign with this key instead of the fake's own. */
  readonly signer?: Ed25519Signer
  /** Adds `meta: {attempt, delivered_to}` (Telnyx omits it on `message.received`). */
  readonly meta?: { readonly attempt: number; readonly deliveredTo: string }
}

export interface FakeTelnyx {
  readonly baseUrl: string
  readonly apiKey: string
  /** Base64 of the 32 raw bytes of the fake's Ed25519 public key. */
  readonly publicKey: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** The messages accepted so far, by id, as `{data}` returned them. */
  readonly messages: ReadonlyMap<string, Record<string, unknown>>
  /** The next `times` requests to /v2 answer with `fault` (queued after earlier scripts). */
  readonly script: (fault: FakeFault, times?: number) => void
  readonly signedWebhook: (eventType: string, payload: unknown, options?: WebhookOptions) => SignedWebhook
  /** Signs and POSTs an event to `url`; resolves with the receiver's status and body. */
  readonly deliverWebhook: (
    url: string,
    eventType: string,
    payload: unknown,
    options?: WebhookOptions
  ) => Promise<{ readonly status: number; readonly body: string }>
  readonly reset: () => void
  readonly stop: () => Promise<void>
}

const E164 = /^\+[1-9]\d{6,14}$/

interface TelnyxError {
  readonly code: string
  readonly title: string
  readonly detail?: string
  readonly source?: { readonly pointer: string }
}

export const startFakeTelnyx = async (
  options: { readonly apiKey?: string; readonly signer?: Ed25519Signer } = {}
): Promise<FakeTelnyx> => {
  const apiKey = options.apiKey ?? DEFAULT_API_KEY
  const signer = options.signer ?? createEd25519Signer()
  const requests: Array<RecordedRequest> = []
  const messages = new Map<string, Record<string, unknown>>()
  const faults: Array<FakeFault> = []
  const hanging = new Set<ServerResponse>()

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = typeof body === "string" ? body : JSON.stringify(body)
    res.writeHead(status, {
      "content-type": "application/json",
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": status === 429 ? "0" : "99",
      "x-ratelimit-reset": "1",
      ...headers
    })
    res.end(text)
    return status
  }
  const errors = (res: ServerResponse, status: number, list: ReadonlyArray<TelnyxError>, headers?: Record<string, string>) =>
    send(res, status, { errors: list }, headers)

  const applyFault = (res: ServerResponse, fault: FakeFault): number | "hang" => {
    switch (fault.type) {
      case "rateLimit": {
        const after = fault.retryAfterSeconds === undefined ? 1 : fault.retryAfterSeconds
        return errors(
          res,
          429,
          [{ code: "10011", title: "Too many requests", detail: "You have exceeded the maximum number of allowed requests." }],
          after === null ? {} : { "retry-after": String(after) }
        )
      }
      case "serverError":
        return errors(res, fault.status ?? 500, [
          { code: "10007", title: "Unexpected error", detail: "An unexpected error occurred." }
        ])
      case "hang":
        hanging.add(res)
        res.once("close", () => hanging.delete(res))
        return "hang"
      case "malformed":
        return send(res, 200, fault.body ?? '{"data": {"id": "')
      case "error":
        return errors(res, fault.status, [
          { code: fault.code, title: fault.title, ...(fault.detail === undefined ? {} : { detail: fault.detail }) }
        ])
    }
  }

  const createMessage = (res: ServerResponse, json: unknown): number => {
    if (typeof json !== "object" || json === null || Array.isArray(json)) {
      return errors(res, 400, [{ code: "10015", title: "Bad Request", detail: "The request body must be a JSON object." }])
    }
    const b = json as Record<string, unknown>
    const invalid: Array<TelnyxError> = []
    const missing = (field: string) =>
      invalid.push({
        code: "10004",
        title: "Missing required parameter",
        detail: `The '${field}' parameter is required.`,
        source: { pointer: `/${field}` }
      })
    const notE164 = (field: string) =>
      invalid.push({
        code: "10016",
        title: "Phone number must be in +E.164 format",
        detail: `The '${field}' parameter must be in +E.164 format.`,
        source: { pointer: `/${field}` }
      })
    for (const field of ["from", "to"] as const) {
      const v = b[field]
      if (v === undefined || v === null || v === "") missing(field)
      else if (typeof v !== "string" || !E164.test(v)) notE164(field)
    }
    const mediaUrls = b["media_urls"]
    if (mediaUrls !== undefined && (!Array.isArray(mediaUrls) || !mediaUrls.every((u) => typeof u === "string" && /^https?:\/\//.test(u)))) {
      invalid.push({ code: "10015", title: "Invalid parameter", detail: "'media_urls' must be an array of URLs.", source: { pointer: "/media_urls" } })
    }
    const type = b["type"]
    if (type !== undefined && type !== "SMS" && type !== "MMS") {
      invalid.push({ code: "10015", title: "Invalid parameter", detail: "'type' must be SMS or MMS.", source: { pointer: "/type" } })
    }
    const text = b["text"]
    if (text !== undefined && typeof text !== "string") {
      invalid.push({ code: "10015", title: "Invalid parameter", detail: "'text' must be a string.", source: { pointer: "/text" } })
    }
    const media = Array.isArray(mediaUrls) ? (mediaUrls as Array<string>) : []
    const isMms = type === "MMS" || media.length > 0
    if (isMms && media.length === 0) missing("media_urls")
    if (!isMms && (typeof text !== "string" || text === "")) missing("text")
    const profile = b["messaging_profile_id"]
    if (profile !== undefined && typeof profile !== "string") {
      invalid.push({ code: "10015", title: "Invalid parameter", detail: "'messaging_profile_id' must be a string.", source: { pointer: "/messaging_profile_id" } })
    }
    if (invalid.length > 0) return errors(res, 422, invalid)

    const message = {
      id: randomUUID(),
      record_type: "message",
      direction: "outbound",
      type: isMms ? "MMS" : "SMS",
      messaging_profile_id: typeof profile === "string" ? profile : null,
      organization_id: "fake-organization",
      from: { phone_number: b["from"], carrier: "Telnyx", line_type: "Wireless" },
      to: [{ phone_number: b["to"], carrier: "T-Mobile USA", line_type: "Wireless", status: "queued" }],
      cc: [],
      text: typeof text === "string" ? text : null,
      subject: null,
      media: media.map((url) => ({ url, content_type: null, sha256: null, size: null })),
      encoding: "GSM-7",
      parts: 1,
      tags: [],
      cost: null,
      received_at: new Date().toISOString(),
      sent_at: null,
      completed_at: null,
      valid_until: null,
      webhook_url: null,
      webhook_failover_url: null,
      errors: []
    }
    messages.set(message.id, message)
    return send(res, 200, { data: message })
  }

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v
    let json: unknown = undefined
    try {
      json = JSON.parse(body)
    } catch {
      json = undefined
    }
    const answer = ((): number | "hang" => {
      const fault = path.startsWith("/v2/") ? faults.shift() : undefined
      if (fault !== undefined) return applyFault(res, fault)
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        return errors(res, 401, [
          { code: "10009", title: "Authentication failed", detail: "The API key in the request is missing or invalid." }
        ])
      }
      if (req.method === "POST" && path === "/v2/messages") {
        if (json === undefined) {
          return errors(res, 400, [{ code: "10015", title: "Bad Request", detail: "The request body is not valid JSON." }])
        }
        return createMessage(res, json)
      }
      const found = /^\/v2\/messages\/([^/]+)$/.exec(path)
      if (req.method === "GET" && found) {
        const message = messages.get(decodeURIComponent(found[1]!))
        return message
          ? send(res, 200, { data: message })
          : errors(res, 404, [{ code: "10005", title: "Resource not found", detail: "The requested message was not found." }])
      }
      return errors(res, 404, [{ code: "10005", title: "Resource not found", detail: `No route for ${req.method} ${path}.` }])
    })()
    requests.push({ method: req.method ?? "GET", path, headers, body, json, at: Date.now(), answer })
  }

  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")))
  })
  await new Promise<void>((done, fail) => {
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => done())
  })
  const { port } = server.address() as { port: number }

  const signedWebhook = (eventType: string, payload: unknown, opts: WebhookOptions = {}): SignedWebhook => {
    const envelope: Record<string, unknown> = {
      data: {
        record_type: "event",
        id: opts.eventId ?? randomUUID(),
        event_type: eventType,
        occurred_at: new Date().toISOString(),
        payload
      }
    }
    if (opts.meta) envelope["meta"] = { attempt: opts.meta.attempt, delivered_to: opts.meta.deliveredTo }
    const rawBody = JSON.stringify(envelope)
    const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000))
    return {
      rawBody,
      headers: {
        "content-type": "application/json",
        "telnyx-signature-ed25519": (opts.signer ?? signer).sign(timestamp, rawBody),
        "telnyx-timestamp": timestamp
      }
    }
  }

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey,
    publicKey: signer.publicKey,
    requests,
    messages,
    script: (fault, times = 1) => {
      for (let i = 0; i < times; i++) faults.push(fault)
    },
    signedWebhook,
    deliverWebhook: async (url, eventType, payload, opts = {}) => {
      const meta = opts.meta ?? (eventType === "message.received" ? undefined : { attempt: 1, deliveredTo: url })
      const hook = signedWebhook(eventType, payload, meta === undefined ? opts : { ...opts, meta })
      const res = await fetch(url, {
        method: "POST",
        headers: { ...hook.headers, "user-agent": "telnyx-webhooks" },
        body: hook.rawBody,
        signal: AbortSignal.timeout(2_000)
      })
      return { status: res.status, body: await res.text() }
    },
    reset: () => {
      requests.length = 0
      faults.length = 0
      messages.clear()
    },
    stop: async () => {
      for (const res of hanging) res.destroy()
      hanging.clear()
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    }
  }
}
