import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Workspaces } from "../../../core/workspaces/service.ts"
import { Api } from "../api.ts"

export const AdminLive = HttpApiBuilder.group(Api, "admin", (handlers) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    return handlers
      .handle("createWorkspace", ({ payload }) => workspaces.create(payload).pipe(Effect.map((workspace) => ({ workspace }))))
      .handle("getWorkspace", ({ path }) => workspaces.get(path.id).pipe(Effect.map((workspace) => ({ workspace }))))
      .handle("updateWorkspace", ({ path, payload }) =>
        workspaces.update(path.id, payload).pipe(Effect.map((workspace) => ({ workspace })))
      )
      .handle("createKey", ({ path, payload }) => workspaces.createKey(path.id, payload).pipe(Effect.map((key) => ({ key }))))
      .handle("revokeKey", ({ path }) => workspaces.revokeKey(path.keyId).pipe(Effect.as({ revoked: true as const })))
      .handle("addNumber", ({ path, payload }) => workspaces.addNumber(path.id, payload).pipe(Effect.map((number) => ({ number }))))
      .handle("ledger", ({ path }) => workspaces.ledger(path.id).pipe(Effect.map((charges) => ({ charges }))))
      .handle("mail", ({ path }) => workspaces.mail(path.id).pipe(Effect.map((mail) => ({ mail }))))
      // Registration arrives with later work; until then the audit log is truthfully empty.
      .handle("auditLog", ({ path }) => workspaces.get(path.id).pipe(Effect.as({ entries: [] })))
  })
)
