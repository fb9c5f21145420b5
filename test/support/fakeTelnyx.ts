/**
 * A fake Telnyx v2 for tests (research telnyx.md, "What a faithful fake Telnyx server for tests must
 * implement", messaging and numbers parts): `POST /v2/messages` (only from numbers on the account;
 * US texts from a long code not assigned to an active campaign fail with 40010) and `GET /v2/messages/{id}`;
 * `GET /v2/available_phone_numbers` over a small inventory (deepObject filters, raw or
 * percent-encoded brackets), `POST /v2/number_orders` (only numbers a search returned and nobody
 * owns) and `GET /v2/number_orders/{id}` (pending orders settle there); the 10DLC registry
 * (brand filing and read, the sole-proprietor PIN, campaignBuilder and campaign read, number
 * assignment to a campaign: bare camelCase answers, reviews and assignments settled by `setReview`
 * on the first read); voice (Call Control and
 * AI assistants, fakeTelnyxVoice.ts); with Telnyx's auth, validation and error shapes, scriptable
 * faults, an answer delay for `POST /v2/messages` (`setMessageLatency`: the text is taken, and
 * recorded, when the request arrives; the answer leaves later, so a sender can die with texts in
 * flight), a record of every request, and Ed25519-signed webhooks (`message.sent`,
 * `message.finalized`, `message.received`, the events of a call, or any event type); a messaging
 * profile's default keyword handling (`inboundText`: block rules, 40300 refusals, Telnyx's own
 * auto-replies).
 */
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { type FakeVoice, type HangupInput, makeFakeVoice, type TakeOptions } from "./fakeTelnyxVoice.ts"

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

/**
 * What Telnyx answered a keyword with, in `message.received`'s `autoresponse_type`
 * (https://developers.telnyx.com/docs/messaging/messages/advanced-opt-in-out, "Track opt-out
 * behavior via webhooks"); null for other texts. The page names the field, not its values: the
 * operation in upper case is our assumption, and the adapter does not read it.
 */
export type AutoresponseType = "STOP" | "START" | "HELP" | null

