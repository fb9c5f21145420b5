/** Every core service, for apps and embedders. */
import { Layer } from "effect"
import * as Contacts from "./contacts/service.ts"
import * as Webhooks from "./webhooks/service.ts"
import * as Workspaces from "./workspaces/service.ts"

/** Needs the store ports, a CursorCodec, an OutboundGuard and a WebhookSender. */
export const CoreLive = Layer.mergeAll(Contacts.layer, Workspaces.layer, Webhooks.layer)
