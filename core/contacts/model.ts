/** Contact schemas of SPEC "Contact (detail)", "Contact summary" and "Contact input". */
import { Schema } from "effect"
import { Text } from "../text.ts"

// Postgres text and jsonb cannot hold U+0000: reject it here (400) rather than fail in the store (500).
const Label = Text(64)

export const PhoneEntry = Schema.Struct({ value: Schema.String, label: Schema.optional(Label) })
export type PhoneEntry = typeof PhoneEntry.Type
export const EmailEntry = Schema.Struct({ value: Schema.String, label: Schema.optional(Label) })
export type EmailEntry = typeof EmailEntry.Type

export const ContactDetail = Schema.Struct({
  id: Schema.UUID,
  firstName: Schema.NullOr(Schema.String),
  lastName: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  phones: Schema.Array(PhoneEntry),
  emails: Schema.Array(EmailEntry),
  notes: Schema.Array(Schema.String),
  properties: Schema.Record({ key: Schema.String, value: Schema.String }),
  tags: Schema.Array(Schema.String),
  source: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "Contact" })
export type ContactDetail = typeof ContactDetail.Type

/** The stored record: the public detail plus what the store needs. */
export interface Contact extends ContactDetail {
  readonly workspaceId: string
  readonly updatedAt: string
}

export const ContactSummary = Schema.Struct({
  id: Schema.UUID,
  firstName: Schema.NullOr(Schema.String),
  lastName: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "ContactSummary" })
export type ContactSummary = typeof ContactSummary.Type

const PhoneInput = Schema.Union(Schema.String, Schema.Struct({ value: Schema.String, label: Schema.optional(Label) }))
const EmailInput = Schema.Union(Schema.String, Schema.Struct({ value: Schema.String, label: Schema.optional(Label) }))

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

export const toSummary = (c: ContactDetail): ContactSummary => ({
  id: c.id,
  firstName: c.firstName,
  lastName: c.lastName,
  company: c.company,
  phone: c.phones[0]?.value ?? null,
  createdAt: c.createdAt
})

export const toDetail = (c: Contact): ContactDetail => ({
  id: c.id,
  firstName: c.firstName,
  lastName: c.lastName,
  company: c.company,
  phones: c.phones,
  emails: c.emails,
  notes: c.notes,
  properties: c.properties,
  tags: c.tags,
  source: c.source,
  createdAt: c.createdAt
})
