/**
 * The Messaging use cases over any stores (memory, PGlite, Postgres) for the opt-out tests: a fake
 * Carrier that logs every send with its outcome, can be scripted to refuse, can hold a send in
 * flight (`hold`) and can look at the world while it holds one (`during`), with the keywords it
 * answers itself settable; a RegistrationGate whose texting state the test sets. No media.
 */
import { Context, Deferred, Effect, Layer, Schema } from "effect"
import * as MemoryBlobs from "../../adapters/blobs/memory.ts"
import * as SignedUrls from "../../adapters/media/signedUrls.ts"
import type { MemoryDb } from "../../adapters/memory/db.ts"
import type * as MemoryStores from "../../adapters/memory/stores.ts"
import type { Principal } from "../../core/auth/principal.ts"
import { allScopes } from "../../core/auth/scopes.ts"
import * as Contacts from "../../core/contacts/service.ts"
import { EventOutbox } from "../../core/events/outbox.ts"
import { InvalidArgument } from "../../core/kernel/errors.ts"
import { layerCursorCodec } from "../../core/kernel/pagination.ts"
import { MediaFetcher } from "../../core/media/model.ts"
import { Carrier, CarrierError, type InboundMessage, type OutboundMessage } from "../../core/messaging/carrier.ts"
import * as Messaging from "../../core/messaging/service.ts"
import * as ActivityViews from "../../core/messaging/views.ts"
import { NumberStore, numberTypeOf } from "../../core/numbers/model.ts"
import * as OptOuts from "../../core/optouts/service.ts"
import { RegistrationGate, type TextingState } from "../../core/registration/gate.ts"
import { Registration } from "../../core/registration/record.ts"
import { RegistrationStore } from "../../core/registration/store.ts"
import { defaultBilling, defaultTexting } from "../../core/workspaces/model.ts"
import { WorkspaceStore } from "../../core/workspaces/store.ts"
import { business as filedBusiness } from "./registration.ts"

/** A company's filing without a business phone: each test names the contact it wants. */
const { phone: _, ...withoutPhone } = filedBusiness

export interface Sent {
  readonly message: OutboundMessage
  readonly outcome: "accepted" | CarrierError["reason"]
}

/** What the test controls and observes. */
export interface CarrierFake {
  /** Every message handed to the carrier, in the order the carrier answered. */
  readonly sends: Array<Sent>
  /** Refusals of the next sends, in order; an empty script accepts. */
  readonly script: Array<CarrierError>
  /** The keywords the carrier answers itself (upper case); none by default. */
  readonly answersKeywords: Set<string>
  /** When set, the next send takes it: signals `started`, then waits for `release` before answering. */
  hold: { readonly started: Deferred.Deferred<void>; readonly release: Deferred.Deferred<void> } | null
  /** Runs inside every send before it answers (the property test's check of the moment). */
  during: ((m: OutboundMessage) => Effect.Effect<void>) | null
  texting: TextingState
}
export class CarrierFakeTag extends Context.Tag("test/OptOutCarrierFake")<CarrierFakeTag, CarrierFake>() {}

const fakes = Layer.sync(CarrierFakeTag, (): CarrierFake => ({
  sends: [],
  script: [],
  answersKeywords: new Set(),
  hold: null,
  during: null,
  texting: "approved"
}))

const fakeCarrier = Layer.effect(
  Carrier,
  Effect.map(CarrierFakeTag, (f) =>
    Carrier.of({
      answersKeywords: f.answersKeywords,
      send: (message) =>
        Effect.gen(function*() {
          const hold = f.hold
          f.hold = null
          if (hold !== null) {
            yield* Deferred.succeed(hold.started, undefined)
            yield* Deferred.await(hold.release)
          }
          if (f.during !== null) yield* f.during(message)
          const refusal = f.script.shift()
          f.sends.push({ message, outcome: refusal?.reason ?? "accepted" })
          return refusal === undefined
            ? { carrierMessageId: `car_${crypto.randomUUID()}`, status: "queued" as const }
            : yield* Effect.fail(refusal)
        })
    }))
)

const fakeGate = Layer.effect(
  RegistrationGate,
  Effect.map(CarrierFakeTag, (f) => RegistrationGate.of({ textingState: () => Effect.sync(() => f.texting) }))
)

const noMedia = Layer.succeed(
  MediaFetcher,
  MediaFetcher.of({ fetch: (url) => Effect.fail(new InvalidArgument({ message: `url ${url} could not be fetched` })) })
)

