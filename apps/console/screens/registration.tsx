/**
 * US texting registration (SPEC "Messaging registration"): where the filing stands, the PIN step of
 * sole proprietors, and the filing form. The form checks nothing the server does not: a refused field
 * shows the server's own message under it (400), a refused filing the server's reason (409).
 */
import { useState } from "preact/hooks"
import type { MessagingStatus } from "../../../core/registration/record.ts"
import { fieldErrors, formError, tool } from "../api.ts"
import { useSession } from "../session.ts"
import { Badge, Button, Checkbox, ErrorNote, Field, Loading, Notice, Page, Select, useAction, useLoad } from "../ui.tsx"

const steps: Record<MessagingStatus["step"], readonly [string, "ok" | "warn" | "bad" | "info"]> = {
  none: ["Not filed", "info"],
  profile_ready: ["Ready to file", "info"],
  brand_pending: ["Brand in review", "warn"],
  brand_failed: ["Brand rejected", "bad"],
  brand_otp_pending: ["Waiting for the PIN", "warn"],
  brand_ok: ["Brand approved, campaign next", "warn"],
  campaign_pending: ["Campaign in carrier review", "warn"],
  campaign_active: ["Approved: texting is on", "ok"],
  campaign_failed: ["Campaign rejected", "bad"]
}

const entityTypes = [
  ["PRIVATE_PROFIT", "Private company"],
  ["PUBLIC_PROFIT", "Public company"],
  ["NON_PROFIT", "Non-profit"],
  ["GOVERNMENT", "Government"],
  ["SOLE_PROPRIETOR", "Sole proprietor"]
] as const

const verticals = [
  "PROFESSIONAL",
  "RETAIL",
  "REAL_ESTATE",
  "HEALTHCARE",
  "HOSPITALITY",
  "CONSTRUCTION",
  "EDUCATION",
  "FINANCIAL",
  "INSURANCE",
  "LEGAL",
  "TECHNOLOGY",
  "TRANSPORTATION",
  "ENTERTAINMENT",
  "AGRICULTURE",
  "COMMUNICATION",
  "ENERGY",
  "MANUFACTURING",
  "HUMAN_RESOURCES",
  "NGO",
  "GOVERNMENT",
  "POSTAL",
  "POLITICAL",
  "GAMBLING"
] as const

const words = (s: string) => s.charAt(0) + s.slice(1).toLowerCase().replaceAll("_", " ")

