import { Effect } from "effect"
import { CurrentPrincipal } from "../platform.ts"
import { createContact, deleteContact, getContact, listContacts, updateContact } from "../../../core/tools/contacts.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

export const ContactsLive = group(Api, "contacts", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => listContacts.run(p, urlParams)))
    .handle("create", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => createContact.run(p, payload)), { uninterruptible: true })
    .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => getContact.run(p, path)))
    .handle("update", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (p) => updateContact.run(p, { ...path, ...payload })), {
      uninterruptible: true
    })
    .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => deleteContact.run(p, path)), { uninterruptible: true })
)