/** Every store port and the transactor, whichever adapter holds them. */
type Stores = Exclude<Layer.Layer.Success<typeof MemoryStores.layer>, MemoryDb>

/** Messaging, OptOuts and the fakes over `stores`. */
export const messagingOver = <E>(stores: Layer.Layer<Stores, E>) =>
  Messaging.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Contacts.layer, ActivityViews.layer, OptOuts.layer)),
    Layer.provideMerge(
      Layer.mergeAll(
        fakeCarrier,
        fakeGate,
        noMedia,
        MemoryBlobs.layer,
        SignedUrls.layer({ baseUrl: "https://api.test", secret: new Uint8Array(32).fill(7) })
      )
    ),
    Layer.provideMerge(fakes),
    Layer.provideMerge(stores),
    Layer.provideMerge(layerCursorCodec(new Uint8Array(32).fill(3)))
  )

export type OptOutMessaging = Layer.Layer.Success<ReturnType<typeof messagingOver>>

let numberSeq = 0
/** A number no other workspace of this process holds (numbers are unique across workspaces). */
export const freshNumber = () => `+1415555${String(++numberSeq % 10_000).padStart(4, "0")}`

/** A live key of the workspace. */
export const livePrincipal = (workspaceId: string): Principal => ({
  workspaceId,
  keyId: crypto.randomUUID(),
  kind: "live",
  scopes: new Set(allScopes)
})

/** The registration `replyContext` reads: brand, campaign help message and business contacts. */
export const registrationOf = (
  workspaceId: string,
  business: { displayName: string; phone?: string; website?: string; email?: string },
  helpMessage?: string
) =>
  Schema.decodeUnknownSync(Registration)({
    workspaceId,
    step: "campaign_active",
    soleProprietor: false,
    mock: false,
    messagingProfileId: null,
    business: { ...withoutPhone, ...business },
    campaignInput: {
      description: "Appointment reminders for the customers of Acme Inc.",
      messageFlow: "Customers opt in when they book an appointment at acme.example.",
      ...(helpMessage === undefined ? {} : { helpMessage })
    },
    brand: {
      id: "B1",
      status: "accepted",
      identityStatus: "VERIFIED",
      failureReasons: [],
      otpSentAt: null,
      otpMobileLast4: null
    },
    campaign: { id: "C1", status: "approved", useCase: "MIXED", failureReasons: [], submittedAt: null },
    lastResendAt: null,
    filedAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z"
  })

/** Adds an active, ordered local number to the workspace; answers its inbox. */
export const addNumber = (ws: string, number: string) =>
  Effect.gen(function*() {
    const inboxId = crypto.randomUUID()
    yield* Effect.orDie(
      (yield* NumberStore).insert(
        ws,
        {
          e164: number as never,
          type: numberTypeOf(number),
          voiceMode: "app",
          agentId: null,
          forwardTo: null,
          assignedUserId: null,
          status: "active"
        },
        inboxId,
        true
      )
    )
    return inboxId
  })

/** A workspace named `name` with one active, ordered local number (fresh unless given). */
export const workspaceWithNumber = (name: string, number: string = freshNumber()) =>
  Effect.gen(function*() {
    const ws = crypto.randomUUID()
    yield* (yield* WorkspaceStore).insert({
      id: ws,
      name,
      billing: defaultBilling,
      ...defaultTexting,
      createdAt: new Date().toISOString()
    })
    const inboxId = yield* addNumber(ws, number)
    return { ws, number, inboxId, live: livePrincipal(ws) }
  })

/** Files `registration` for its workspace. */
export const register = (registration: Registration) => Effect.flatMap(RegistrationStore, (s) => s.put(registration))

/** An inbound text with a fresh carrier id. */
export const inboundText = (to: string, from: string, body: string | null): InboundMessage => ({
  carrierMessageId: `in_${crypto.randomUUID()}`,
  from,
  to,
  body,
  media: []
})

/** The workspace's events, type and data. */
export const eventsOf = (ws: string) =>
  Effect.flatMap(EventOutbox, (o) => o.list(ws)).pipe(
    Effect.map((es) => es.map((e) => ({ type: e.type, data: e.data as Record<string, unknown> })))
  )

/** `CarrierError` of a carrier's own opt-out refusal (Telnyx 40300). */
export const carrierOptedOut = new CarrierError({ reason: "opted_out", message: "Telnyx 40300: recipient opted out" })