const Status = (
  { messaging, onChange }: { readonly messaging: MessagingStatus; readonly onChange: (m: MessagingStatus) => void }
) => {
  const session = useSession()
  const [pin, setPin] = useState("")
  const [said, setSaid] = useState<string | null>(null)
  const action = useAction()
  const [label, tone] = steps[messaging.step]
  const act = async (name: string, input: Record<string, unknown>, done: string) => {
    setSaid(null)
    const answer = await action.run(() => tool<{ messaging: MessagingStatus }>(name, input))
    if (answer !== undefined) {
      onChange(answer.messaging)
      setSaid(done)
    }
  }
  const reasons = [...(messaging.brand?.failureReasons ?? []), ...(messaging.campaign?.failureReasons ?? [])]
  return (
    <section class="card" aria-labelledby="status-title">
      <h2 id="status-title">Status</h2>
      <p>
        <Badge tone={tone}>{label}</Badge> {messaging.mock === true && <Badge>Practice filing (mock)</Badge>}
      </p>
      <dl class="facts">
        <dt>Can text</dt>
        <dd>{messaging.canText ? "Yes" : "Not yet"}</dd>
        {messaging.brand !== null && (
          <>
            <dt>Brand</dt>
            <dd>{messaging.brand.status}</dd>
          </>
        )}
        {messaging.campaign !== null && (
          <>
            <dt>Campaign</dt>
            <dd>{messaging.campaign.status}</dd>
          </>
        )}
      </dl>
      {reasons.length > 0 && (
        <div class="note note-error">
          <strong>Why it was rejected</strong>
          <ul>
            {reasons.map((r, i) => <li key={i}>{r}</li>)}
          </ul>
        </div>
      )}
      {messaging.step === "brand_otp_pending" && session.tools.has("messaging_verify_otp") && (
        <form
          class="form"
          onSubmit={(e) => {
            e.preventDefault()
            void act("messaging_verify_otp", { pin: pin.trim() }, "PIN accepted.")
          }}
        >
          <Field
            label="PIN from the registry's text"
            inputMode="numeric"
            autoComplete="one-time-code"
            hint={messaging.brand?.otpMobileLast4 != null
              ? `Sent to the mobile number ending in ${messaging.brand.otpMobileLast4}. It expires after 24 hours.`
              : "It expires after 24 hours."}
            value={pin}
            onValue={setPin}
          />
          <div class="actions">
            <Button kind="primary" type="submit" busy={action.busy}>
              Verify PIN
            </Button>
            <Button busy={action.busy} onClick={() => void act("messaging_resend_otp", {}, "A new PIN is on its way.")}>
              Send a new PIN
            </Button>
          </div>
        </form>
      )}
      <ErrorNote error={action.error} />
      <Notice>{said}</Notice>
      {messaging.step !== "none" && session.tools.has("messaging_refresh") && (
        <Button
          busy={action.busy}
          onClick={() => void act("messaging_refresh", {}, "Status checked with the carrier.")}
        >
          Check status now
        </Button>
      )}
    </section>
  )
}

interface Form {
  entityType: string
  displayName: string
  email: string
  vertical: string
  street: string
  city: string
  state: string
  postalCode: string
  companyName: string
  ein: string
  firstName: string
  lastName: string
  mobilePhone: string
  phone: string
  website: string
  useCase: string
  description: string
  optInUrl: string
  optInLocation: string
  formConfirmed: boolean
  screenshotUrl: string
  messageFlow: string
  samples: string
  acknowledgeTrialEnd: boolean
  mock: boolean
}

const empty: Form = {
  entityType: "PRIVATE_PROFIT",
  displayName: "",
  email: "",
  vertical: "PROFESSIONAL",
  street: "",
  city: "",
  state: "",
  postalCode: "",
  companyName: "",
  ein: "",
  firstName: "",
  lastName: "",
  mobilePhone: "",
  phone: "",
  website: "",
  useCase: "",
  description: "",
  optInUrl: "",
  optInLocation: "",
  formConfirmed: false,
  screenshotUrl: "",
  messageFlow: "",
  samples: "",
  acknowledgeTrialEnd: false,
  mock: false
}

const businessFields = [
  "entityType",
  "displayName",
  "email",
  "vertical",
  "street",
  "city",
  "state",
  "postalCode",
  "companyName",
  "ein",
  "firstName",
  "lastName",
  "mobilePhone",
  "phone",
  "website"
] as const

/** The paths the server names in a refused filing (`business.ein`, `campaign.optIn.url`). */
const paths = [
  ...businessFields.map((f) => `business.${f}`),
  "campaign.useCase",
  "campaign.description",
  "campaign.optIn.url",
  "campaign.optIn.location",
  "campaign.optIn.formConfirmed",
  "campaign.optIn.screenshotUrl",
  "campaign.optIn",
  "campaign.messageFlow",
  "campaign.samples",
  "acknowledge_trial_end"
]

