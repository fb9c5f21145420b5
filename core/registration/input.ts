/**
 * The 10DLC application a workspace files (SPEC "Business input", "Campaign input"): every rule of
 * SPEC checked before anything is filed, each failure a 400 naming the field, and the campaign
 * completed with what carriers need (a description, a message flow) when the caller left it out.
 * It sits beside core/registration/, not in it: that folder imports nothing but `effect`, and phone
 * numbers need libphonenumber-js.
 */
import { Effect, Either, Schema } from "effect"
import { EMAIL } from "../contacts/rules.ts"
import { parseOutboundUrl } from "../egress/guard.ts"
import { invalidInput } from "../kernel/decodeMessage.ts"
import type { InvalidArgument } from "../kernel/errors.ts"
import { Phone } from "../kernel/phone.ts"
import { NonEmptyText, Text } from "../kernel/text.ts"
import { knownRegion } from "../numbers/regions.ts"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const Required = (max: number) =>
  NonEmptyText(max).pipe(Schema.filter((s) => s.trim().length > 0 || "must not be blank"))

/** 9 digits, with the usual dash after the second optional; decoded to the 9 digits. */
const Ein = Schema.transform(
  Text(32).pipe(
    Schema.filter((s) => /^\d{2}-?\d{7}$/.test(s) || "must be 9 digits (an EIN, dash optional: 12-3456789)")
  ),
  Schema.String,
  { strict: true, decode: (s) => s.replace("-", ""), encode: (s) => s }
)

const Email = Text(254).pipe(Schema.filter((s) => EMAIL.test(s) || "must be an email address"))

/**
 * A page carriers can open: `https`, a public host (a dotted name or a public address, the static
 * rules of the outbound-URL guard). The page is not fetched here. 600 characters at most, so the
 * composed opt-in description stays within the 2048 of `messageFlow`.
 */
const PublicHttpsUrl = Text(600).pipe(
  Schema.filter((s) => {
    const checked = Effect.runSync(Effect.either(parseOutboundUrl(s, false)))
    if (Either.isLeft(checked)) {
      return "must be a public https URL: " + checked.left.message.replace(/^url .* is not allowed: /, "")
    }
    return checked.right.hostname.includes(".") || "must be a public https URL: its host is not a public name"
  })
)

export const entityTypes = ["PRIVATE_PROFIT", "PUBLIC_PROFIT", "NON_PROFIT", "GOVERNMENT", "SOLE_PROPRIETOR"] as const
export type EntityType = (typeof entityTypes)[number]

/** The registry's verticals (research/telnyx.md, CreateBrand). */
export const verticals = [
  "AGRICULTURE",
  "COMMUNICATION",
  "CONSTRUCTION",
  "EDUCATION",
  "ENERGY",
  "ENTERTAINMENT",
  "FINANCIAL",
  "GAMBLING",
  "GOVERNMENT",
  "HEALTHCARE",
  "HOSPITALITY",
  "HUMAN_RESOURCES",
  "INSURANCE",
  "LEGAL",
  "MANUFACTURING",
  "NGO",
  "POLITICAL",
  "POSTAL",
  "PROFESSIONAL",
  "REAL_ESTATE",
  "RETAIL",
  "TECHNOLOGY",
  "TRANSPORTATION"
] as const

/** Fields required by entity type beyond those every brand needs. */
const requiredFor = (entityType: EntityType) =>
  entityType === "SOLE_PROPRIETOR"
    ? (["firstName", "lastName", "mobilePhone"] as const)
    : (["companyName", "ein"] as const)

export const BusinessInput = Schema.Struct({
  entityType: Schema.optionalWith(Schema.Literal(...entityTypes), { default: () => "PRIVATE_PROFIT" as const }),
  displayName: Required(100),
  email: Email,
  vertical: Schema.Literal(...verticals),
  street: Required(200),
  city: Required(100),
  state: Required(100),
  postalCode: Required(20),
  companyName: Schema.optional(Required(200)),
  ein: Schema.optional(Ein),
  firstName: Schema.optional(Required(100)),
  lastName: Schema.optional(Required(100)),
  mobilePhone: Schema.optional(Phone),
  phone: Schema.optional(Phone),
  website: Schema.optional(
    Text(1000).pipe(
      Schema.filter((s) => {
        const url = URL.canParse(s) ? new URL(s) : null
        return (url !== null && (url.protocol === "https:" || url.protocol === "http:") &&
          url.hostname.includes(".")) || "must be an http or https URL"
      })
    )
  ),
  country: Schema.optionalWith(
    Text(2).pipe(Schema.filter((s) => /^[A-Z]{2}$/.test(s) || "must be an ISO 3166 alpha-2 code such as US")),
    {
      default: () => "US"
    }
  )
}).pipe(
  Schema.filter((b) => [
    ...requiredFor(b.entityType).flatMap((
      field
    ) => (b[field] === undefined ? [{ path: [field], message: `is required for ${b.entityType} brands` }] : [])),
    // A US address the registry will accept: a state it knows and a ZIP code.
    ...(b.country === "US" && knownRegion("US", b.state) === null
      ? [{ path: ["state"], message: "must be a US state or territory: a code (IL) or a name (Illinois)" }]
      : []),
    ...(b.country === "US" && !/^\d{5}(-\d{4})?$/.test(b.postalCode)
      ? [{ path: ["postalCode"], message: "must be a US ZIP code (62701 or 62701-1234)" }]
      : [])
  ]),
  Schema.annotations(strict)
)
export type Business = typeof BusinessInput.Type

