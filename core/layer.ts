/** Every core service, for apps and embedders. */
import { Layer } from "effect"
import * as Agents from "./agent/service.ts"
import * as BillingCycle from "./billing/cycle.ts"
import * as BillingEvents from "./billing/events.ts"
import * as PendingCharges from "./billing/pending.ts"
import * as Calls from "./calls/service.ts"
import * as Contacts from "./contacts/service.ts"
import * as Conversations from "./conversations/service.ts"
import { layerWorkerLiveness } from "./health/readiness.ts"
import * as Members from "./members/service.ts"
import * as Sessions from "./members/sessions.ts"
import * as Messaging from "./messaging/service.ts"
import * as Simulator from "./messaging/simulator.ts"
import * as ActivityViews from "./messaging/views.ts"
import * as Numbers from "./numbers/service.ts"
import * as OptOuts from "./optouts/service.ts"
import * as Registration from "./registration/service.ts"
import * as SchedulingEngine from "./scheduling/engine.ts"
import * as Scheduling from "./scheduling/service.ts"
import * as Webhooks from "./webhooks/service.ts"
import * as Workspaces from "./workspaces/service.ts"

/**
 * Needs the store ports, a CursorCodec, an OutboundGuard, a WebhookSender, a Carrier, the media
 * ports (BlobStore, MediaFetcher, MediaUrls), a RegistrationGate, a NumberInventory, Payments, a Mailer, a Pacer,
 * the registries (Registry, MockRegistry, RegistrySimulator), the Voice carrier, and the ConsoleOrigin sign-in links point to.
 */
export const CoreLive = Layer.mergeAll(
  Conversations.layer,
  Calls.layer,
  Layer.merge(Simulator.layer, SchedulingEngine.layer).pipe(Layer.provideMerge(Messaging.layer))
).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Contacts.layer,
      Workspaces.layer,
      Webhooks.layer,
      ActivityViews.layer,
      Numbers.layer,
      Registration.layer,
      BillingEvents.layer.pipe(Layer.provideMerge(BillingCycle.layer)),
      Agents.layer,
      Scheduling.layer,
      Members.layer,
      Sessions.layer,
      layerWorkerLiveness
    ).pipe(Layer.provideMerge(Layer.merge(OptOuts.layer, PendingCharges.layer)))
  )
)