const requestOf = (f: Form) => {
  const given = (s: string) => s.trim() !== ""
  const soleProprietor = f.entityType === "SOLE_PROPRIETOR"
  const business = Object.fromEntries(
    businessFields
      .filter((k) => !(soleProprietor ? ["companyName", "ein"] : ["firstName", "lastName", "mobilePhone"]).includes(k))
      .filter((k) => given(f[k]))
      .map((k) => [k, f[k].trim()])
  )
  const samples = f.samples.split("\n").map((s) => s.trim()).filter((s) => s !== "")
  const campaign: Record<string, unknown> = {
    ...(given(f.useCase) ? { useCase: f.useCase.trim() } : {}),
    ...(given(f.description) ? { description: f.description.trim() } : {}),
    ...(samples.length > 0 ? { samples } : {}),
    ...(given(f.optInUrl) || given(f.optInLocation) || f.formConfirmed
      ? {
        optIn: {
          method: "web_form",
          url: f.optInUrl.trim(),
          location: f.optInLocation.trim(),
          formConfirmed: f.formConfirmed,
          ...(given(f.screenshotUrl) ? { screenshotUrl: f.screenshotUrl.trim() } : {})
        }
      }
      : given(f.messageFlow)
      ? { messageFlow: f.messageFlow.trim() }
      : {})
  }
  return {
    business,
    ...(Object.keys(campaign).length > 0 ? { campaign } : {}),
    ...(f.acknowledgeTrialEnd ? { acknowledge_trial_end: true } : {}),
    ...(f.mock ? { mock: true } : {})
  }
}

const labels: Record<(typeof businessFields)[number], string> = {
  entityType: "Kind of business",
  displayName: "Brand name customers see",
  email: "Contact email",
  vertical: "Industry",
  street: "Street address",
  city: "City",
  state: "State",
  postalCode: "ZIP code",
  companyName: "Legal company name",
  ein: "EIN (tax id)",
  firstName: "Your first name",
  lastName: "Your last name",
  mobilePhone: "Your mobile number (receives the PIN)",
  phone: "Support phone (optional)",
  website: "Website (optional)"
}

