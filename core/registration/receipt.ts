/**
 * The receipt mailed to the owner after each filing: what was filed, with a masked copy of the
 * application (never the full EIN or a full phone number), and what was charged.
 */
import type { Charge } from "../billing/ledger.ts"
import type { Mail } from "../mail/message.ts"
import type { Registration } from "./record.ts"

/** All but the last 4 characters hidden: `*****6789`. */
export const maskTail = (value: string): string => `${"*".repeat(Math.max(0, value.length - 4))}${value.slice(-4)}`

const dollars = (cents: number) => `${(cents / 100).toFixed(2)} USD`

export const receiptMail = (to: string, r: Registration, charges: ReadonlyArray<Charge>): Mail => {
  const b = r.business
  const line = (label: string, value: string | undefined) => (value === undefined ? [] : [`  ${label}: ${value}`])
  const total = charges.reduce((sum, c) => sum + c.amountCents, 0)
  const text = [
    `We filed the US texting (10DLC) registration of ${b.displayName}${
      r.mock ? " in mock mode: nothing was sent to the registry and nothing was charged" : ""
    }.`,
    "",
    "Application (masked):",
    ...line("Entity type", b.entityType),
    ...line("Display name", b.displayName),
    ...line("Company", b.companyName),
    ...line("EIN", b.ein === undefined ? undefined : maskTail(b.ein)),
    ...line("Name", b.firstName === undefined ? undefined : `${b.firstName} ${b.lastName ?? ""}`.trim()),
    ...line("Mobile phone", b.mobilePhone === undefined ? undefined : maskTail(b.mobilePhone)),
    ...line("Support phone", b.phone === undefined ? undefined : maskTail(b.phone)),
    ...line("Email", b.email),
    ...line("Address", `${b.street}, ${b.city}, ${b.state} ${b.postalCode}, ${b.country}`),
    ...line("Vertical", b.vertical),
    ...line("Campaign use case", r.campaignInput.useCase),
    "",
    ...(charges.length === 0
      ? ["Nothing was charged."]
      : [
        "Charged to the card on file:",
        ...charges.map((c) => `  ${c.description}: ${dollars(c.amountCents)}`),
        `  Total: ${dollars(total)}`
      ]),
    "",
    "Carrier review takes minutes to a few days; GET /v1/api/messaging shows where it stands."
  ].join("\n")
  return { to, subject: `Texting registration filed for ${b.displayName}`, text }
}
