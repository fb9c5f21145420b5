/** SPEC "Business input" and "Campaign input": every rule a 400 naming the field, and the composed campaign. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { type Application, decodeApplication } from "../../core/registration/input.ts"

const business = {
  displayName: "Acme Plumbing",
  email: "owner@acme.example",
  vertical: "PROFESSIONAL",
  street: "1 Main St",
  city: "Springfield",
  state: "IL",
  postalCode: "62701",
  companyName: "Acme Plumbing LLC",
  ein: "12-3456789"
}
const sole = {
  entityType: "SOLE_PROPRIETOR",
  displayName: "Ada's Tutoring",
  email: "ada@example.com",
  vertical: "EDUCATION",
  street: "2 Elm St",
  city: "Austin",
  state: "TX",
  postalCode: "73301",
  firstName: "Ada",
  lastName: "Lovelace",
  mobilePhone: "(415) 555-0100"
}
const optIn = {
  method: "web_form",
  url: "https://acme.example/sms",
  location: "footer of the home page",
  formConfirmed: true
}

const ok = (input: unknown): Application => {
  const result = decodeApplication(input)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}
/** The 400's message, which must name the field. */
const refused = (input: unknown): string => {
  const result = decodeApplication(input)
  if (Either.isRight(result)) throw new Error("accepted")
  expect(result.left._tag).toBe("InvalidArgument")
  return result.left.message
}

describe("business input", () => {
  it("a business brand: defaults entityType PRIVATE_PROFIT and country US, EIN kept as its 9 digits", () => {
    const { business: b } = ok({ business })
    expect(b.entityType).toBe("PRIVATE_PROFIT")
    expect(b.country).toBe("US")
    expect(b.ein).toBe("123456789")
    expect(ok({ business: { ...business, ein: "123456789" } }).business.ein).toBe("123456789")
  })

  it("every brand needs displayName, email, vertical and the address", () => {
    for (const field of ["displayName", "email", "vertical", "street", "city", "state", "postalCode"]) {
      const { [field]: _, ...rest } = business as Record<string, string>
      expect(refused({ business: rest })).toBe(`business.${field}: is required`)
      expect(refused({ business: { ...business, [field]: " " } })).toMatch(new RegExp(`^business\\.${field}: `))
    }
  })

  it("companyName and ein are required unless SOLE_PROPRIETOR, for every other entity type", () => {
    for (const entityType of ["PRIVATE_PROFIT", "PUBLIC_PROFIT", "NON_PROFIT", "GOVERNMENT"]) {
      const { companyName: _, ein: __, ...rest } = business
      expect(refused({ business: { ...rest, entityType } })).toBe(
        `business.companyName: is required for ${entityType} brands; business.ein: is required for ${entityType} brands`
      )
    }
    expect(ok({ business: sole }).business.ein).toBeUndefined()
  })

  it("firstName, lastName and mobilePhone are required for SOLE_PROPRIETOR, and the mobile is stored in E.164", () => {
    expect(ok({ business: sole }).business.mobilePhone).toBe("+14155550100")
    for (const field of ["firstName", "lastName", "mobilePhone"]) {
      const { [field]: _, ...rest } = sole as Record<string, string>
      expect(refused({ business: rest })).toBe(`business.${field}: is required for SOLE_PROPRIETOR brands`)
    }
  })

  it("EIN: 9 digits, one optional dash after the second", () => {
    for (const ein of ["12345678", "1234567890", "12-345-6789", "AB-3456789", "123-456789"]) {
      expect(refused({ business: { ...business, ein } })).toBe(
        "business.ein: must be 9 digits (an EIN, dash optional: 12-3456789)"
      )
    }
  })

  it("phones: E.164 or 10-digit US, anything else refused naming the field", () => {
    expect(ok({ business: { ...business, phone: "+442071838750" } }).business.phone).toBe("+442071838750")
    expect(ok({ business: { ...business, phone: "415.555.0100" } }).business.phone).toBe("+14155550100")
    expect(refused({ business: { ...business, phone: "12345" } })).toBe(
      `business.phone: "12345" is not a valid phone number`
    )
    expect(refused({ business: { ...sole, mobilePhone: "call me" } })).toBe(
      `business.mobilePhone: "call me" is not a phone number`
    )
  })

  it("enumerations, email, country, unknown fields", () => {
    expect(refused({ business: { ...business, entityType: "LLC" } })).toMatch(
      /^business\.entityType: expected "PRIVATE_PROFIT" or /
    )
    expect(refused({ business: { ...business, vertical: "PLUMBING" } })).toMatch(
      /^business\.vertical: expected "AGRICULTURE" or /
    )
    expect(refused({ business: { ...business, email: "acme" } })).toBe("business.email: must be an email address")
    expect(refused({ business: { ...business, country: "USA" } })).toMatch(/^business\.country: /)
    expect(refused({ business: { ...business, ein2: "x" } })).toBe("business.ein2: unknown field")
    expect(refused({})).toBe("business: is required")
  })
})

