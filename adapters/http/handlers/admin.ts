import { Effect } from "effect"
import { auditEntry } from "../../../core/audit/log.ts"
import { AuditLog } from "../../../core/audit/store.ts"
import { BillingCycle } from "../../../core/billing/cycle.ts"
import { cardSetupUrl, HostedPayments } from "../../../core/billing/hosted.ts"
import { Members } from "../../../core/members/service.ts"
import { ConsoleOrigin } from "../../../core/members/sessions.ts"
import { Workspaces } from "../../../core/workspaces/service.ts"
import { Api } from "../api.ts"
import { group } from "../router.ts"

export const AdminLive = group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const workspaces = yield* Workspaces
    const audit = yield* AuditLog
    const members = yield* Members
    const billing = yield* BillingCycle
    const { baseUrl } = yield* ConsoleOrigin
    const hosted = yield* Effect.serviceOption(HostedPayments)
    return handlers
      .handle("createWorkspace", ({ payload }) =>
        workspaces.create(payload).pipe(Effect.map((workspace) => ({ workspace }))))
      .handle("listWorkspaces", () =>
        workspaces.list.pipe(Effect.map((all) => ({ workspaces: all }))))
      .handle("getWorkspace", ({ path }) => workspaces.get(path.id).pipe(Effect.map((workspace) => ({ workspace }))))
      .handle("updateWorkspace", ({ path, payload }) =>
        workspaces.update(path.id, payload).pipe(Effect.map((workspace) => ({ workspace }))))
      .handle("createKey", ({ path, payload }) =>
        workspaces.createKey(path.id, payload).pipe(Effect.map((key) => ({ key }))))
      .handle("listKeys", ({ path }) =>
        workspaces.listKeys(path.id).pipe(Effect.map((keys) => ({ keys }))))
      .handle("getKey", ({ path }) =>
        workspaces.getKey(path.keyId).pipe(Effect.map((key) => ({ key }))))
      .handle("revokeKey", ({ path }) =>
        workspaces.revokeKey(path.keyId).pipe(Effect.as({ revoked: true as const })))
      .handle("createMember", ({ path, payload }) =>
        members.create(path.id, payload).pipe(Effect.map((member) => ({ member }))))
      .handle("listMembers", ({ path }) =>
        members.list(path.id).pipe(Effect.map((all) => ({ members: all }))))
      .handle("updateMember", ({ path, payload }) =>
        members.update(path.memberId, payload).pipe(Effect.map((member) => ({ member }))))
      .handle("removeMember", ({ path }) =>
        members.remove(path.memberId).pipe(Effect.as({ deleted: true as const })))
      .handle("addNumber", ({ path, payload }) =>
        workspaces.addNumber(path.id, payload).pipe(Effect.map((number) => ({ number }))))
      .handle("listNumbers", ({ path }) =>
        workspaces.listNumbers(path.id).pipe(Effect.map((numbers) => ({ numbers }))))
      .handle("removeNumber", ({ path }) =>
        workspaces.removeNumber(path.id, path.e164).pipe(Effect.as({ deleted: true as const })))
      .handle("ledger", ({ path }) =>
        workspaces.ledger(path.id).pipe(Effect.map((charges) => ({ charges }))))
      .handle("invoices", ({ path }) =>
        workspaces.get(path.id).pipe(
          Effect.zipRight(billing.list(path.id)),
          Effect.map((invoices) => ({ invoices }))
        ))
      .handle("payInvoice", ({ path }) =>
        workspaces.get(path.id).pipe(
          Effect.zipRight(billing.payNow(path.id, path.invoiceId)),
          Effect.map((invoice) => ({ invoice }))
        ))
      .handle("mail", ({ path }) =>
        workspaces.mail(path.id).pipe(Effect.map((mail) => ({ mail }))))
      .handle("setupPaymentMethod", ({ path, payload }) =>
        workspaces.get(path.id).pipe(
          Effect.zipRight(cardSetupUrl(hosted, path.id, payload, `${baseUrl}/app`)),
          Effect.map((url) => ({ url }))
        ))
      .handle("auditLog", ({ path }) =>
        workspaces.get(path.id).pipe(
          Effect.zipRight(audit.list(path.id)),
          Effect.map((rows) => ({ entries: rows.map(auditEntry) }))
        ))
  }))
