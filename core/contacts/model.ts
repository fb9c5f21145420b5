/** Contact schemas of SPEC "Contact (detail)", "Contact summary" and "Contact input". */
import { Schema } from "effect"
import { PageSize } from "../kernel/pagination.ts"
import { nullable, projection, projectionWith, withDefault } from "../kernel/records.ts"
import { Text } from "../kernel/text.ts"

// Postgres text and jsonb cannot hold U+0000: reject it here (400) rather than fail in the store (500).
const Label = Text(64)

export const PhoneEntry = Schema.Struct({ value: Schema.String, label: Schema.optional(Label) })
export type PhoneEntry = typeof PhoneEntry.Type
export const EmailEntry = Schema.Struct({ value: Schema.String, label: Schema.optional(Label) })
export type EmailEntry = typeof EmailEntry.Type

/**
 * A stored contact, declared once: the SQL row, the public views and the store ports derive from
 * it. A new field is one edit here plus one migration adding its column.
 */
export const Contact = Schema.Struct({
  id: Schema.UUID,
  workspaceId: Schema.UUID,
  firstName: nullable(Schema.String),
  lastName: nullable(Schema.String),
  company: nullable(Schema.String),
  phones: withDefault(Schema.Array(PhoneEntry), () => []),
  emails: withDefault(Schema.Array(EmailEntry), () => []),
  notes: withDefault(Schema.Array(Schema.String), () => []),
  properties: withDefault(Schema.Record({ key: Schema.String, value: Schema.String }), () => ({})),
  tags: withDefault(Schema.Array(Schema.String), () => []),
  source: nullable(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type Contact = typeof Contact.Type

/** SPEC "Contact (detail)": the stored contact without its tenant and write time. */
export const ContactDetail = Contact.omit("workspaceId", "updatedAt").annotations({ identifier: "Contact" })
export type ContactDetail = typeof ContactDetail.Type

const { id, firstName, lastName, company, createdAt } = Contact.fields

/** SPEC "Contact summary": the list row, with the first phone. */
export const ContactSummary = Schema.Struct({
  id,
  firstName,
  lastName,
  company,
  phone: Schema.NullOr(Schema.String),
  createdAt
}).annotations({ identifier: "ContactSummary" })
export type ContactSummary = typeof ContactSummary.Type

const PhoneInput = Schema.Union(Schema.String, Schema.Struct({ value: Schema.String, label: Schema.optional(Label) }))
const EmailInput = Schema.Union(Schema.String, Schema.Struct({ value: Schema.String, label: Schema.optional(Label) }))

/** Listing or searching contacts (`GET /contacts`, the `contacts_list` tool); REST reads `limit` from text. */
export const ListContactsInput = Schema.Struct({
  q: Schema.optional(Schema.String.pipe(Schema.maxLength(200))).annotations({
    description: "Text to find in names, company and emails (case-insensitive), or digits of a phone number"
  }),
  limit: Schema.optional(PageSize(200)),
  cursor: Schema.optional(Schema.String)
}).annotations({ parseOptions: { onExcessProperty: "error" } })
export type ListContactsInput = typeof ListContactsInput.Type

/** Create and update body. Unknown fields are rejected (CONTRACT.md). */
export const ContactInput = Schema.Struct({
  firstName: Schema.optional(Schema.NullOr(Text(200))),
  lastName: Schema.optional(Schema.NullOr(Text(200))),
  company: Schema.optional(Schema.NullOr(Text(200))),
  phone: Schema.optional(Text(32)),
  email: Schema.optional(Text(254)),
  phones: Schema.optional(Schema.Array(PhoneInput).pipe(Schema.maxItems(20))),
  emails: Schema.optional(Schema.Array(EmailInput).pipe(Schema.maxItems(20))),
  notes: Schema.optional(Schema.Array(Text(10_000)).pipe(Schema.maxItems(200))),
  properties: Schema.optional(
    Schema.Record({ key: Text(128), value: Text(2_000) }).pipe(
      Schema.filter((r) => Object.keys(r).length <= 100 || "at most 100 properties")
    )
  ),
  tags: Schema.optional(Schema.Array(Text(64)).pipe(Schema.maxItems(100)))
}).annotations({ identifier: "ContactInput", parseOptions: { onExcessProperty: "error" } })
export type ContactInput = typeof ContactInput.Type

export const toDetail = projection(ContactDetail)

const summaryOf = projectionWith(ContactSummary)
export const toSummary = (c: ContactDetail): ContactSummary => summaryOf(c, { phone: c.phones[0]?.value ?? null })