/** A `message.received` payload as Telnyx sends it (note `media[].hash_sha256`, `to[].status "webhook_delivered"`). */
export const inboundPayload = (
  input: InboundInput,
  autoresponseType: AutoresponseType = null
): Record<string, unknown> => {
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
    autoresponse_type: autoresponseType,
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

/**
 * A `message.sent` / `message.finalized` payload for an outbound message; `errors:
 * [blockedByStop(from, to)]` makes it a delivery report of a recipient's opt-out (40300).
 */
export const statusPayload = (input: StatusInput): Record<string, unknown> => ({
  record_type: "message",
  id: input.id,
  direction: "outbound",
  type: "SMS",
  from: { phone_number: input.from ?? "+15550000001", carrier: "Telnyx", line_type: "Wireless" },
  to: [{
    phone_number: input.to ?? "+15550000002",
    carrier: "T-Mobile USA",
    line_type: "Wireless",
    status: input.status
  }],
  errors: input.errors ?? [],
  sent_at: new Date().toISOString(),
  completed_at: null
})

/** A `10dlc.brand.update` payload as documented (research §4, "10DLC webhooks"). */
export const brandUpdatePayload = (brandId: string, eventType = "BRAND_ADD"): Record<string, unknown> => ({
  brandId,
  brandName: "Acme Plumbing",
  tcrBrandId: "BFAKE01",
  description: "Brand registration updated",
  status: "success",
  eventType,
  type: "TCR_BRAND_UPDATE"
})

/** A `10dlc.campaign.update` payload as the SDK's `CampaignStatusUpdate` types it. */
export const campaignUpdatePayload = (
  campaignId: string,
  brandId: string,
  type = "MNO_REVIEW",
  status = "ACCEPTED"
): Record<string, unknown> => ({
  brandId,
  campaignId,
  cspId: "FAKECSP",
  createDate: new Date().toISOString(),
  description: "Campaign status updated",
  isTMobileRegistered: false,
  type,
  status
})

// ------------------------------------------------------------------------------------ numbers

/** A number the fake has for sale. */
export interface FakeListing {
  readonly phoneNumber: string
  readonly type: "local" | "toll_free"
  readonly locality: string
  /** State or province code. */
  readonly administrativeArea: string
  readonly rateCenter: string
  readonly features: ReadonlyArray<string>
}

const local = (
  phoneNumber: string,
  locality: string,
  administrativeArea: string,
  features = ["sms", "mms", "voice"]
): FakeListing => ({
  phoneNumber,
  type: "local",
  locality,
  administrativeArea,
  rateCenter: locality.toUpperCase(),
  features
})

/** Chicago, New York and San Francisco numbers (one Chicago number cannot text), and two toll-free lines. */
export const DEFAULT_INVENTORY: ReadonlyArray<FakeListing> = [
  local("+13122010001", "Chicago", "IL"),
  local("+13122010002", "Chicago", "IL"),
  local("+17732017777", "Chicago", "IL"),
  local("+13122010003", "Chicago", "IL", ["voice"]),
  local("+12124410010", "New York", "NY"),
  local("+14152990020", "San Francisco", "CA"),
  {
    phoneNumber: "+18885550123",
    type: "toll_free",
    locality: "",
    administrativeArea: "",
    rateCenter: "",
    features: ["sms", "voice"]
  },
  {
    phoneNumber: "+18445550177",
    type: "toll_free",
    locality: "",
    administrativeArea: "",
    rateCenter: "",
    features: ["sms", "voice"]
  }
]

/** What an order is on creation, and what it becomes when retrieved. */
export interface OrderFlow {
  readonly onCreate: "pending" | "success" | "failure"
  readonly onRetrieve: "pending" | "success" | "failure"
}
const DEFAULT_ORDER_FLOW: OrderFlow = { onCreate: "pending", onRetrieve: "success" }

// ------------------------------------------------------------------------------------ 10DLC

/** How the registry settles the brands and campaigns still under review, on their next read. */
export interface Review {
  /** A brand: `accepted` (a sole proprietor then awaits its PIN) or REGISTRATION_FAILED with these reasons. */
  readonly brand?: { readonly outcome: "accepted" } | { readonly outcome: "rejected"; readonly failureReasons: string }
  /** A campaign: MNO_PROVISIONED, or `campaignStatus` (default TELNYX_FAILED) with these reasons. */
  readonly campaign?:
    | { readonly outcome: "approved" }
    | { readonly outcome: "rejected"; readonly failureReasons: string; readonly campaignStatus?: string }
  /** A number assignment: ASSIGNED, or FAILED_ASSIGNMENT with these reasons; set undefined, pending ones stay pending. */
  readonly assignment?: { readonly outcome: "assigned" } | {
    readonly outcome: "failed"
    readonly failureReasons: string
  } | undefined
  /** The PIN texted from now on; default a random 6-digit one. */
  readonly otpPin?: string
}
const DEFAULT_REVIEW: Review = {
  brand: { outcome: "accepted" },
  campaign: { outcome: "approved" },
  assignment: { outcome: "assigned" }
}

/** A PIN texted to a sole proprietor, as `GET …/smsOtp` reports it (plus the PIN, for tests). */
export interface FakeOtp {
  readonly pin: string
  readonly referenceId: string
  readonly requestDate: string
  deliveryStatus: "DELIVERED_HANDSET" | "VERIFIED" | "EXPIRED"
}

const ENTITY_TYPES = ["PRIVATE_PROFIT", "PUBLIC_PROFIT", "NON_PROFIT", "GOVERNMENT", "SOLE_PROPRIETOR"]
const VERTICALS = [
  "AGRICULTURE",
  "COMMUNICATION",
  "CONSTRUCTION",
  "EDUCATION",
  "ENERGY",
  "ENTERTAINMENT",
  "FINANCIAL",
  "GAMBLING",
  "GOVERNMENT",
  "HEALTHCARE",
  "HOSPITALITY",
  "HUMAN_RESOURCES",
  "INSURANCE",
  "LEGAL",
  "MANUFACTURING",
  "NGO",
  "POLITICAL",
  "POSTAL",
  "PROFESSIONAL",
  "REAL_ESTATE",
  "RETAIL",
  "TECHNOLOGY",
  "TRANSPORTATION"
]

/** One FastAPI validation failure (`HTTPValidationError.detail[]`, research §6). */
export interface FieldError {
  readonly loc: ReadonlyArray<string | number>
  readonly msg: string
  readonly type: string
}

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
  | {
    readonly type: "error"
    readonly status: number
    readonly code: string
    readonly title: string
    readonly detail?: string
  }
  /** The 10DLC validation shape `{detail: [{loc, msg, type}]}` (default 422). */
  | { readonly type: "validation"; readonly status?: number; readonly detail: ReadonlyArray<FieldError> }

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  /** The query string, decoded (`filter[country_code]`, whether the brackets came raw or percent-encoded). */
  readonly query: URLSearchParams
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
  /** When the event happened (`data.occurred_at`); default now. */
  readonly occurredAt?: string
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
  /** Number orders by id, as `{data}` last returned them. */
  readonly orders: ReadonlyMap<string, Record<string, unknown>>
  /** Numbers bought on the account (ours or, through `takeNumber`, another customer's). */
  readonly owned: ReadonlySet<string>
  /** Another Telnyx customer buys this number now. */
  readonly takeNumber: (phoneNumber: string) => void
  /**
   * Puts a number on our account, as if ordered before (in the portal): it may send and be assigned.
   * `registered`: also assigned to an active campaign set up in the portal, so its US texts go out.
   * `messagingProfileId`: the profile it is on (default `DEFAULT_PROFILE`).
   */
  readonly addNumber: (
    phoneNumber: string,
    options?: { readonly registered?: boolean; readonly messagingProfileId?: string }
  ) => void
  /**
   * Someone texts one of our numbers: the messaging profile's default keyword handling runs (a block
   * rule, its removal, Telnyx's auto-reply: `telnyxKeywordOp`), and the answer is the
   * `message.received` payload Telnyx then delivers, keyword texts included, with
   * `autoresponse_type` saying what Telnyx answered.
   */
  readonly inboundText: (input: InboundInput) => Record<string, unknown>
  /** Whether a block rule on the profile (default `DEFAULT_PROFILE`) refuses texts to `recipient`. */
  readonly blocked: (recipient: string, messagingProfileId?: string) => boolean
  /** The texts Telnyx sent by itself in answer to keywords, in order. */
  readonly autoReplies: ReadonlyArray<AutoReply>
  /** How orders go from now on (until reset). */
  readonly setOrderFlow: (flow: OrderFlow) => void
  /** 10DLC brands by `brandId`, and campaigns by `campaignId`, as last answered. */
  readonly brands: ReadonlyMap<string, Record<string, unknown>>
  readonly campaigns: ReadonlyMap<string, Record<string, unknown>>
  /** Number assignments (`PhoneNumberCampaign`) by phone number, as last answered. */
  readonly assignments: ReadonlyMap<string, Record<string, unknown>>
  /** The last PIN texted to each brand; a test may set `deliveryStatus` to `EXPIRED`. */
  readonly otps: ReadonlyMap<string, FakeOtp>
  /** How reviews settle from now on (merged into the current one; default accepted and approved). */
  readonly setReview: (review: Review) => void
  /**
   * From now on (until reset), each `POST /v2/messages` is handled when it arrives (the message
   * taken, the request recorded with its answer) and answered `ms` later: a fixed delay, or one drawn
   * uniformly from `[min, max]` per request. 0 (the default) answers at once.
   */
  readonly setMessageLatency: (ms: number | { readonly min: number; readonly max: number }) => void
  /** The next `times` requests to /v2 answer with `fault` (queued after earlier scripts). */
  readonly script: (fault: FakeFault, times?: number) => void
  readonly signedWebhook: (eventType: string, payload: unknown, options?: WebhookOptions) => SignedWebhook
  /** Calls, assistants and conversations (fakeTelnyxVoice.ts). */
  readonly voice: FakeVoice
  /** The signed webhooks of a call from its start to its end (`voice.lifecycle`), in order. */
  readonly callWebhooks: (callControlId: string, hangup?: HangupInput) => ReadonlyArray<SignedWebhook>
  /**
   * The call webhooks the fake has queued (`voice.takePending`), signed, the queue emptied: in the
   * order they happened or reversed, each once or twice (a repeat keeps its event id).
   */
  readonly pendingCallWebhooks: (options?: TakeOptions) => ReadonlyArray<SignedWebhook & { readonly eventType: string }>
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
/** NANP toll-free codes: not 10DLC (they are verified, not registered). */
const TOLL_FREE = /^\+18(00|33|44|55|66|77|88)\d{7}$/

/** The delivery error of a 10DLC message from a number not assigned to an active campaign (error reference). */
export const NOT_10DLC_REGISTERED: TelnyxError = {
  code: "40010",
  title: "Not 10DLC registered",
  detail: "The sending number is not 10DLC-registered but is required to be by the carrier."
}

/** One entry of the v2 error envelope `{errors: [...]}` (research §6). */
export interface TelnyxError {
  readonly code: string
  readonly title: string
  readonly detail?: string
  readonly source?: { readonly pointer: string }
}

// ------------------------------------------------------------------------------------ keywords and block rules

/** The profile a number is on when nothing says which (`addNumber`, an order without `messaging_profile_id`). */
export const DEFAULT_PROFILE = "fake-profile"

/**
 * A messaging profile's keywords without Advanced Opt-In/Out configured
 * (https://developers.telnyx.com/docs/messaging/messages/advanced-opt-in-out, "Default behavior" and
 * "Operation types"): the opt-out words create a block rule for the sender, START and UNSTOP remove
 * it, HELP gets the help response. INFO is no default keyword there (the page's HELP example adds
 * it by configuration), so Telnyx answers no INFO here.
 */
const TELNYX_OPS: ReadonlyArray<readonly ["stop" | "start" | "help", ReadonlyArray<string>]> = [
  ["stop", ["STOP", "STOPALL", "STOP ALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"]],
  ["start", ["START", "UNSTOP"]],
  ["help", ["HELP"]]
]

/**
 * The operation a text triggers: only a text that is solely the keyword, "case and whitespace
 * insensitive" (https://developers.telnyx.com/api/errors/40300; "please stop all messages" is none,
 * https://support.telnyx.com/en/articles/1270091-sms-opt-out-keywords-and-stop-words). Punctuation
 * is not whitespace: `Stop.` is no keyword to Telnyx.
 */
export const telnyxKeywordOp = (text: string | null | undefined): "stop" | "start" | "help" | null => {
  const word = (text ?? "").trim().replace(/\s+/g, " ").toUpperCase()
  return TELNYX_OPS.find(([, words]) => words.includes(word))?.[0] ?? null
}

/**
 * What Telnyx texts back, "a generic unsubscribed message from the number that received the opt
 * out message" (support article above, whose wording we have cut short after "Reply"); the opt-in
 * and help texts are the fake's own. Tests look at the operation, not the words.
 */
const AUTO_REPLY_TEXT: Record<"stop" | "start" | "help", string> = {
  stop: "You have successfully been unsubscribed, you will not receive any more messages from this number. " +
    "Reply START to resubscribe.",
  start: "You have successfully been re-subscribed to messages from this number. Reply HELP for help.",
  help: "Reply STOP to unsubscribe. Msg&Data Rates May Apply."
}

/** A text Telnyx sent by itself in answer to a keyword: `from` our number, `to` whoever texted it. */
export interface AutoReply {
  readonly op: "stop" | "start" | "help"
  readonly from: string
  readonly to: string
  readonly text: string
  readonly messagingProfileId: string
}

/**
 * The refusal of a send to a blocked recipient, as documented (advanced-opt-in-out page above); its
 * HTTP status is 409 (https://developers.telnyx.com/api/errors/40300, "HTTP Status – 409").
 */
export const blockedByStop = (from: string, to: string): TelnyxError => ({
  code: "40300",
  title: "Blocked due to STOP message",
  detail: `Messages cannot be sent from '${from}' to '${to}' due to an existing block rule.`
})

export const startFakeTelnyx = async (
  options: {
    readonly apiKey?: string
    readonly signer?: Ed25519Signer
    readonly inventory?: ReadonlyArray<FakeListing>
  } = {}
): Promise<FakeTelnyx> => {
  const inventory = options.inventory ?? DEFAULT_INVENTORY
  /** Numbers a search returned: only these can be ordered (research §1: "a number can only be ordered if a recent search returned it"). */
  const searched = new Set<string>()
  const owned = new Set<string>()
  /** Numbers on our account (ordered by us, or `addNumber`): `owned` also holds other customers'. */
  const ours = new Set<string>()
  const orders = new Map<string, Record<string, unknown>>()
  let orderFlow = DEFAULT_ORDER_FLOW
  const apiKey = options.apiKey ?? DEFAULT_API_KEY
  const signer = options.signer ?? createEd25519Signer()
  const requests: Array<RecordedRequest> = []
  const messages = new Map<string, Record<string, unknown>>()
  const faults: Array<FakeFault> = []
  /** The messaging profile of each number on our account that is not on `DEFAULT_PROFILE`. */
  const profiles = new Map<string, string>()
  const profileOf = (phoneNumber: string) => profiles.get(phoneNumber) ?? DEFAULT_PROFILE
  /**
   * Block rules by profile and recipient, each with the numbers the recipient opted out from: a rule
   * covers every number on the profile (advanced-opt-in-out, "Block rules operate at the messaging
   * profile level"), and only START or UNSTOP "to the exact same number they opted out from" lifts it
   * (support article on stop words).
   */
  const blockRules = new Map<string, Set<string>>()
  const ruleKey = (profile: string, recipient: string) => `${profile} ${recipient}`
  const autoReplies: Array<AutoReply> = []
  const hanging = new Set<ServerResponse>()
  let messageLatency: { readonly min: number; readonly max: number } = { min: 0, max: 0 }
  /** How long each answer is held (`setMessageLatency`), and the answers held now (stop() drops them). */
  const delayOf = new WeakMap<ServerResponse, number>()
  const delayed = new Map<ServerResponse, ReturnType<typeof setTimeout>>()

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = typeof body === "string" ? body : JSON.stringify(body)
    const answer = () => {
      delayed.delete(res)
      // The client may be gone (a killed sender): what it would have read is dropped.
      if (res.destroyed) return
      res.writeHead(status, {
        "content-type": "application/json",
        "x-ratelimit-limit": "100",
        "x-ratelimit-remaining": status === 429 ? "0" : "99",
        "x-ratelimit-reset": "1",
        ...headers
      })
      res.end(text)
    }
    const delay = delayOf.get(res) ?? 0
    if (delay > 0) delayed.set(res, setTimeout(answer, delay))
    else answer()
    return status
  }
  const errors = (
    res: ServerResponse,
    status: number,
    list: ReadonlyArray<TelnyxError>,
    headers?: Record<string, string>
  ) => send(res, status, { errors: list }, headers)
  const voice = makeFakeVoice({ send, errors })

  const applyFault = (res: ServerResponse, fault: FakeFault): number | "hang" => {
    switch (fault.type) {
      case "rateLimit": {
        const after = fault.retryAfterSeconds === undefined ? 1 : fault.retryAfterSeconds
        return errors(
          res,
          429,
          [{
            code: "10011",
            title: "Too many requests",
            detail: "You have exceeded the maximum number of allowed requests."
          }],
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
        return send(res, 200, fault.body ?? "{\"data\": {\"id\": \"")
      case "error":
        return errors(res, fault.status, [
          { code: fault.code, title: fault.title, ...(fault.detail === undefined ? {} : { detail: fault.detail }) }
        ])
      case "validation":
        return send(res, fault.status ?? 422, { detail: fault.detail })
    }
  }

  // ---------------------------------------------------------------------------------- 10DLC

  const brands = new Map<string, Record<string, unknown>>()
  const campaigns = new Map<string, Record<string, unknown>>()
  const otps = new Map<string, FakeOtp>()
  const assignments = new Map<string, Record<string, unknown>>()
  let review: Review = DEFAULT_REVIEW

  const invalid = (res: ServerResponse, list: ReadonlyArray<FieldError>) => send(res, 422, { detail: list })
  const missingField = (field: string): FieldError => ({
    loc: ["body", field],
    msg: "field required",
    type: "value_error.missing"
  })
  const notFound = (res: ServerResponse, what: string) =>
    errors(res, 404, [{ code: "10005", title: "Resource not found", detail: `${what} not found` }])
  const refuse = (res: ServerResponse, title: string, detail: string) =>
    errors(res, 400, [{ code: "10015", title, detail }])
  const fields = (json: unknown) =>
    (typeof json === "object" && json !== null && !Array.isArray(json) ? json : {}) as Record<string, unknown>
  const text = (v: unknown) => typeof v === "string" && v.trim() !== ""

  const createBrand = (res: ServerResponse, json: unknown): number => {
    const b = fields(json)
    const list: Array<FieldError> = []
    for (const f of ["entityType", "displayName", "country", "email", "vertical"]) {
      if (!text(b[f])) list.push(missingField(f))
    }
    if (text(b["entityType"]) && !ENTITY_TYPES.includes(b["entityType"] as string)) {
      list.push({
        loc: ["body", "entityType"],
        msg: "value is not a valid enumeration member",
        type: "type_error.enum"
      })
    }
    if (text(b["vertical"]) && !VERTICALS.includes(b["vertical"] as string)) {
      list.push({ loc: ["body", "vertical"], msg: "value is not a valid enumeration member", type: "type_error.enum" })
    }
    const sole = b["entityType"] === "SOLE_PROPRIETOR"
    for (const f of sole ? ["firstName", "lastName", "mobilePhone"] : ["companyName"]) {
      if (!text(b[f])) list.push(missingField(f))
    }
    for (const f of ["mobilePhone", "phone"]) {
      if (b[f] !== undefined && !(typeof b[f] === "string" && E164.test(b[f]))) {
        list.push({ loc: ["body", f], msg: "must be in +E.164 format", type: "value_error" })
      }
    }
    if (b["ein"] !== undefined && !(typeof b["ein"] === "string" && /^\d{9}$/.test(b["ein"]))) {
      list.push({ loc: ["body", "ein"], msg: "EIN must be 9 digits", type: "value_error" })
    }
    if (list.length > 0) return invalid(res, list)
    const now = new Date().toISOString()
    const brand = {
      ...b,
      brandId: randomUUID(),
      tcrBrandId: `B${randomUUID().slice(0, 6).toUpperCase()}`,
      cspId: "FAKECSP",
      status: "REGISTRATION_PENDING",
      identityStatus: sole ? "SELF_DECLARED" : "UNVERIFIED",
      failureReasons: null,
      createdAt: now,
      updatedAt: now
    }
    brands.set(brand.brandId, brand)
    return send(res, 200, brand)
  }

  /** A brand under review settles as `review.brand` says on its first read. */
  const readBrand = (res: ServerResponse, brandId: string): number => {
    const brand = brands.get(brandId)
    if (!brand) return notFound(res, "Brand")
    if (brand["status"] === "REGISTRATION_PENDING" && review.brand) {
      const sole = brand["entityType"] === "SOLE_PROPRIETOR"
      const settled = review.brand.outcome === "accepted"
        ? { status: "OK", identityStatus: sole ? "SELF_DECLARED" : "VERIFIED" }
        : { status: "REGISTRATION_FAILED", identityStatus: "UNVERIFIED", failureReasons: review.brand.failureReasons }
      brands.set(brandId, { ...brand, ...settled, updatedAt: new Date().toISOString() })
    }
    const campaignsCount = [...campaigns.values()].filter((c) => c["brandId"] === brandId).length
    return send(res, 200, { ...brands.get(brandId), assignedCampaignsCount: campaignsCount })
  }

  const triggerOtp = (res: ServerResponse, brandId: string, json: unknown): number => {
    const brand = brands.get(brandId)
    if (!brand) return notFound(res, "Brand")
    const b = fields(json)
    const list: Array<FieldError> = []
    for (const f of ["pinSms", "successSms"]) {
      if (!text(b[f])) list.push(missingField(f))
      else if ((b[f] as string).length > 500) {
        list.push({
          loc: ["body", f],
          msg: "ensure this value has at most 500 characters",
          type: "value_error.any_str.max_length"
        })
      }
    }
    if (text(b["pinSms"]) && !(b["pinSms"] as string).includes("@OTP_PIN@")) {
      list.push({ loc: ["body", "pinSms"], msg: "must contain @OTP_PIN@", type: "value_error" })
    }
    if (list.length > 0) return invalid(res, list)
    if (brand["entityType"] !== "SOLE_PROPRIETOR") {
      return refuse(res, "Invalid brand", "OTP verification is only available for SOLE_PROPRIETOR brands.")
    }
    if (brand["identityStatus"] === "VERIFIED") return refuse(res, "Invalid brand", "The brand is already verified.")
    const otp: FakeOtp = {
      pin: review.otpPin ?? String(Math.floor(Math.random() * 1_000_000)).padStart(6, "0"),
      referenceId: randomUUID(),
      requestDate: new Date().toISOString(),
      deliveryStatus: "DELIVERED_HANDSET"
    }
    otps.set(brandId, otp)
    return send(res, 200, { brandId, referenceId: otp.referenceId })
  }

  const otpStatus = (res: ServerResponse, brandId: string): number => {
    const otp = otps.get(brandId)
    const brand = brands.get(brandId)
    if (!otp || !brand) {
      return send(res, 404, {
        detail: [{ loc: ["path", "brandId"], msg: "No OTP request found for this brand", type: "not_found" }]
      })
    }
    const { pin: _pin, ...status } = otp
    return send(res, 200, { brandId, mobilePhone: brand["mobilePhone"], ...status })
  }

  const verifyOtp = (res: ServerResponse, brandId: string, json: unknown): number => {
    const brand = brands.get(brandId)
    if (!brand) return notFound(res, "Brand")
    const pin = fields(json)["otpPin"]
    if (typeof pin !== "string" || pin.length < 4 || pin.length > 10) {
      return invalid(res, [{
        loc: ["body", "otpPin"],
        msg: "ensure this value has 4 to 10 characters",
        type: "value_error"
      }])
    }
    const otp = otps.get(brandId)
    if (!otp || otp.deliveryStatus === "VERIFIED") {
      return refuse(res, "No OTP pending", "No OTP verification is pending for this brand.")
    }
    if (otp.deliveryStatus === "EXPIRED") {
      return refuse(res, "OTP expired", "The OTP pin has expired. Request a new one.")
    }
    if (pin !== otp.pin) return refuse(res, "Invalid OTP", "The OTP pin is invalid.")
    otp.deliveryStatus = "VERIFIED"
    brands.set(brandId, { ...brand, status: "OK", identityStatus: "VERIFIED", updatedAt: new Date().toISOString() })
    res.writeHead(204, { "x-ratelimit-limit": "100", "x-ratelimit-remaining": "99", "x-ratelimit-reset": "1" })
    res.end()
    return 204
  }

  const createCampaign = (res: ServerResponse, json: unknown): number => {
    const b = fields(json)
    const list = ["brandId", "usecase", "description"].filter((f) => !text(b[f])).map(missingField)
    if (list.length > 0) return invalid(res, list)
    const brand = brands.get(b["brandId"] as string)
    if (!brand) return refuse(res, "Invalid brand", `Brand ${String(b["brandId"])} does not exist.`)
    if (brand["identityStatus"] !== "VERIFIED" && brand["identityStatus"] !== "VETTED_VERIFIED") {
      return refuse(res, "Brand not verified", "The brand must be verified before a campaign can be created.")
    }
    const sole = brand["entityType"] === "SOLE_PROPRIETOR"
    if (sole && [...campaigns.values()].some((c) => c["brandId"] === brand["brandId"])) {
      return refuse(res, "Campaign limit reached", "A SOLE_PROPRIETOR brand can have only one campaign.")
    }
    const campaign = {
      ...b,
      campaignId: randomUUID(),
      tcrCampaignId: `C${randomUUID().slice(0, 6).toUpperCase()}`,
      tcrBrandId: brand["tcrBrandId"],
      cspId: "FAKECSP",
      campaignStatus: "TCR_PENDING",
      submissionStatus: "PENDING",
      status: "ACTIVE",
      failureReasons: null,
      createDate: new Date().toISOString()
    }
    campaigns.set(campaign.campaignId, campaign)
    return send(res, 200, campaign)
  }

  /** A campaign under review settles as `review.campaign` says on its first read. */
  const readCampaign = (res: ServerResponse, campaignId: string): number => {
    const campaign = campaigns.get(campaignId)
    if (!campaign) return notFound(res, "Campaign")
    if (campaign["campaignStatus"] === "TCR_PENDING" && review.campaign) {
      const settled = review.campaign.outcome === "approved"
        ? { campaignStatus: "MNO_PROVISIONED", submissionStatus: "CREATED" }
        : {
          campaignStatus: review.campaign.campaignStatus ?? "TELNYX_FAILED",
          submissionStatus: "CREATED",
          failureReasons: review.campaign.failureReasons
        }
      campaigns.set(campaignId, { ...campaign, ...settled })
    }
    return send(res, 200, campaigns.get(campaignId))
  }

  /**
   * `POST /v2/10dlc/phone_number_campaigns` (and the legacy `phoneNumberCampaign` the docs guide
   * still uses). Telnyx's rules (https://developers.telnyx.com/docs/messaging/10dlc/phone-number-assignment):
   * only a number on the account (a long code on a messaging profile), only to an ACTIVE campaign
   * (approved by carriers: MNO_PROVISIONED), one campaign per number at a time. The refusals'
   * codes are not documented; the answer is a `PhoneNumberCampaign` with `assignmentStatus`
   * PENDING_ASSIGNMENT (https://developers.telnyx.com/api-reference/phone-number-campaigns/create-new-phone-number-campaign).
   */
  const assignNumber = (res: ServerResponse, json: unknown): number => {
    const b = fields(json)
    const list = ["phoneNumber", "campaignId"].filter((f) => !text(b[f])).map(missingField)
    if (list.length > 0) return invalid(res, list)
    const phoneNumber = b["phoneNumber"] as string
    if (!ours.has(phoneNumber)) {
      return refuse(res, "Invalid phone number", `${phoneNumber} is not a phone number on this account.`)
    }
    const campaign = campaigns.get(b["campaignId"] as string)
    if (!campaign) return refuse(res, "Invalid campaign", `Campaign ${String(b["campaignId"])} does not exist.`)
    if (campaign["campaignStatus"] !== "MNO_PROVISIONED") {
      return refuse(res, "Campaign not active", "A number can only be assigned to an active campaign.")
    }
    if (assignments.has(phoneNumber)) {
      return refuse(res, "Number already assigned", `${phoneNumber} is already assigned to a campaign.`)
    }
    const now = new Date().toISOString()
    const assignment = {
      phoneNumber,
      campaignId: campaign["campaignId"],
      brandId: campaign["brandId"],
      tcrBrandId: campaign["tcrBrandId"],
      tcrCampaignId: campaign["tcrCampaignId"],
      telnyxCampaignId: campaign["campaignId"],
      assignmentStatus: "PENDING_ASSIGNMENT",
      failureReasons: null,
      createdAt: now,
      updatedAt: now
    }
    assignments.set(phoneNumber, assignment)
    return send(res, 200, assignment)
  }

  /** `GET /v2/10dlc/phone_number_campaigns/{phoneNumber}`: a pending assignment settles as `review.assignment` says. */
  const readAssignment = (res: ServerResponse, phoneNumber: string): number => {
    const assignment = assignments.get(phoneNumber)
    if (!assignment) return notFound(res, "Phone number campaign")
    if (assignment["assignmentStatus"] === "PENDING_ASSIGNMENT" && review.assignment) {
      const settled = review.assignment.outcome === "assigned"
        ? { assignmentStatus: "ASSIGNED" }
        : { assignmentStatus: "FAILED_ASSIGNMENT", failureReasons: review.assignment.failureReasons }
      assignments.set(phoneNumber, { ...assignment, ...settled, updatedAt: new Date().toISOString() })
    }
    return send(res, 200, assignments.get(phoneNumber))
  }

  /** Whether a number is assigned to a campaign carriers accept traffic for (ASSIGNED to an MNO_PROVISIONED one). */
  const registered = (phoneNumber: string) => {
    const assignment = assignments.get(phoneNumber)
    return assignment?.["assignmentStatus"] === "ASSIGNED" &&
      campaigns.get(String(assignment["campaignId"]))?.["campaignStatus"] === "MNO_PROVISIONED"
  }

  /** The 10DLC routes; undefined when the path is not one. */
  const registry = (method: string, path: string, json: unknown, res: ServerResponse): number | undefined => {
    const id = (re: RegExp) => {
      const m = re.exec(path)
      return m ? decodeURIComponent(m[1]!) : undefined
    }
    if (method === "POST" && path === "/v2/10dlc/brand") return createBrand(res, json)
    if (method === "POST" && path === "/v2/10dlc/campaignBuilder") return createCampaign(res, json)
    if (
      method === "POST" && (path === "/v2/10dlc/phone_number_campaigns" || path === "/v2/10dlc/phoneNumberCampaign")
    ) {
      return assignNumber(res, json)
    }
    const assigned = id(/^\/v2\/10dlc\/phone_number_campaigns\/([^/]+)$/)
    if (assigned !== undefined && method === "GET") return readAssignment(res, assigned)
    const otpBrand = id(/^\/v2\/10dlc\/brand\/([^/]+)\/smsOtp$/)
    if (otpBrand !== undefined && method === "POST") return triggerOtp(res, otpBrand, json)
    if (otpBrand !== undefined && method === "GET") return otpStatus(res, otpBrand)
    if (otpBrand !== undefined && method === "PUT") return verifyOtp(res, otpBrand, json)
    const brand = id(/^\/v2\/10dlc\/brand\/([^/]+)$/)
    if (brand !== undefined && method === "GET") return readBrand(res, brand)
    const campaign = id(/^\/v2\/10dlc\/campaign\/([^/]+)$/)
    if (campaign !== undefined && method === "GET") return readCampaign(res, campaign)
    return undefined
  }

  const createMessage = (res: ServerResponse, json: unknown): number => {
    if (typeof json !== "object" || json === null || Array.isArray(json)) {
      return errors(res, 400, [{
        code: "10015",
        title: "Bad Request",
        detail: "The request body must be a JSON object."
      }])
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
    if (
      mediaUrls !== undefined &&
      (!Array.isArray(mediaUrls) || !mediaUrls.every((u) => typeof u === "string" && /^https?:\/\//.test(u)))
    ) {
      invalid.push({
        code: "10015",
        title: "Invalid parameter",
        detail: "'media_urls' must be an array of URLs.",
        source: { pointer: "/media_urls" }
      })
    }
    const type = b["type"]
    if (type !== undefined && type !== "SMS" && type !== "MMS") {
      invalid.push({
        code: "10015",
        title: "Invalid parameter",
        detail: "'type' must be SMS or MMS.",
        source: { pointer: "/type" }
      })
    }
    const text = b["text"]
    if (text !== undefined && typeof text !== "string") {
      invalid.push({
        code: "10015",
        title: "Invalid parameter",
        detail: "'text' must be a string.",
        source: { pointer: "/text" }
      })
    }
    const media = Array.isArray(mediaUrls) ? (mediaUrls as Array<string>) : []
    const isMms = type === "MMS" || media.length > 0
    if (isMms && media.length === 0) missing("media_urls")
    if (!isMms && (typeof text !== "string" || text === "")) missing("text")
    const profile = b["messaging_profile_id"]
    if (profile !== undefined && typeof profile !== "string") {
      invalid.push({
        code: "10015",
        title: "Invalid parameter",
        detail: "'messaging_profile_id' must be a string.",
        source: { pointer: "/messaging_profile_id" }
      })
    }
    if (invalid.length > 0) return errors(res, 422, invalid)
    const from = b["from"] as string
    // A number sends only from the account that has it on a messaging profile
    // (https://developers.telnyx.com/docs/messaging/messages/phone-number-configuration). The code is
    // the error reference's "Invalid source number" (https://developers.telnyx.com/docs/messaging/messages/error-codes);
    // that Telnyx answers it at once rather than in a webhook is our assumption: the adapter reads only the 4xx.
    if (!ours.has(from)) {
      return errors(res, 400, [{
        code: "40013",
        title: "Invalid source number",
        detail: `${from} is not a messaging-enabled number on this account.`,
        source: { pointer: "/from" }
      }])
    }
    // A block rule on the sending number's profile refuses the text at the API (advanced-opt-in-out).
    const recipient = b["to"] as string
    if (blockRules.has(ruleKey(profileOf(from), recipient))) return errors(res, 409, [blockedByStop(from, recipient)])
    // A US long code texts US numbers only once assigned to an active 10DLC campaign
    // (https://developers.telnyx.com/docs/messaging/10dlc/phone-number-assignment). Telnyx accepts
    // the message and fails it in delivery with 40010 "Not 10DLC registered" (error reference,
    // "Delivery errors (40xxx)": reported in `message.finalized`), as the message records here.
    const to = b["to"] as string
    const unregistered = from.startsWith("+1") && !TOLL_FREE.test(from) && to.startsWith("+1") && !registered(from)

    const message = {
      id: randomUUID(),
      record_type: "message",
      direction: "outbound",
      type: isMms ? "MMS" : "SMS",
      messaging_profile_id: typeof profile === "string" ? profile : null,
      organization_id: "fake-organization",
      from: { phone_number: b["from"], carrier: "Telnyx", line_type: "Wireless" },
      to: [{
        phone_number: b["to"],
        carrier: "T-Mobile USA",
        line_type: "Wireless",
        status: unregistered ? "delivery_failed" : "queued"
      }],
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
      completed_at: unregistered ? new Date().toISOString() : null,
      valid_until: null,
      webhook_url: null,
      webhook_failover_url: null,
      errors: unregistered ? [NOT_10DLC_REGISTERED] : []
    }
    messages.set(message.id, message)
    return send(res, 200, { data: message })
  }

  const searchNumbers = (res: ServerResponse, query: URLSearchParams): number => {
    const country = query.get("filter[country_code]")
    if (!country) {
      return errors(res, 422, [
        {
          code: "10004",
          title: "Missing required parameter",
          detail: "Country code is always required.",
          source: { pointer: "/filter/country_code" }
        }
      ])
    }
    const filters = [...query.entries()].filter(([k]) => k.startsWith("filter["))
    // Wildcards in any filter give no results (research §1).
    if (filters.some(([, v]) => /[*%]/.test(v))) {
      return send(res, 200, { data: [], meta: { total_results: 0, best_effort_results: 0 } })
    }
    const get = (k: string) => query.get(k) ?? undefined
    const type = get("filter[phone_number_type]")
    const ndc = get("filter[national_destination_code]")
    const startsWith = get("filter[phone_number][starts_with]")
    const endsWith = get("filter[phone_number][ends_with]")
    const contains = get("filter[phone_number][contains]")
    const locality = get("filter[locality]")?.toLowerCase()
    const area = get("filter[administrative_area]")?.toUpperCase()
    const features = query.getAll("filter[features]").concat(query.getAll("filter[features][]")).flatMap((f) =>
      f.split(",")
    ).filter(Boolean)
    const limit = Number(get("filter[limit]") ?? "50")
    const found = inventory.filter((n) => {
      // The national number, less the NDC when one is given (research §1: starts_with/contains "exclude the NDC").
      const national = n.phoneNumber.slice(2)
      const rest = ndc === undefined ? national : national.slice(ndc.length)
      return (
        country === "US" &&
        !owned.has(n.phoneNumber) &&
        (type === undefined || n.type === type) &&
        (ndc === undefined || national.startsWith(ndc)) &&
        (startsWith === undefined || rest.startsWith(startsWith)) &&
        (endsWith === undefined || rest.endsWith(endsWith)) &&
        (contains === undefined || rest.includes(contains)) &&
        (locality === undefined || n.locality.toLowerCase() === locality) &&
        (area === undefined || n.administrativeArea === area) &&
        features.every((f) => n.features.includes(f))
      )
    }).slice(0, limit)
    for (const n of found) searched.add(n.phoneNumber)
    return send(res, 200, {
      data: found.map((n) => ({
        record_type: "available_phone_number",
        phone_number: n.phoneNumber,
        vanity_format: "",
        best_effort: false,
        quickship: n.type === "toll_free",
        reservable: true,
        region_information: [
          ...(n.type === "local"
            ? [
              { region_type: "rate_center", region_name: n.rateCenter },
              { region_type: "state", region_name: n.administrativeArea }
            ]
            : []),
          { region_type: "country_code", region_name: "US" }
        ],
        // What Telnyx charges us; the adapter quotes our retail price instead.
        cost_information: {
          monthly_cost: n.type === "local" ? "1.00000" : "2.00000",
          upfront_cost: "1.00000",
          currency: "USD"
        },
        features: n.features.map((name) => ({ name }))
      })),
      meta: { total_results: found.length, best_effort_results: 0 }
    })
  }

  const orderView = (order: Record<string, unknown>, status: string): Record<string, unknown> => {
    const lines = order["phone_numbers"] as Array<Record<string, unknown>>
    return {
      ...order,
      status,
      updated_at: new Date().toISOString(),
      phone_numbers: lines.map((l) => ({ ...l, status }))
    }
  }

  const createOrder = (res: ServerResponse, json: unknown): number => {
    const b = (typeof json === "object" && json !== null && !Array.isArray(json) ? json : {}) as Record<string, unknown>
    const lines = b["phone_numbers"]
    if (!Array.isArray(lines) || lines.length === 0) {
      return errors(res, 422, [
        {
          code: "10004",
          title: "Missing required parameter",
          detail: "The 'phone_numbers' parameter is required.",
          source: { pointer: "/phone_numbers" }
        }
      ])
    }
    const numbers = lines.map((
      l
    ) => (typeof l === "object" && l !== null ? (l as Record<string, unknown>)["phone_number"] : undefined))
    const bad = numbers.find((n) => typeof n !== "string" || !E164.test(n))
    if (bad !== undefined) {
      return errors(res, 422, [
        {
          code: "10016",
          title: "Phone number must be in +E.164 format",
          detail: "The 'phone_number' parameter must be in +E.164 format.",
          source: { pointer: "/phone_numbers/0/phone_number" }
        }
      ])
    }
    // The code and wording of this refusal are not documented (research §2): the adapter must rely on neither.
    const unavailable = (numbers as Array<string>).find((n) => !searched.has(n) || owned.has(n))
    if (unavailable !== undefined) {
      return errors(res, 422, [
        {
          code: "85001",
          title: "Number not available",
          detail: `The phone number ${unavailable} is no longer available for purchase.`,
          source: { pointer: "/phone_numbers/0/phone_number" }
        }
      ])
    }
    for (const n of numbers as Array<string>) {
      owned.add(n)
      ours.add(n)
      if (typeof b["messaging_profile_id"] === "string") profiles.set(n, b["messaging_profile_id"])
    }
    const now = new Date().toISOString()
    const order = {
      id: randomUUID(),
      record_type: "number_order",
      phone_numbers_count: numbers.length,
      connection_id: typeof b["connection_id"] === "string" ? b["connection_id"] : null,
      messaging_profile_id: typeof b["messaging_profile_id"] === "string" ? b["messaging_profile_id"] : null,
      billing_group_id: null,
      customer_reference: typeof b["customer_reference"] === "string" ? b["customer_reference"] : null,
      requirements_met: true,
      sub_number_orders_ids: [],
      created_at: now,
      phone_numbers: (numbers as Array<string>).map((n) => ({
        id: randomUUID(),
        record_type: "number_order_phone_number",
        phone_number: n,
        phone_number_type: inventory.find((l) => l.phoneNumber === n)?.type ?? "local",
        country_code: "US",
        requirements_met: true,
        requirements_status: "approved",
        regulatory_requirements: []
      }))
    }
    return settleOrder(res, order, orderFlow.onCreate)
  }

  /** Records the order in `status` (a failed order frees its numbers) and answers it. */
  const settleOrder = (res: ServerResponse, order: Record<string, unknown>, status: OrderFlow["onCreate"]): number => {
    const view = orderView(order, status)
    orders.set(String(order["id"]), view)
    if (status === "failure") {
      for (const l of view["phone_numbers"] as Array<{ phone_number: string }>) {
        owned.delete(l.phone_number)
        ours.delete(l.phone_number)
        profiles.delete(l.phone_number)
      }
    }
    return send(res, 200, { data: view })
  }

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) {
        headers[k] = Array.isArray(v)
          ? v.join(", ")
          : v
      }
    }
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
          return errors(res, 400, [{
            code: "10015",
            title: "Bad Request",
            detail: "The request body is not valid JSON."
          }])
        }
        return createMessage(res, json)
      }
      if (req.method === "GET" && path === "/v2/available_phone_numbers") {
        return searchNumbers(res, new URLSearchParams((req.url ?? "").split("?")[1] ?? ""))
      }
      if (req.method === "POST" && path === "/v2/number_orders") return createOrder(res, json)
      const registered = path.startsWith("/v2/10dlc/") ? registry(req.method ?? "GET", path, json, res) : undefined
      if (registered !== undefined) return registered
      const voiced = voice.route(req.method ?? "GET", path, json, res)
      if (voiced !== undefined) return voiced
      const order = /^\/v2\/number_orders\/([^/]+)$/.exec(path)
      if (req.method === "GET" && order) {
        const known = orders.get(decodeURIComponent(order[1]!))
        if (!known) {
          return errors(res, 404, [{
            code: "10005",
            title: "Resource not found",
            detail: "The requested number order was not found."
          }])
        }
        return known["status"] === "pending"
          ? settleOrder(res, known, orderFlow.onRetrieve)
          : send(res, 200, { data: known })
      }
      const found = /^\/v2\/messages\/([^/]+)$/.exec(path)
      if (req.method === "GET" && found) {
        const message = messages.get(decodeURIComponent(found[1]!))
        return message
          ? send(res, 200, { data: message })
          : errors(res, 404, [{
            code: "10005",
            title: "Resource not found",
            detail: "The requested message was not found."
          }])
      }
      return errors(res, 404, [{
        code: "10005",
        title: "Resource not found",
        detail: `No route for ${req.method} ${path}.`
      }])
    })()
    const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "")
    requests.push({ method: req.method ?? "GET", path, query, headers, body, json, at: Date.now(), answer })
  }

  const server = createServer((req, res) => {
    res.on("error", () => undefined)
    if (req.method === "POST" && (req.url ?? "").split("?")[0] === "/v2/messages" && messageLatency.max > 0) {
      delayOf.set(res, messageLatency.min + Math.random() * (messageLatency.max - messageLatency.min))
    }
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
        occurred_at: opts.occurredAt ?? new Date().toISOString(),
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
    orders,
    owned,
    takeNumber: (phoneNumber) => void owned.add(phoneNumber),
    addNumber: (phoneNumber, opts = {}) => {
      owned.add(phoneNumber)
      ours.add(phoneNumber)
      if (opts.messagingProfileId !== undefined) profiles.set(phoneNumber, opts.messagingProfileId)
      if (opts.registered === true) {
        const campaignId = "portal-campaign"
        campaigns.set(campaignId, { campaignId, brandId: "portal-brand", campaignStatus: "MNO_PROVISIONED" })
        assignments.set(phoneNumber, { phoneNumber, campaignId, assignmentStatus: "ASSIGNED", failureReasons: null })
      }
    },
    inboundText: (input) => {
      const profile = input.messagingProfileId ?? profileOf(input.to)
      const op = telnyxKeywordOp(input.text)
      const key = ruleKey(profile, input.from)
      if (op === "stop") blockRules.set(key, (blockRules.get(key) ?? new Set<string>()).add(input.to))
      if (op === "start" && blockRules.get(key)?.has(input.to) === true) blockRules.delete(key)
      if (op !== null) {
        autoReplies.push({ op, from: input.to, to: input.from, text: AUTO_REPLY_TEXT[op], messagingProfileId: profile })
      }
      return inboundPayload(
        { ...input, messagingProfileId: profile },
        op === null ? null : op.toUpperCase() as AutoresponseType
      )
    },
    blocked: (recipient, messagingProfileId = DEFAULT_PROFILE) =>
      blockRules.has(ruleKey(messagingProfileId, recipient)),
    autoReplies,
    setOrderFlow: (flow) => {
      orderFlow = flow
    },
    brands,
    campaigns,
    assignments,
    otps,
    setReview: (next) => {
      review = { ...review, ...next }
    },
    setMessageLatency: (ms) => {
      messageLatency = typeof ms === "number" ? { min: ms, max: ms } : ms
    },
    script: (fault, times = 1) => {
      for (let i = 0; i < times; i++) faults.push(fault)
    },
    signedWebhook,
    voice,
    callWebhooks: (callControlId, hangup) =>
      voice.lifecycle(callControlId, hangup).map(([type, payload]) => signedWebhook(type, payload)),
    pendingCallWebhooks: (options = {}) => {
      const signed = new Map<unknown, SignedWebhook & { readonly eventType: string }>()
      return voice.takePending(options).map((w) => {
        // The same queued event delivered twice is one event: same id, same signed body.
        const hook = signed.get(w) ??
          { ...signedWebhook(w.eventType, w.payload, { occurredAt: w.occurredAt }), eventType: w.eventType }
        signed.set(w, hook)
        return hook
      })
    },
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
      messageLatency = { min: 0, max: 0 }
      messages.clear()
      searched.clear()
      owned.clear()
      ours.clear()
      profiles.clear()
      blockRules.clear()
      autoReplies.length = 0
      orders.clear()
      orderFlow = DEFAULT_ORDER_FLOW
      brands.clear()
      campaigns.clear()
      assignments.clear()
      otps.clear()
      review = DEFAULT_REVIEW
      voice.reset()
    },
    stop: async () => {
      for (const res of hanging) res.destroy()
      hanging.clear()
      for (const [res, timer] of delayed) {
        clearTimeout(timer)
        res.destroy()
      }
      delayed.clear()
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    }
  }
}

/** One fake for the test file (call at its top level): started before its tests, reset before each, stopped after. */
export const useFakeTelnyx = (): () => FakeTelnyx => {
  let fake: FakeTelnyx | undefined
  beforeAll(async () => {
    fake = await startFakeTelnyx()
  })
  afterAll(async () => {
    await fake?.stop()
  })
  beforeEach(() => fake?.reset())
  return () => {
    if (fake === undefined) throw new Error("the fake Telnyx is not started yet: use it inside a test")
    return fake
  }
}
