import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../platform.ts"
import { Contacts } from "../../../core/contacts/service.ts"
import { Api } from "../api.ts"

export const ContactsLive = HttpApiBuilder.group(Api, "contacts", (handlers) =>
  Effect.gen(function* () {
    const contacts = yield* Contacts
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) => contacts.list(p, urlParams)).pipe(
          Effect.map((page) => ({ contacts: page.items, nextCursor: page.nextCursor }))
        )
      )
      .handle(
        "create",
        ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => contacts.create(p, payload)).pipe(Effect.map((contact) => ({ contact }))),
        { uninterruptible: true }
      )
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (p) => contacts.get(p, path.id)).pipe(Effect.map((contact) => ({ contact })))
      )
      .handle(
        "update",
        ({ path, payload }) =>
          Effect.flatMap(CurrentPrincipal, (p) => contacts.update(p, path.id, payload)).pipe(Effect.map((contact) => ({ contact }))),
        { uninterruptible: true }
      )
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => contacts.remove(p, path.id)), {
        uninterruptible: true
      })
  })
)
