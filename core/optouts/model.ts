/**
 * An opt-out (CONTRACT "Opt-outs and keywords"): a phone that texts from the workspace must not
 * reach, one per workspace and phone, from the recipient's keyword, the carrier's own refusal, or a
 * revocation the business recorded through the API.
 */
import { Schema } from "effect"
import { Text } from "../kernel/text.ts"

export const OptOutSource = Schema.Literal("keyword", "carrier", "api")
export type OptOutSource = typeof OptOutSource.Type

export const OptOut = Schema.Struct({
  phone: Schema.String.annotations({ description: "E.164" }),
  source: OptOutSource,
  /** The word the recipient texted (`STOP`, `REVOKE`, …), upper case; null for the other sources. */
  keyword: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}).annotations({ identifier: "OptOut" })
export type OptOut = typeof OptOut.Type

/** As stored: the opt-out and its workspace. */
export const OptOutRecord = Schema.Struct({ workspaceId: Schema.UUID, ...OptOut.fields })
export type OptOutRecord = typeof OptOutRecord.Type

export const ListOptOutsInput = Schema.Struct({
  phone: Schema.optional(Schema.String.pipe(Schema.maxLength(32))),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 200))),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(1024)))
}).annotations({ identifier: "ListOptOutsInput", parseOptions: { onExcessProperty: "error" } })
export type ListOptOutsInput = typeof ListOptOutsInput.Type

export const CreateOptOutInput = Schema.Struct({
  phone: Schema.String.pipe(Schema.maxLength(32)),
  note: Schema.optional(Text(500))
}).annotations({ identifier: "CreateOptOutInput", parseOptions: { onExcessProperty: "error" } })
export type CreateOptOutInput = typeof CreateOptOutInput.Type

/** Why the phone is opted out, in the words of the refusal. */
const reasonOf = (o: Pick<OptOut, "source" | "keyword">): string =>
  o.source === "keyword"
    ? `replied ${o.keyword ?? "STOP"}`
    : o.source === "carrier"
    ? "the carrier reported their opt-out"
    : "recorded through the API"

/** The refusal of a send to an opted-out phone (CONTRACT's wording). */
export const optedOutMessage = (o: Pick<OptOut, "phone" | "source" | "keyword" | "createdAt">): string =>
  `${o.phone} opted out of texts from this workspace on ${o.createdAt.slice(0, 10)} (${
    reasonOf(o)
  }); they can opt back in by texting START`
