/** SPEC "Contacts". */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ContactInput, ListContactsInput, toSummary } from "../../../core/contacts/model.ts"
import { createContact, deleteContact, getContact, listContacts, updateContact } from "../../../core/tools/contacts.ts"
import * as examples from "./examples.ts"
import { capability, IdParam, limitParam, publicGroup } from "./shared.ts"

const { contact } = examples

const contactSummary = toSummary(contact)

export class ContactsGroup extends publicGroup(
  HttpApiGroup.make("contacts")
    .add(
      HttpApiEndpoint.get("list", "/contacts")
        .setUrlParams(Schema.Struct({ ...ListContactsInput.fields, limit: Schema.optional(limitParam(200)) }))
        .addSuccess(listContacts.output.annotations({ examples: [{ contacts: [contactSummary], nextCursor: null }] }))
        .annotate(OpenApi.Description, "List or search contacts, newest created first.")
        .pipe(capability(listContacts))
    )
    .add(
      HttpApiEndpoint.post("create", "/contacts")
        .setPayload(
          ContactInput.annotations({
            examples: [{ firstName: "Ada", lastName: "Lovelace", phone: "+14155550100", tags: ["vip"] }]
          })
        )
        .addSuccess(createContact.output.annotations({ examples: [{ contact }] }), { status: 201 })
        .annotate(OpenApi.Description, "Create a contact; a phone owned by a nameless auto-created contact adopts it.")
        .pipe(capability(createContact))
    )
    .add(
      HttpApiEndpoint.get("get", "/contacts/:id")
        .setPath(IdParam)
        .addSuccess(getContact.output.annotations({ examples: [{ contact }] }))
        .annotate(OpenApi.Description, "Retrieve a contact.")
        .pipe(capability(getContact))
    )
    .add(
      HttpApiEndpoint.patch("update", "/contacts/:id")
        .setPath(IdParam)
        .setPayload(ContactInput.annotations({ examples: [{ company: null, tags: ["customer"] }] }))
        .addSuccess(updateContact.output.annotations({ examples: [{ contact }] }))
        .annotate(
          OpenApi.Description,
          "Update the fields sent; arrays and `properties` are replaced wholesale; `null` clears names and company."
        )
        .pipe(capability(updateContact))
    )
    .add(
      HttpApiEndpoint.del("delete", "/contacts/:id")
        .setPath(IdParam)
        .addSuccess(deleteContact.output.annotations({ examples: [{ deleted: true }] }))
        .annotate(OpenApi.Description, "Delete a contact permanently; its threads stay under the raw number.")
        .pipe(capability(deleteContact))
    )
).annotate(OpenApi.Title, "Contacts").annotate(
  OpenApi.Description,
  "The workspace's address book: people and companies with phones, emails, tags and custom properties."
) {}
