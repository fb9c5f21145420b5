/** CONTRACT.md "Admin API": bearer ADMIN_TOKEN, 404 everywhere when it is unset. */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AuditLog } from "../../core/audit/store.ts"
import { allScopes } from "../../core/auth/scopes.ts"
import type { Charge } from "../../core/billing/ledger.ts"
import { numberCharge, textingSetupCharge } from "../../core/billing/pricing.ts"
import { LedgerStore } from "../../core/billing/store.ts"
import { Conversations } from "../../core/conversations/service.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import { sendMail } from "../../core/mail/mailer.ts"
import { ADMIN_TOKEN, makeTestApp } from "../support/app.ts"
import { bearer, expectError, expectOk, UUID } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const someId = "0b7c3c4e-4a0e-4d5e-9a43-7c9d0e6f1a22"

/** Every admin route with a body that would be valid. */
const routes = (id: string, keyId: string): Array<[string, string, unknown?]> => [
  ["POST", "/workspaces", { name: "W" }],
  ["GET", `/workspaces/${id}`],
  ["PATCH", `/workspaces/${id}`, { name: "W2" }],
  ["POST", `/workspaces/${id}/keys`, { kind: "test" }],
  ["DELETE", `/keys/${keyId}`],
  ["POST", `/workspaces/${id}/numbers`, { e164: "+14155550199" }],
  ["GET", `/workspaces/${id}/ledger`],
  ["GET", `/workspaces/${id}/audit-log`],
  ["GET", `/workspaces/${id}/mail`],
  ["POST", `/workspaces/${id}/members`, { email: "ada@example.com", name: "Ada", role: "member" }],
  ["GET", `/workspaces/${id}/members`],
  ["PATCH", `/members/${keyId}`, { name: "Ada L." }],
  ["DELETE", `/members/${keyId}`]
]

const defaultBilling = {
  plan: "standard",
  trial: true,
  subscription: "active",
  paymentMethod: false,
  identity: "none",
  mobileVerified: false,
  billedVia: "card",
  cardDeclines: false
}

describe("admin API disabled (no ADMIN_TOKEN)", () => {
  let app: App
  beforeAll(async () => {
    app = await makeTestApp({ adminToken: null })
  })
  afterAll(() => app.close())

  it("answers 404 not_found on every admin route, with or without a token", async () => {
    for (const [method, path, json] of routes(app.workspaceId, someId)) {
      for (const headers of [{}, bearer(ADMIN_TOKEN), bearer("anything"), bearer(app.testKey)]) {
        const res = await app.fetch(`/v1/admin${path}`, { method, headers, ...(json === undefined ? {} : { json }) })
        await expectError(res, 404, "not_found")
      }
    }
  })

  it("answers 404 before validating a body", async () => {
    const res = await app.fetch("/v1/admin/workspaces", {
      method: "POST",
      headers: bearer(ADMIN_TOKEN),
      json: { bogus: true }
    })
    await expectError(res, 404, "not_found")
  })

  it("leaves the public API working", async () => {
    expect((await app.fetch("/v1/api/contacts", { headers: bearer(app.testKey) })).status).toBe(200)
  })
})