const Filing = ({ onFiled }: { readonly onFiled: (m: MessagingStatus) => void }) => {
  const [form, setForm] = useState<Form>(empty)
  const [filed, setFiled] = useState(false)
  const file = useAction()
  const errors = fieldErrors(file.error, paths)
  const set = <K extends keyof Form>(k: K) => (v: Form[K]) => setForm({ ...form, [k]: v })
  const text = (k: (typeof businessFields)[number], extra: Record<string, unknown> = {}) => (
    <Field
      label={labels[k]}
      value={form[k]}
      onValue={set(k)}
      error={errors[`business.${k}`]}
      {...extra}
    />
  )
  const soleProprietor = form.entityType === "SOLE_PROPRIETOR"

  const submit = async (e: Event) => {
    e.preventDefault()
    setFiled(false)
    const answer = await file.run(() => tool<{ messaging: MessagingStatus }>("messaging_register", requestOf(form)))
    if (answer !== undefined) {
      setFiled(true)
      onFiled(answer.messaging)
    }
  }

  return (
    <section class="card" aria-labelledby="filing-title">
      <h2 id="filing-title">File the registration</h2>
      <p>
        US carriers only deliver business texts from registered brands. A live filing is a purchase: it ends a free
        trial and charges the plan and the one-time setup fee per local number before carriers review it.
      </p>
      <form class="form" onSubmit={submit} noValidate>
        <fieldset>
          <legend>The business</legend>
          <Select
            label={labels.entityType}
            value={form.entityType}
            onValue={set("entityType")}
            options={entityTypes}
            error={errors["business.entityType"]}
          />
          {text("displayName")}
          {text("email", { type: "email", autoComplete: "email" })}
          <Select
            label={labels.vertical}
            value={form.vertical}
            onValue={set("vertical")}
            options={verticals.map((v) => [v, words(v)] as const)}
            error={errors["business.vertical"]}
          />
          {soleProprietor
            ? (
              <>
                {text("firstName", { autoComplete: "given-name" })}
                {text("lastName", { autoComplete: "family-name" })}
                {text("mobilePhone", { type: "tel", autoComplete: "tel" })}
              </>
            )
            : (
              <>
                {text("companyName", { autoComplete: "organization" })}
                {text("ein", { inputMode: "numeric", hint: "9 digits, dash optional: 12-3456789." })}
              </>
            )}
          {text("street", { autoComplete: "street-address" })}
          <div class="grid-3">
            {text("city", { autoComplete: "address-level2" })}
            {text("state", { autoComplete: "address-level1", hint: "IL or Illinois." })}
            {text("postalCode", { autoComplete: "postal-code", inputMode: "numeric" })}
          </div>
          {text("phone", { type: "tel" })}
          {text("website", { type: "url", placeholder: "https://" })}
        </fieldset>
        <details class="more">
          <summary>The campaign (optional: sensible defaults otherwise)</summary>
          <fieldset>
            <legend class="sr-only">The campaign</legend>
            <Field
              label="Use case"
              hint="A registry use case such as MIXED (the default) or CUSTOMER_CARE."
              value={form.useCase}
              onValue={set("useCase")}
              error={errors["campaign.useCase"]}
            />
            <Field
              label="Description"
              multiline
              hint="At least 40 characters: what you text and to whom."
              value={form.description}
              onValue={set("description")}
              error={errors["campaign.description"]}
            />
            <Field
              label="Sample messages"
              multiline
              hint="One per line, at most 5."
              value={form.samples}
              onValue={set("samples")}
              error={errors["campaign.samples"]}
            />
            <p class="hint">How people opt in: a web form (preferred), or describe one other method below.</p>
            <Field
              label="Opt-in form page"
              type="url"
              placeholder="https://"
              hint="The public https page holding the SMS sign-up form."
              value={form.optInUrl}
              onValue={set("optInUrl")}
              error={errors["campaign.optIn.url"] ?? errors["campaign.optIn"]}
            />
            <Field
              label="Where on the page the form is"
              value={form.optInLocation}
              onValue={set("optInLocation")}
              error={errors["campaign.optIn.location"]}
            />
            <Checkbox
              label="The live form shows an unchecked, optional, standalone SMS consent checkbox with the required wording"
              checked={form.formConfirmed}
              onChecked={set("formConfirmed")}
              error={errors["campaign.optIn.formConfirmed"]}
            />
            <Field
              label="Screenshot of the form (optional)"
              type="url"
              value={form.screenshotUrl}
              onValue={set("screenshotUrl")}
              error={errors["campaign.optIn.screenshotUrl"]}
            />
            <Field
              label="Or: how people opt in, in words"
              multiline
              hint="40 to 2048 characters describing one concrete opt-in method."
              value={form.messageFlow}
              onValue={set("messageFlow")}
              error={errors["campaign.messageFlow"]}
            />
          </fieldset>
        </details>
        <Checkbox
          label="I understand filing ends the free trial and charges the card on file"
          checked={form.acknowledgeTrialEnd}
          onChecked={set("acknowledgeTrialEnd")}
          error={errors["acknowledge_trial_end"]}
        />
        <Checkbox
          label="Practice filing (mock): run the whole review with nothing filed or charged"
          checked={form.mock}
          onChecked={set("mock")}
        />
        <ErrorNote title="The filing was refused: " error={formError(file.error, errors)} />
        <Notice>{filed && "Filed. The status above follows the review."}</Notice>
        <Button kind="primary" type="submit" busy={file.busy}>
          File registration
        </Button>
      </form>
    </section>
  )
}

export const Registration = () => {
  const session = useSession()
  const status = useLoad(() => tool<{ messaging: MessagingStatus }>("messaging_status"), [])
  return (
    <Page title="Texting registration">
      <ErrorNote error={status.error} />
      {status.data === undefined
        ? status.error === undefined && <Loading what="the registration" />
        : (
          <>
            <Status messaging={status.data.messaging} onChange={(messaging) => status.setData({ messaging })} />
            {session.tools.has("messaging_register") && status.data.messaging.step !== "campaign_active" && (
              <Filing onFiled={(messaging) => status.setData({ messaging })} />
            )}
          </>
        )}
    </Page>
  )
}
