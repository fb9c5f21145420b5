/** Contact capabilities (SPEC "Contacts"). */
import { Effect, Schema } from "effect"
import { ContactDetail, ContactInput, ContactSummary, ListContactsInput } from "../contacts/model.ts"
import { Contacts, SEARCH_SCAN } from "../contacts/service.ts"
import { NotFound } from "../kernel/errors.ts"
import { ById, Deleted, read, tool, WithId } from "./tool.ts"

const contactId = "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22"

/** The answer of get, create and update. */
const ContactAnswer = Schema.Struct({ contact: ContactDetail })

export const listContacts = tool({
  name: "contacts_list",
  title: "List or search contacts",
  description:
    `List the workspace's contacts, newest created first, or search them by name, company, phone or email with \`q\`. Answers summaries (one phone each); use contacts_get for a contact's full record. Page with \`limit\` (1 to 200, default 50) and the answer's \`nextCursor\` as \`cursor\` until it is null: a \`q\` without three letters or digits in a row examines ${
      SEARCH_SCAN.toLocaleString("en-US")
    } contacts a page, so a page may hold fewer than \`limit\`, or none, and still go on.`,
  input: ListContactsInput,
  output: Schema.Struct({ contacts: Schema.Array(ContactSummary), nextCursor: Schema.NullOr(Schema.String) }),
  example: { q: "ada", limit: 20 },
  scope: "contacts:read",
  hints: read,
  idempotencyKey: false,
  errors: [],
  run: (p, input) =>
    Effect.flatMap(Contacts, (c) => c.list(p, input)).pipe(
      Effect.map((page) => ({ contacts: page.items, nextCursor: page.nextCursor }))
    )
})

export const getContact = tool({
  name: "contacts_get",
  title: "Get a contact",
  description: "A contact's full record by `id`: names, company, every phone and email, notes, properties, tags.",
  input: ById,
  output: ContactAnswer,
  example: { id: contactId },
  scope: "contacts:read",
  hints: read,
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Contacts, (c) => c.get(p, id)).pipe(Effect.map((contact) => ({ contact })))
})

export const createContact = tool({
  name: "contacts_create",
  title: "Create a contact",
  description:
    "Create a contact from any of its fields; phones are normalized to E.164. If a phone belongs to a nameless contact created automatically by an unknown caller or sender, that contact is adopted instead of a duplicate made. Use contacts_update to change an existing contact.",
  input: ContactInput,
  output: ContactAnswer,
  example: { firstName: "Ada", lastName: "Lovelace", phone: "+14155550100", tags: ["vip"] },
  scope: "contacts:write",
  hints: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotencyKey: false,
  errors: [],
  run: (p, input) => Effect.flatMap(Contacts, (c) => c.create(p, input)).pipe(Effect.map((contact) => ({ contact })))
})

export const updateContact = tool({
  name: "contacts_update",
  title: "Update a contact",
  description:
    "Change the fields given beside `id`; fields left out stay. Arrays (`phones`, `emails`, `notes`, `tags`) and `properties` are replaced wholesale, so send the whole list; `null` clears a name or the company.",
  input: WithId(ContactInput),
  output: ContactAnswer,
  example: { id: contactId, company: null, tags: ["customer"] },
  scope: "contacts:write",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id, ...changes }) =>
    Effect.flatMap(Contacts, (c) => c.update(p, id, changes)).pipe(Effect.map((contact) => ({ contact })))
})

export const deleteContact = tool({
  name: "contacts_delete",
  title: "Delete a contact",
  description: "Delete a contact permanently; its conversations stay in the inbox under the raw number.",
  input: ById,
  output: Deleted,
  example: { id: contactId },
  scope: "contacts:write",
  hints: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotencyKey: false,
  errors: [NotFound],
  run: (p, { id }) => Effect.flatMap(Contacts, (c) => c.remove(p, id))
})