describe("admin API", () => {
  let app: App
  beforeAll(async () => {
    app = await makeTestApp()
  })
  afterAll(() => app.close())

  it("answers 401 unauthenticated with a missing or wrong token on every route", async () => {
    for (const [method, path, json] of routes(app.workspaceId, someId)) {
      for (
        const headers of [{}, bearer("wrong"), bearer(`${ADMIN_TOKEN}x`), bearer(app.testKey), {
          authorization: ADMIN_TOKEN
        }, { authorization: `Basic ${ADMIN_TOKEN}` }]
      ) {
        const res = await app.fetch(`/v1/admin${path}`, { method, headers, ...(json === undefined ? {} : { json }) })
        await expectError(res, 401, "unauthenticated")
      }
    }
  })

  it("does not accept the admin token on the public API", async () => {
    await expectError(await app.fetch("/v1/api/contacts", { headers: bearer(ADMIN_TOKEN) }), 401, "unauthenticated")
  })

  describe("workspaces", () => {
    it("creates a workspace with the contract's default billing", async () => {
      const res = await app.admin("/workspaces", { method: "POST", json: { name: "Acme" } })
      expect(res.status).toBe(201)
      const body = (await res.json()) as any
      expect(Object.keys(body)).toEqual(["workspace"])
      expect(body.workspace.id).toMatch(UUID)
      expect(body.workspace.name).toBe("Acme")
      expect(body.workspace.billing).toMatchObject(defaultBilling)
      expect(new Date(body.workspace.createdAt).toISOString()).toBe(body.workspace.createdAt)
      const get = await app.admin(`/workspaces/${body.workspace.id}`)
      expect(get.status).toBe(200)
      expect(await get.json()).toEqual(body)
    })

    it("creates a workspace with billing overrides merged over the defaults", async () => {
      const res = await app.admin("/workspaces", {
        method: "POST",
        json: { name: "Paid", billing: { trial: false, paymentMethod: true, ownerEmail: "owner@example.com" } }
      })
      expect(res.status).toBe(201)
      const { workspace } = (await res.json()) as any
      expect(workspace.billing).toEqual({
        ...defaultBilling,
        trial: false,
        paymentMethod: true,
        ownerEmail: "owner@example.com"
      })
    })

    it("patches billing by merging fields, and the name", async () => {
      const { workspaceId } = await app.createWorkspace("Patchable")
      const p1 = await app.admin(`/workspaces/${workspaceId}`, {
        method: "PATCH",
        json: { billing: { identity: "verified" } }
      })
      expect(p1.status).toBe(200)
      expect(((await p1.json()) as any).workspace.billing).toMatchObject({ ...defaultBilling, identity: "verified" })
      const p2 = await app.admin(`/workspaces/${workspaceId}`, {
        method: "PATCH",
        json: { name: "Renamed", billing: { plan: null, billedVia: "app_store" } }
      })
      const { workspace } = (await p2.json()) as any
      expect(workspace.name).toBe("Renamed")
      expect(workspace.billing).toMatchObject({
        ...defaultBilling,
        identity: "verified",
        plan: null,
        billedVia: "app_store"
      })
      const get = await app.admin(`/workspaces/${workspaceId}`)
      expect(((await get.json()) as any).workspace).toEqual(workspace)
    })

    it("rejects invalid workspace bodies with 400 naming the field", async () => {
      const cases: Array<[string, string, unknown, string]> = [
        ["POST", "/workspaces", {}, "name"],
        ["POST", "/workspaces", { name: "" }, "name"],
        ["POST", "/workspaces", { name: "x", color: "red" }, "color"],
        ["POST", "/workspaces", { name: "x", billing: { trial: "yes" } }, "trial"],
        ["POST", "/workspaces", { name: "x", billing: { subscription: "paused" } }, "subscription"],
        ["POST", "/workspaces", { name: "x", billing: { tier: "gold" } }, "tier"],
        ["PATCH", `/workspaces/${app.workspaceId}`, { billing: { identity: "maybe" } }, "identity"]
      ]
      for (const [method, path, json, field] of cases) {
        const error = await expectError(await app.admin(path, { method, json }), 400, "invalid_argument")
        expect(error.message, JSON.stringify(json)).toContain(field)
      }
    })

    it("answers 404 for an unknown or malformed workspace id", async () => {
      for (const id of [someId, "nope"]) {
        await expectError(await app.admin(`/workspaces/${id}`), 404, "not_found")
        await expectError(
          await app.admin(`/workspaces/${id}`, { method: "PATCH", json: { name: "x" } }),
          404,
          "not_found"
        )
        await expectError(
          await app.admin(`/workspaces/${id}/keys`, { method: "POST", json: { kind: "test" } }),
          404,
          "not_found"
        )
        await expectError(
          await app.admin(`/workspaces/${id}/numbers`, { method: "POST", json: { e164: "+14155550198" } }),
          404,
          "not_found"
        )
      }
    })
  })

  describe("keys", () => {
    it("creates a live key with every scope by default, showing the token once", async () => {
      const res = await app.admin(`/workspaces/${app.workspaceId}/keys`, {
        method: "POST",
        json: { kind: "live", name: "CI" }
      })
      expect(res.status).toBe(201)
      const { key } = (await res.json()) as any
      expect(Object.keys(key).sort()).toEqual(["createdAt", "id", "kind", "name", "scopes", "token"])
      expect(key.id).toMatch(UUID)
      expect(key.kind).toBe("live")
      expect(key.name).toBe("CI")
      expect(key.token).toMatch(/^svc_live_[0-9A-Za-z]{40}$/)
      expect([...key.scopes].sort()).toEqual(
        [
          "contacts:read",
          "contacts:write",
          "conversations:read",
          "conversations:write",
          "messages:send",
          "calls:place",
          "numbers:read",
          "numbers:manage",
          "agent:manage",
          "webhooks:manage"
        ].sort()
      )
      // The token is never shown again: the workspace and its other answers do not carry it.
      const ws = await app.admin(`/workspaces/${app.workspaceId}`)
      expect(await ws.text()).not.toContain(key.token)
      const revoke = await app.admin(`/keys/${key.id}`, { method: "DELETE" })
      expect(await revoke.text()).not.toContain(key.token)
    })

    it("creates a test key with the svc_test_ prefix and the scopes asked for", async () => {
      const key = await app.createKey(app.workspaceId, { kind: "test", scopes: ["contacts:read", "numbers:read"] })
      expect(key.token).toMatch(/^svc_test_[0-9A-Za-z]{40}$/)
      expect(key.kind).toBe("test")
      expect(key.name).toBeNull()
      expect([...key.scopes].sort()).toEqual(["contacts:read", "numbers:read"])
      expect((await app.fetch("/v1/api/contacts", { headers: bearer(key.token) })).status).toBe(200)
    })

    it("rejects an invalid key body with 400 naming the field", async () => {
      const cases: Array<[unknown, string]> = [
        [{}, "kind"],
        [{ kind: "prod" }, "kind"],
        [{ kind: "live", scopes: ["contacts:admin"] }, "scopes"],
        [{ kind: "live", scopes: [] }, "scopes"],
        [{ kind: "live", expires: "never" }, "expires"]
      ]
      for (const [json, field] of cases) {
        const error = await expectError(
          await app.admin(`/workspaces/${app.workspaceId}/keys`, { method: "POST", json }),
          400,
          "invalid_argument"
        )
        expect(error.message, JSON.stringify(json)).toContain(field)
      }
    })

    it("revokes a key: 200 {revoked: true}, then the key answers 401; unknown keys 404", async () => {
      const key = await app.createKey(app.workspaceId)
      expect((await app.fetch("/v1/api/contacts", { headers: bearer(key.token) })).status).toBe(200)
      const res = await app.admin(`/keys/${key.id}`, { method: "DELETE" })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ revoked: true })
      await expectError(await app.fetch("/v1/api/contacts", { headers: bearer(key.token) }), 401, "unauthenticated")
      // Revoking again is harmless.
      expect((await app.admin(`/keys/${key.id}`, { method: "DELETE" })).status).toBe(200)
      await expectError(await app.admin(`/keys/${someId}`, { method: "DELETE" }), 404, "not_found")
      await expectError(await app.admin("/keys/nope", { method: "DELETE" }), 404, "not_found")
    })
  })

  describe("numbers", () => {
    it("seeds an active number answering 201 {number} with voiceMode app; a duplicate is 409", async () => {
      const res = await app.admin(`/workspaces/${app.workspaceId}/numbers`, {
        method: "POST",
        json: { e164: "+14155550150" }
      })
      expect(res.status).toBe(201)
      expect(await res.json()).toEqual({
        number: {
          e164: "+14155550150",
          type: "local",
          voiceMode: "app",
          agentId: null,
          forwardTo: null,
          assignedUserId: null,
          status: "active"
        }
      })
      const dup = await app.admin(`/workspaces/${app.workspaceId}/numbers`, {
        method: "POST",
        json: { e164: "+14155550150" }
      })
      const error = await expectError(dup, 409, "failed_precondition")
      expect(error.message).toContain("+14155550150")
      // Taken by any workspace, not only this one.
      const other = await app.createWorkspace("Number B")
      await expectError(
        await app.admin(`/workspaces/${other.workspaceId}/numbers`, { method: "POST", json: { e164: "4155550150" } }),
        409,
        "failed_precondition"
      )
    })

    it("derives toll-free from the number and normalizes 10-digit input", async () => {
      const tollFree = await app.admin(`/workspaces/${app.workspaceId}/numbers`, {
        method: "POST",
        json: { e164: "+18005550151", type: "local" }
      })
      expect(tollFree.status).toBe(201)
      expect(((await tollFree.json()) as any).number).toMatchObject({
        e164: "+18005550151",
        type: "toll_free",
        voiceMode: "app",
        status: "active"
      })
      const local = await app.admin(`/workspaces/${app.workspaceId}/numbers`, {
        method: "POST",
        json: { e164: "(415) 555-0152" }
      })
      expect(local.status).toBe(201)
      expect(((await local.json()) as any).number.e164).toBe("+14155550152")
    })

    it("rejects an invalid number with 400 naming e164", async () => {
      for (const json of [{ e164: "12" }, { e164: "abc" }, {}, { e164: "+14155550153", type: "mobile" }]) {
        const error = await expectError(
          await app.admin(`/workspaces/${app.workspaceId}/numbers`, { method: "POST", json }),
          400,
          "invalid_argument"
        )
        expect(error.message, JSON.stringify(json)).toMatch(/e164|type/)
      }
    })
  })

  describe("members", () => {
    const members = (workspaceId: string) => `/workspaces/${workspaceId}/members`
    const create = async (workspaceId: string, json: unknown) =>
      ((await expectOk(await app.admin(members(workspaceId), { method: "POST", json }), 201)) as any).member

    it("the first boot made the default workspace's owner", async () => {
      const { members: all } = (await expectOk(await app.admin(members(app.workspaceId)))) as any
      expect(all[0]).toEqual({
        id: expect.stringMatching(UUID),
        email: "owner@localhost",
        name: "Owner",
        role: "owner",
        phone: null,
        createdAt: expect.any(String)
      })
    })

    it("adds a member: 201 {member}, email lower-cased, phone in E.164; listed oldest first; audit-logged", async () => {
      const { workspaceId } = await app.createWorkspace("Members A")
      const res = await app.admin(members(workspaceId), {
        method: "POST",
        json: { email: " Grace@Example.com ", name: "Grace Hopper", role: "admin", phone: "(415) 555-0123" }
      })
      expect(res.status).toBe(201)
      const body = (await res.json()) as any
      expect(body).toEqual({
        member: {
          id: expect.stringMatching(UUID),
          email: "grace@example.com",
          name: "Grace Hopper",
          role: "admin",
          phone: "+14155550123",
          createdAt: expect.any(String)
        }
      })
      const ada = await create(workspaceId, { email: "ada@example.com", name: "Ada", role: "member" })
      expect(ada.phone).toBeNull()
      expect(await expectOk(await app.admin(members(workspaceId)))).toEqual({ members: [body.member, ada] })
      const { entries } = (await expectOk(await app.admin(`/workspaces/${workspaceId}/audit-log`))) as any
      expect(entries.map((e: any) => [e.actor, e.action, e.detail.memberId])).toEqual([
        ["admin", "member.created", ada.id],
        ["admin", "member.created", body.member.id]
      ])
    })

    it("an email already a member of the workspace is 409; another workspace may have it", async () => {
      const { workspaceId } = await app.createWorkspace("Members B")
      await create(workspaceId, { email: "dup@example.com", name: "One", role: "member" })
      const error = await expectError(
        await app.admin(members(workspaceId), {
          method: "POST",
          json: { email: "DUP@example.com", name: "Two", role: "admin" }
        }),
        409,
        "failed_precondition"
      )
      expect(error.message).toBe("dup@example.com is already a member of this workspace")
      const { workspaceId: other } = await app.createWorkspace("Members C")
      expect((await create(other, { email: "dup@example.com", name: "Two", role: "owner" })).email).toBe(
        "dup@example.com"
      )
    })

    it("rejects invalid bodies with 400 naming the field, and unknown workspaces with 404", async () => {
      const { workspaceId } = await app.createWorkspace("Members D")
      const valid = { email: "ok@example.com", name: "Ok", role: "member" }
      const cases: Array<[unknown, string]> = [
        [{}, "email: is required"],
        [{ ...valid, email: "not-an-email" }, "email: \"not-an-email\" is not an email address"],
        [{ ...valid, name: "" }, "name"],
        [{ ...valid, name: "   " }, "name: must not be blank"],
        [{ ...valid, name: "n".repeat(201) }, "name"],
        [{ ...valid, role: "boss" }, "role"],
        [{ ...valid, phone: "12" }, "phone: \"12\" is not a valid phone number"],
        [{ ...valid, phone: 4155550123 }, "phone"],
        [{ ...valid, team: "A" }, "team: unknown field"],
        [[], "body"]
      ]
      for (const [json, message] of cases) {
        const error = await expectError(
          await app.admin(members(workspaceId), { method: "POST", json }),
          400,
          "invalid_argument"
        )
        expect(error.message, JSON.stringify(json)).toContain(message)
      }
      expect(await expectOk(await app.admin(members(workspaceId)))).toEqual({ members: [] })
      for (const id of [someId, "nope"]) {
        await expectError(await app.admin(members(id), { method: "POST", json: valid }), 404, "not_found")
        await expectError(await app.admin(members(id)), 404, "not_found")
      }
    })

    it("PATCH changes the fields given and answers {member}; a clash is 409, an unknown member 404", async () => {
      const { workspaceId } = await app.createWorkspace("Members E")
      const owner = await create(workspaceId, { email: "owner@example.com", name: "Olive", role: "owner" })
      const grace = await create(workspaceId, {
        email: "g@example.com",
        name: "G",
        role: "member",
        phone: "+14155550124"
      })
      const res = await app.admin(`/members/${grace.id}`, {
        method: "PATCH",
        json: { name: "Grace Hopper", role: "admin", phone: null }
      })
      expect(await expectOk(res)).toEqual({ member: { ...grace, name: "Grace Hopper", role: "admin", phone: null } })
      await expectError(
        await app.admin(`/members/${grace.id}`, { method: "PATCH", json: { email: "Owner@example.com" } }),
        409,
        "failed_precondition"
      )
      const bad = await expectError(
        await app.admin(`/members/${grace.id}`, { method: "PATCH", json: { role: "root" } }),
        400,
        "invalid_argument"
      )
      expect(bad.message).toContain("role")
      for (const id of [someId, "nope"]) {
        await expectError(await app.admin(`/members/${id}`, { method: "PATCH", json: { name: "X" } }), 404, "not_found")
      }
      // The last owner may not be demoted.
      const demote = await expectError(
        await app.admin(`/members/${owner.id}`, { method: "PATCH", json: { role: "member" } }),
        409,
        "failed_precondition"
      )
      expect(demote.message).toContain("last owner")
    })

    it("DELETE answers {deleted: true} and unassigns the member's conversations; the last owner is 409", async () => {
      const { key, workspaceId } = await app.createWorkspace("Members F")
      const owner = await create(workspaceId, { email: "owner@example.com", name: "Olive", role: "owner" })
      const grace = await create(workspaceId, { email: "g@example.com", name: "Grace", role: "member" })
      const last = await expectError(
        await app.admin(`/members/${owner.id}`, { method: "DELETE" }),
        409,
        "failed_precondition"
      )
      expect(last.message).toBe("Cannot remove the workspace's last owner: make another member owner first")
      // A conversation assigned to Grace, through the same use case the console's assignment runs.
      await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: "+14155550160" } })
      const { conversationId } = (await expectOk(
        await app.fetch("/v1/api/test-helpers/inbound-messages", {
          method: "POST",
          headers: bearer(key),
          json: { from: "+14155550161", to: "+14155550160", body: "hi" }
        }),
        201
      )) as any
      await app.runtime.runPromise(
        Effect.flatMap(Conversations, (c) =>
          c.assign(
            { workspaceId, keyId: owner.id, kind: "test", scopes: new Set(allScopes), memberId: owner.id },
            conversationId,
            grace.id
          ))
      )
      const assignee = async () =>
        ((await expectOk(await app.fetch(`/v1/api/conversations/${conversationId}`, { headers: bearer(key) }))) as any)
          .conversation.assigneeUid
      expect(await assignee()).toBe(grace.id)

      const res = await app.admin(`/members/${grace.id}`, { method: "DELETE" })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ deleted: true })
      expect(await assignee()).toBeNull()
      expect(await expectOk(await app.admin(members(workspaceId)))).toEqual({ members: [owner] })
      await expectError(await app.admin(`/members/${grace.id}`, { method: "DELETE" }), 404, "not_found")
      await expectError(await app.admin("/members/nope", { method: "DELETE" }), 404, "not_found")
      // With a second owner, the first may go.
      const second = await create(workspaceId, { email: "second@example.com", name: "Sam", role: "owner" })
      expect(await expectOk(await app.admin(`/members/${owner.id}`, { method: "DELETE" }))).toEqual({ deleted: true })
      expect(await expectOk(await app.admin(members(workspaceId)))).toEqual({ members: [second] })
    })
  })

  describe("ledger, audit log and mail", () => {
    it.each([
      ["ledger", "charges"],
      ["audit-log", "entries"],
      ["mail", "mail"]
    ])("%s answers an empty list for a real workspace and 404 for an unknown one", async (route, field) => {
      const { workspaceId } = await app.createWorkspace(`Empty ${route}`)
      const res = await app.admin(`/workspaces/${workspaceId}/${route}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ [field]: [] })
      await expectError(await app.admin(`/workspaces/${someId}/${route}`), 404, "not_found")
      await expectError(await app.admin(`/workspaces/not-a-uuid/${route}`), 404, "not_found")
    })

    it("ledger shows the charges written through the ledger port, newest first, without the workspace id", async () => {
      const { workspaceId } = await app.createWorkspace("Charged")
      const other = await app.createWorkspace("Not charged")
      const e164 = "+14155550123" as E164
      const append = (charge: Charge) =>
        app.runtime.runPromise(
          Effect.flatMap(LedgerStore, (ledger) => ledger.append(workspaceId, [charge], new Date().toISOString()))
        )
      const [bought] = await append(
        numberCharge({ e164, type: "local", localNumbers: 1 }, new Date("2024-06-19T00:00:00Z"))
      )
      await new Promise((r) => setTimeout(r, 3))
      const [setup] = await append(textingSetupCharge(e164))
      const res = await app.admin(`/workspaces/${workspaceId}/ledger`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        charges: [
          {
            id: setup!.id,
            kind: "texting_setup",
            description: "Texting setup for +14155550123",
            amountCents: 2000,
            currency: "USD",
            numberE164: e164,
            createdAt: setup!.createdAt
          },
          {
            id: bought!.id,
            kind: "local_number",
            description: "Local number +14155550123, prorated 12/30 days",
            amountCents: 200,
            currency: "USD",
            numberE164: e164,
            createdAt: bought!.createdAt
          }
        ]
      })
      expect(await (await app.admin(`/workspaces/${other.workspaceId}/ledger`)).json()).toEqual({ charges: [] })
    })

    it("audit log shows the entries appended through the AuditLog port, newest first, without the workspace id", async () => {
      const { workspaceId } = await app.createWorkspace("Audited")
      const other = await app.createWorkspace("Not audited")
      const append = (action: string, detail: unknown) =>
        app.runtime.runPromise(
          Effect.flatMap(AuditLog, (log) => log.append(workspaceId, { actor: "api", action, detail }))
        )
      const filed = await append("registration.filed", {
        mock: false,
        business: { entityType: "PRIVATE_PROFIT" },
        reasons: ["a", "b"]
      })
      await new Promise((r) => setTimeout(r, 3))
      const resent = await append("registration.otp_resent", null)
      const res = await app.admin(`/workspaces/${workspaceId}/audit-log`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        entries: [
          { id: resent.id, actor: "api", action: "registration.otp_resent", detail: null, createdAt: resent.createdAt },
          {
            id: filed.id,
            actor: "api",
            action: "registration.filed",
            detail: { mock: false, business: { entityType: "PRIVATE_PROFIT" }, reasons: ["a", "b"] },
            createdAt: filed.createdAt
          }
        ]
      })
      expect(filed.id).toMatch(UUID)
      expect(await (await app.admin(`/workspaces/${other.workspaceId}/audit-log`)).json()).toEqual({ entries: [] })
    })

    it("mail shows what was sent through the Mailer (outbox only, no SMTP), newest first, without the workspace id", async () => {
      const { workspaceId } = await app.createWorkspace("Mailed")
      const other = await app.createWorkspace("Not mailed")
      const send = (subject: string) =>
        app.runtime.runPromise(
          sendMail(workspaceId, { to: "owner@acme.example", subject, text: `${subject}\nline two ✓` })
        )
      const first = await send("Receipt one")
      await new Promise((r) => setTimeout(r, 3))
      const second = await send("Receipt two")
      const res = await app.admin(`/workspaces/${workspaceId}/mail`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        mail: [second, first].map(({ workspaceId: _, ...view }) => view)
      })
      expect(second).toMatchObject({
        to: "owner@acme.example",
        subject: "Receipt two",
        text: "Receipt two\nline two ✓",
        id: expect.stringMatching(UUID)
      })
      expect(await (await app.admin(`/workspaces/${other.workspaceId}/mail`)).json()).toEqual({ mail: [] })
    })
  })
})
