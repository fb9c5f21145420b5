/** SPEC "Contacts". */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ContactDetail, ContactInput, ContactSummary, toSummary } from "../../../core/contacts/model.ts"
import { ListContactsInput } from "../../../core/contacts/model.ts"
import { NotFound } from "./errors.ts"
import * as examples from "./examples.ts"
import { Deleted, IdParam, limitParam, publicGroup, requires } from "./shared.ts"

const { contact } = examples

const ContactEnvelope = Schema.Struct({ contact: ContactDetail }).annotations({ examples: [{ contact }] })

const contactSummary = toSummary(contact)

export class ContactsGroup extends publicGroup(
  HttpApiGroup.make("contacts")
    .add(
      HttpApiEndpoint.get("list", "/contacts")
        .setUrlParams(Schema.Struct({ ...ListContactsInput.fields, limit: Schema.optional(limitParam(200)) }))
        .addSuccess(
          Schema.Struct({ contacts: Schema.Array(ContactSummary), nextCursor: Schema.NullOr(Schema.String) }).annotations({
            examples: [{ contacts: [contactSummary], nextCursor: null }]
          })
        )
        .annotate(OpenApi.Description, "List or search contacts, newest created first.")
        .pipe(requires("contacts:read"))
    )
    .add(
      HttpApiEndpoint.post("create", "/contacts")
        .setPayload(ContactInput.annotations({ examples: [{ firstName: "Ada", lastName: "Lovelace", phone: "+14155550100", tags: ["vip"] }] }))
        .addSuccess(ContactEnvelope, { status: 201 })
        .annotate(OpenApi.Description, "Create a contact; a phone owned by a nameless auto-created contact adopts it.")
        .pipe(requires("contacts:write"))
    )
    .add(
      HttpApiEndpoint.get("get", "/contacts/:id")
        .setPath(IdParam)
        .addSuccess(ContactEnvelope)
        .addError(NotFound)
        .annotate(OpenApi.Description, "Retrieve a contact.")
        .pipe(requires("contacts:read"))
    )
    .add(
      HttpApiEndpoint.patch("update", "/contacts/:id")
        .setPath(IdParam)
        .setPayload(ContactInput.annotations({ examples: [{ company: null, tags: ["customer"] }] }))
        .addSuccess(ContactEnvelope)
        .addError(NotFound)
        .annotate(OpenApi.Description, "Update the fields sent; arrays and `properties` are replaced wholesale; `null` clears names and company.")
        .pipe(requires("contacts:write"))
    )
    .add(
      HttpApiEndpoint.del("delete", "/contacts/:id")
        .setPath(IdParam)
        .addSuccess(Deleted)
        .addError(NotFound)
        .annotate(OpenApi.Description, "Delete a contact permanently; its threads stay under the raw number.")
        .pipe(requires("contacts:write"))
    )
).annotate(OpenApi.Title, "Contacts") {}
