/** CONTRACT.md "Admin API": the operator's routes, bearer `ADMIN_TOKEN`. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AuditEntry } from "../../../core/audit/log.ts"
import { CardSetupInput } from "../../../core/billing/hosted.ts"
import { Invoice } from "../../../core/billing/invoices.ts"
import { LedgerCharge } from "../../../core/billing/ledger.ts"
import { MailMessage } from "../../../core/mail/message.ts"
import { CreateMemberInput, Member, UpdateMemberInput } from "../../../core/members/model.ts"
import { WorkspaceNumber } from "../../../core/numbers/model.ts"
import { AddNumberInput, CreateWorkspaceInput, UpdateWorkspaceInput } from "../../../core/workspaces/inputs.ts"
import { CreatedKey, CreateKeyInput } from "../../../core/workspaces/keys.ts"
import { ApiKey, Workspace } from "../../../core/workspaces/model.ts"
import { AdminAuthorization, BoundedBody } from "../security.ts"
import { FailedPrecondition, InvalidArgument, NotFound } from "./errors.ts"
import * as examples from "./examples.ts"
import { IdParam } from "./shared.ts"

const KeyIdParam = Schema.Struct({ keyId: Schema.String })
const MemberIdParam = Schema.Struct({ memberId: Schema.String })
const InvoiceIdParam = Schema.Struct({ id: Schema.String, invoiceId: Schema.String })

const MemberEnvelope = Schema.Struct({ member: Member }).annotations({ examples: [{ member: examples.member }] })

const WorkspaceEnvelope = Schema.Struct({ workspace: Workspace }).annotations({
  examples: [{ workspace: examples.workspace }]
})

export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createWorkspace", "/workspaces")
      .setPayload(
        CreateWorkspaceInput.annotations({
          examples: [{ name: examples.workspace.name, billing: { ownerEmail: examples.workspace.billing.ownerEmail } }]
        })
      )
      .addSuccess(WorkspaceEnvelope, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listWorkspaces", "/workspaces")
      .addSuccess(
        Schema.Struct({ workspaces: Schema.Array(Workspace) }).annotations({
          examples: [{ workspaces: [examples.workspace] }]
        })
      )
      .annotate(OpenApi.Description, "Every workspace, oldest first.")
  )
  .add(HttpApiEndpoint.get("getWorkspace", "/workspaces/:id").setPath(IdParam).addSuccess(WorkspaceEnvelope))
  .add(
    HttpApiEndpoint.patch("updateWorkspace", "/workspaces/:id")
      .setPath(IdParam)
      .setPayload(UpdateWorkspaceInput.annotations({ examples: [{ billing: { paymentMethod: true, trial: false } }] }))
      .addSuccess(WorkspaceEnvelope)
  )
  .add(
    HttpApiEndpoint.post("createKey", "/workspaces/:id/keys")
      .setPath(IdParam)
      .setPayload(
        CreateKeyInput.annotations({
          examples: [{
            kind: examples.createdKey.kind,
            scopes: examples.createdKey.scopes,
            name: examples.createdKey.name
          }]
        })
      )
      .addSuccess(Schema.Struct({ key: CreatedKey }).annotations({ examples: [{ key: examples.createdKey }] }), {
        status: 201
      })
  )
  .add(
    HttpApiEndpoint.get("listKeys", "/workspaces/:id/keys")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({ keys: Schema.Array(ApiKey) }).annotations({ examples: [{ keys: [examples.apiKey] }] })
      )
      .annotate(
        OpenApi.Description,
        "The workspace's keys, revoked ones included, oldest first. Never a token or its hash: a lost token is replaced by a new key."
      )
  )
  .add(
    HttpApiEndpoint.get("getKey", "/keys/:keyId")
      .setPath(KeyIdParam)
      .addSuccess(Schema.Struct({ key: ApiKey }).annotations({ examples: [{ key: examples.apiKey }] }))
  )
  .add(
    HttpApiEndpoint.del("revokeKey", "/keys/:keyId")
      .setPath(KeyIdParam)
      .addSuccess(Schema.Struct({ revoked: Schema.Literal(true) }).annotations({ examples: [{ revoked: true }] }))
  )
  .add(
    HttpApiEndpoint.post("addNumber", "/workspaces/:id/numbers")
      .setPath(IdParam)
      .setPayload(AddNumberInput.annotations({ examples: [{ e164: examples.number.e164 }] }))
      .addSuccess(Schema.Struct({ number: WorkspaceNumber }).annotations({ examples: [{ number: examples.number }] }), {
        status: 201
      })
      .addError(FailedPrecondition)
  )
  .add(
    HttpApiEndpoint.get("listNumbers", "/workspaces/:id/numbers")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({ numbers: Schema.Array(WorkspaceNumber) }).annotations({
          examples: [{ numbers: [examples.number] }]
        })
      )
      .annotate(OpenApi.Description, "The workspace's numbers, seeded and bought, oldest first.")
  )
  .add(
    HttpApiEndpoint.del("removeNumber", "/workspaces/:id/numbers/:e164")
      .setPath(Schema.Struct({ id: Schema.String, e164: Schema.String }))
      .addSuccess(Schema.Struct({ deleted: Schema.Literal(true) }).annotations({ examples: [{ deleted: true }] }))
      .addError(FailedPrecondition)
      .annotate(
        OpenApi.Description,
        "Removes a number seeded with `POST /workspaces/{id}/numbers`; its conversations stay. A number bought through the API (it has a ledger charge) is refused with 409: release it at the carrier."
      )
  )
  .add(
    HttpApiEndpoint.post("createMember", "/workspaces/:id/members")
      .setPath(IdParam)
      .setPayload(
        CreateMemberInput.annotations({
          examples: [{
            email: examples.member.email,
            name: examples.member.name,
            role: examples.member.role,
            phone: examples.member.phone
          }]
        })
      )
      .addSuccess(MemberEnvelope, { status: 201 })
      .addError(FailedPrecondition)
      .annotate(
        OpenApi.Description,
        "Adds a person to the workspace: `owner` (also manages members and billing), `admin` (also numbers, registration, the agent and developer settings) or `member` (the inbox and contacts). The email is stored trimmed and lower-cased; one already a member of this workspace is refused with 409 (it may be a member of other workspaces). `phone` is rung for the workspace's calls in `app` voice mode."
      )
  )
  .add(
    HttpApiEndpoint.get("listMembers", "/workspaces/:id/members")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({ members: Schema.Array(Member) }).annotations({ examples: [{ members: [examples.member] }] })
      )
      .annotate(OpenApi.Description, "The workspace's members, oldest first.")
  )
  .add(
    HttpApiEndpoint.patch("updateMember", "/members/:memberId")
      .setPath(MemberIdParam)
      .setPayload(UpdateMemberInput.annotations({ examples: [{ role: "owner" }, { phone: null }] }))
      .addSuccess(MemberEnvelope)
      .addError(FailedPrecondition)
      .annotate(
        OpenApi.Description,
        "Changes the fields given; `phone: null` clears the phone. An email already another member's in the workspace, or demoting the workspace's last owner, is refused with 409. A member whose email changes is signed out of the console."
      )
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/members/:memberId")
      .setPath(MemberIdParam)
      .addSuccess(Schema.Struct({ deleted: Schema.Literal(true) }).annotations({ examples: [{ deleted: true }] }))
      .addError(FailedPrecondition)
      .annotate(
        OpenApi.Description,
        "Removes the member: its console sessions end and the conversations assigned to it become unassigned; what it wrote stays. The workspace's last owner cannot be removed (409)."
      )
  )
  .add(
    HttpApiEndpoint.get("ledger", "/workspaces/:id/ledger")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({ charges: Schema.Array(LedgerCharge) }).annotations({
          examples: [{ charges: [examples.ledgerCharge] }]
        })
      )
  )
  .add(
    HttpApiEndpoint.get("invoices", "/workspaces/:id/invoices")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({ invoices: Schema.Array(Invoice) }).annotations({ examples: [{ invoices: [examples.invoice] }] })
      )
      .annotate(
        OpenApi.Description,
        "The workspace's monthly invoices, newest first (CONTRACT \"Billing cycle and payments\"). An invoice whose first charge is still in flight is not listed yet."
      )
  )
  .add(
    HttpApiEndpoint.post("payInvoice", "/workspaces/:id/invoices/:invoiceId/pay")
      .setPath(InvoiceIdParam)
      .addSuccess(
        Schema.Struct({ invoice: Invoice }).annotations({
          examples: [{ invoice: { ...examples.invoice, status: "failed" } }]
        }),
        { status: 202 }
      )
      .annotate(
        OpenApi.Description,
        "Charges a failed invoice again within seconds, whether its retries are pending or spent; paid, the subscription is active again. 404 for an invoice that is not failed."
      )
  )
  .add(
    HttpApiEndpoint.post("setupPaymentMethod", "/workspaces/:id/payment-method/setup")
      .setPath(IdParam)
      .setPayload(
        CardSetupInput.annotations({
          examples: [{
            successUrl: "https://switchboard.example.com/app",
            cancelUrl: "https://switchboard.example.com/app"
          }]
        })
      )
      .addSuccess(
        Schema.Struct({ url: Schema.String }).annotations({
          examples: [{ url: "https://checkout.stripe.com/c/pay/cs_test_a1b2c3" }]
        }),
        { status: 201 }
      )
      .addError(FailedPrecondition)
      .annotate(
        OpenApi.Description,
        "A page of the payment provider where the workspace's card is saved for its charges (PAYMENTS=stripe: a Stripe Checkout Session in setup mode for the workspace's Stripe customer). Once the card is saved, Stripe's webhook sets `billing.paymentMethod`. `successUrl` and `cancelUrl` default to the console (`<PUBLIC_BASE_URL>/app`). 409 with any other PAYMENTS, or when Stripe does not answer."
      )
  )
  .add(
    HttpApiEndpoint.get("auditLog", "/workspaces/:id/audit-log")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({ entries: Schema.Array(AuditEntry) }).annotations({
          examples: [{ entries: [examples.auditEntry] }]
        })
      )
  )
  .add(
    HttpApiEndpoint.get("mail", "/workspaces/:id/mail")
      .setPath(IdParam)
      .addSuccess(
        Schema.Struct({ mail: Schema.Array(MailMessage) }).annotations({ examples: [{ mail: [examples.mail] }] })
      )
  )
  .addError(InvalidArgument)
  .addError(NotFound)
  .middleware(BoundedBody)
  .middleware(AdminAuthorization)
  .prefix("/v1/admin")
  .annotate(OpenApi.Title, "Admin")
  .annotate(
    OpenApi.Description,
    "Operator API: workspaces, billing state, keys, members, seeded numbers. Bearer `ADMIN_TOKEN`; absent (404) when unset."
  )
{}