/** The opt-in carriers review: one web form, confirmed by the customer to carry the consent checkbox. */
export const OptIn = Schema.Struct({
  method: Schema.Literal("web_form"),
  url: PublicHttpsUrl,
  location: Required(300),
  formConfirmed: Schema.Literal(true).annotations({
    message: () =>
      "must be true: the live form shows an unchecked, optional, standalone SMS consent checkbox with the required wording"
  }),
  screenshotUrl: Schema.optional(PublicHttpsUrl)
}).annotations(strict)
export type OptIn = typeof OptIn.Type

const Description = Text(4096).pipe(Schema.minLength(40, { message: () => "must be at least 40 characters" }))
const MessageFlow = Text(2048).pipe(Schema.minLength(40, { message: () => "must be at least 40 characters" }))

const campaignFields = {
  useCase: Schema.optionalWith(
    Text(40).pipe(Schema.pattern(/^[A-Z0-9_]+$/, { message: () => "must be a registry use case such as MIXED" })),
    {
      default: () => "MIXED"
    }
  ),
  samples: Schema.optional(
    Schema.Array(Required(1024)).pipe(Schema.maxItems(5, { message: () => "at most 5 samples" }))
  ),
  optinMessage: Schema.optional(Required(320)),
  helpMessage: Schema.optional(Required(320)),
  optinKeywords: Schema.optionalWith(
    Text(255).pipe(
      Schema.pattern(/^[A-Za-z0-9]+(,[A-Za-z0-9]+)*$/, {
        message: () => "must be keywords separated by commas, without spaces"
      })
    ),
    { default: () => "START" }
  ),
  embeddedLink: Schema.optional(Schema.Boolean),
  embeddedPhone: Schema.optional(Schema.Boolean)
}

export const CampaignInput = Schema.Struct({
  ...campaignFields,
  description: Schema.optional(Description),
  optIn: Schema.optional(OptIn),
  messageFlow: Schema.optional(MessageFlow)
}).annotations(strict)
export type CampaignInput = typeof CampaignInput.Type

/** The campaign as filed: the description and the message flow always present. */
export const Campaign = Schema.Struct({
  ...campaignFields,
  description: Description,
  messageFlow: MessageFlow,
  optIn: Schema.optional(OptIn)
})
export type Campaign = typeof Campaign.Type

/** `business` required, `campaign` optional (every campaign default applies): the filing's application. */
export const ApplicationInput = Schema.Struct({
  business: BusinessInput,
  campaign: Schema.optional(CampaignInput)
})

export interface Application {
  readonly business: Business
  readonly campaign: Campaign
}

const useCaseWords = (useCase: string) => useCase.toLowerCase().replaceAll("_", " ")

/** The carrier-ready opt-in description: the one method, where to find it, and what it shows. */
export const optInFlow = (optIn: OptIn): string =>
  `End users opt in to text messages through the web form at ${optIn.url} (${optIn.location}). ` +
  `The form has an unchecked, optional, standalone SMS consent checkbox, not bundled with other terms, ` +
  `stating the message purpose and frequency, that message and data rates may apply, and that replying STOP opts out and HELP gives help.` +
  (optIn.screenshotUrl === undefined ? "" : ` A screenshot of the form: ${optIn.screenshotUrl}`)

/** The campaign completed from the business: `optIn` wins over `messageFlow`; a keyword opt-in when neither is given. */
export const composeCampaign = (business: Business, input: CampaignInput): Campaign => ({
  ...input,
  description: input.description ??
    `${business.displayName} sends ${
      useCaseWords(input.useCase)
    } text messages to customers who have opted in to receive them.`,
  messageFlow: input.optIn !== undefined
    ? optInFlow(input.optIn)
    : (input.messageFlow ??
      `End users opt in by texting ${input.optinKeywords.split(",")[0]} to ${business.displayName}'s number; ` +
        `they receive a confirmation, and can reply STOP to opt out or HELP for help.`)
})

const decodeInput = Schema.decodeUnknownEither(ApplicationInput, { errors: "all" })
const defaultCampaign = Schema.decodeSync(CampaignInput)({})

/** A decoded `{business, campaign?}` with every campaign default applied and its texts composed. */
export const completeApplication = ({ business, campaign }: typeof ApplicationInput.Type): Application => {
  // The registry takes a state's code: `Illinois` is filed as `IL`.
  const filed = { ...business, state: knownRegion(business.country, business.state) ?? business.state }
  return { business: filed, campaign: composeCampaign(filed, campaign ?? defaultCampaign) }
}

/** A caller's `{business, campaign?}` checked and completed, or the 400 naming every offending field. */
export const decodeApplication = (input: unknown): Either.Either<Application, InvalidArgument> =>
  Either.match(decodeInput(input), {
    onLeft: (e) => Either.left(invalidInput(e)),
    onRight: (input) => Either.right(completeApplication(input))
  })