describe("campaign input", () => {
  it("omitted: useCase MIXED, optinKeywords START, description from the business name and use case, a keyword opt-in flow", () => {
    const { campaign } = ok({ business })
    expect(campaign.useCase).toBe("MIXED")
    expect(campaign.optinKeywords).toBe("START")
    expect(campaign.description).toBe(
      "Acme Plumbing sends mixed text messages to customers who have opted in to receive them."
    )
    expect(campaign.messageFlow).toMatch(/^End users opt in by texting START to Acme Plumbing's number/)
    expect(ok({ business, campaign: { useCase: "ACCOUNT_NOTIFICATION" } }).campaign.description).toBe(
      "Acme Plumbing sends account notification text messages to customers who have opted in to receive them."
    )
  })

  it("the composed description and flow meet the 40-character minimum even for a one-letter name", () => {
    const { campaign } = ok({ business: { ...business, displayName: "A" } })
    expect(campaign.description.length).toBeGreaterThanOrEqual(40)
    expect(campaign.messageFlow.length).toBeGreaterThanOrEqual(40)
  })

  it("description: at least 40 characters; kept as given", () => {
    const description = "Appointment reminders and service updates for plumbing customers."
    expect(ok({ business, campaign: { description } }).campaign.description).toBe(description)
    expect(refused({ business, campaign: { description: "too short" } })).toBe(
      "campaign.description: must be at least 40 characters"
    )
  })

  it("samples: at most 5", () => {
    expect(ok({ business, campaign: { samples: ["a", "b", "c", "d", "e"] } }).campaign.samples).toHaveLength(5)
    expect(refused({ business, campaign: { samples: ["a", "b", "c", "d", "e", "f"] } })).toBe(
      "campaign.samples: at most 5 samples"
    )
  })

  it("messageFlow: 40 to 2048 characters", () => {
    expect(ok({ business, campaign: { messageFlow: "x".repeat(40) } }).campaign.messageFlow).toBe("x".repeat(40))
    expect(ok({ business, campaign: { messageFlow: "x".repeat(2048) } }).campaign.messageFlow).toHaveLength(2048)
    expect(refused({ business, campaign: { messageFlow: "x".repeat(39) } })).toBe(
      "campaign.messageFlow: must be at least 40 characters"
    )
    expect(refused({ business, campaign: { messageFlow: "x".repeat(2049) } })).toMatch(
      /^campaign\.messageFlow: expected a string at most 2048 character/
    )
  })

  it("optIn: composes the carrier-ready flow, and overrides messageFlow", () => {
    const { campaign } = ok({
      business,
      campaign: { optIn: { ...optIn, screenshotUrl: "https://cdn.acme.example/form.png" }, messageFlow: "y".repeat(50) }
    })
    expect(campaign.messageFlow).toContain("web form at https://acme.example/sms (footer of the home page)")
    expect(campaign.messageFlow).toContain("unchecked, optional, standalone SMS consent checkbox")
    expect(campaign.messageFlow).toContain("A screenshot of the form: https://cdn.acme.example/form.png")
    expect(ok({ business, campaign: { optIn } }).campaign.messageFlow).not.toContain("screenshot")
  })

  it("optIn at its longest still composes a valid messageFlow", () => {
    const url = "https://acme.example/" + "p".repeat(600 - 21)
    const { campaign } = ok({
      business,
      campaign: { optIn: { ...optIn, url, location: "l".repeat(300), screenshotUrl: url } }
    })
    expect(campaign.messageFlow.length).toBeLessThanOrEqual(2048)
  })

  it("optIn: method web_form only; url, location and formConfirmed required; formConfirmed must be true", () => {
    expect(refused({ business, campaign: { optIn: { ...optIn, method: "paper" } } })).toBe(
      `campaign.optIn.method: expected "web_form", got "paper"`
    )
    for (const field of ["method", "url", "location", "formConfirmed"]) {
      const { [field]: _, ...rest } = optIn as Record<string, unknown>
      expect(refused({ business, campaign: { optIn: rest } })).toBe(`campaign.optIn.${field}: is required`)
    }
    expect(refused({ business, campaign: { optIn: { ...optIn, formConfirmed: false } } })).toMatch(
      /^campaign\.optIn\.formConfirmed: must be true/
    )
  })

  it("optIn urls: public https only", () => {
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      ["http://acme.example/sms", /must use https/],
      ["https://localhost/sms", /localhost/],
      ["https://10.0.0.1/sms", /private/],
      ["https://intranet/sms", /not a public name/],
      ["not a url", /not a valid absolute URL/]
    ]
    for (const [url, why] of cases) {
      expect(refused({ business, campaign: { optIn: { ...optIn, url } } })).toMatch(
        new RegExp(`^campaign\\.optIn\\.url: must be a public https URL: .*${why.source}`)
      )
      expect(refused({ business, campaign: { optIn: { ...optIn, screenshotUrl: url } } })).toMatch(
        /^campaign\.optIn\.screenshotUrl: must be a public https URL/
      )
    }
  })

  it("useCase and optinKeywords formats; booleans", () => {
    expect(refused({ business, campaign: { useCase: "mixed use" } })).toBe(
      "campaign.useCase: must be a registry use case such as MIXED"
    )
    expect(ok({ business, campaign: { optinKeywords: "START,JOIN" } }).campaign.optinKeywords).toBe("START,JOIN")
    expect(refused({ business, campaign: { optinKeywords: "START, JOIN" } })).toBe(
      "campaign.optinKeywords: must be keywords separated by commas, without spaces"
    )
    expect(refused({ business, campaign: { embeddedLink: "yes" } })).toBe(
      `campaign.embeddedLink: expected boolean, got "yes"`
    )
  })

  it("reports every offending field of both parts at once", () => {
    expect(refused({ business: { ...business, email: "x" }, campaign: { samples: [1] } })).toBe(
      "business.email: must be an email address; campaign.samples.0: expected string, got 1"
    )
  })
})

describe("a US address and website the registry accepts", () => {
  it("a state by code or name (filed as its code), a ZIP code; an unknown state, a bad ZIP, a non-http website are 400 naming the field", () => {
    expect(ok({ business: { ...business, state: "Illinois" } }).business.state).toBe("IL")
    expect(
      ok({ business: { ...business, state: "il", postalCode: "62701-1234", website: "https://acme.example" } }).business
        .state
    ).toBe("IL")
    expect(refused({ business: { ...business, state: "ZZ" } })).toContain("business.state: must be a US state")
    expect(refused({ business: { ...business, postalCode: "x" } })).toContain(
      "business.postalCode: must be a US ZIP code"
    )
    expect(refused({ business: { ...business, website: "javascript:alert(1)" } })).toContain(
      "business.website: must be an http or https URL"
    )
    // Another country's address is left to its registry.
    expect(ok({ business: { ...business, country: "CA", state: "Ontario", postalCode: "M5V 2T6" } }).business.state)
      .toBe("ON")
  })
})
