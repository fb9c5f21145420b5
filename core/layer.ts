/** Every core service, for apps and embedders: provide store adapters and a CursorCodec. */
import { Layer } from "effect"
import * as Contacts from "./contacts/service.ts"
import * as Workspaces from "./workspaces/service.ts"

export const CoreLive = Layer.mergeAll(Contacts.layer, Workspaces.layer)
