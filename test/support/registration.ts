/** Registration filings as a client sends them (`POST /messaging/registration` `business`), shared by the HTTP and MCP tests. */

export const business = {
  displayName: "Acme Plumbing",
  companyName: "Acme Plumbing LLC",
  ein: "12-3456789",
  email: "office@acme.example",
  vertical: "PROFESSIONAL",
  street: "1 Main St",
  city: "Springfield",
  state: "IL",
  postalCode: "62701",
  phone: "(217) 555-0142"
}

export const soleProprietor = {
  entityType: "SOLE_PROPRIETOR",
  displayName: "Jo's Tutoring",
  firstName: "Jo",
  lastName: "Rivera",
  mobilePhone: "+12175550199",
  email: "jo@tutoring.example",
  vertical: "EDUCATION",
  street: "2 Oak Ave",
  city: "Springfield",
  state: "IL",
  postalCode: "62702"
}

/** Billing that passes every filing gate without a trial to end. */
export const readyBilling = {
  plan: "standard",
  trial: false,
  subscription: "active",
  paymentMethod: true,
  identity: "verified",
  mobileVerified: true,
  billedVia: "card",
  cardDeclines: false,
  ownerEmail: "owner@acme.example"
}
