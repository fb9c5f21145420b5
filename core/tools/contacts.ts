/** Contact capabilities (SPEC "Contacts"). */
import { Effect, Schema } from "effect"
import { ContactInput, ListContactsInput } from "../contacts/model.ts"
import { Contacts } from "../contacts/service.ts"
import { ById, Changes, tool } from "./tool.ts"

const contactId = "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22"

export const listContacts = tool({
  name: "list_contacts",
  description: "List contacts, newest created first, or search them by name, company, phone or email with `q`; page with `cursor`.",
  input: ListContactsInput,
  example: { q: "ada", limit: 20 },
  scope: "contacts:read",
  run: (p, input) =>
    Effect.flatMap(Contacts, (c) => c.list(p, input)).pipe(Effect.map((page) => ({ contacts: page.items, nextCursor: page.nextCursor })))
})

export const getContact = tool({
  name: "get_contact",
  description: "Retrieve a contact by id.",
  input: ById,
  example: { id: contactId },
  scope: "contacts:read",
  run: (p, { id }) => Effect.flatMap(Contacts, (c) => c.get(p, id)).pipe(Effect.map((contact) => ({ contact })))
})

export const createContact = tool({
  name: "create_contact",
  description: "Create a contact; a phone owned by a nameless auto-created contact adopts it.",
  input: ContactInput,
  example: { firstName: "Ada", lastName: "Lovelace", phone: "+14155550100", tags: ["vip"] },
  scope: "contacts:write",
  run: (p, input) => Effect.flatMap(Contacts, (c) => c.create(p, input)).pipe(Effect.map((contact) => ({ contact })))
})

export const updateContact = tool({
  name: "update_contact",
  description: "Update the fields given in `changes`; arrays and `properties` are replaced wholesale; `null` clears names and company.",
  input: Changes(ContactInput),
  example: { id: contactId, changes: { company: null, tags: ["customer"] } },
  scope: "contacts:write",
  run: (p, { id, changes }) => Effect.flatMap(Contacts, (c) => c.update(p, id, changes)).pipe(Effect.map((contact) => ({ contact })))
})

export const deleteContact = tool({
  name: "delete_contact",
  description: "Delete a contact permanently; its conversations stay under the raw number.",
  input: ById,
  example: { id: contactId },
  scope: "contacts:write",
  run: (p, { id }) => Effect.flatMap(Contacts, (c) => c.remove(p, id))
})
