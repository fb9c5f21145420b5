/**
 * CONTRACT "Members and the console", the console's API (in-process): sign-in by mailed link, the
 * session cookie and what it may reach (never `/v1/api` or `/v1/mcp`), the origin check on every
 * state-changing request, roles, the capability dispatch with the member as the actor, the live
 * event feed, switching workspace and signing out.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { MemberRecord } from "../../core/members/model.ts"
import { MemberStore } from "../../core/members/store.ts"
import { makeTestApp } from "../support/app.ts"
import { business, readyBilling } from "../support/registration.ts"
import { bearer, expectOk } from "./helpers.ts"

type App = Awaited<ReturnType<typeof makeTestApp>>

const ORIGIN = "http://test.local"
let app: App

beforeAll(async () => {
  app = await makeTestApp()
})
afterAll(async () => {
  await app.close()
})

let seq = 0
/** A member stored directly (the admin API has its own tests); each one created after the last. */
const addMember = async (workspaceId: string, role: MemberRecord["role"], email?: string) => {
  const n = ++seq
  const member: MemberRecord = {
    id: crypto.randomUUID(),
    workspaceId,
    email: email ?? `person${n}@example.com`,
    name: `Person ${n}`,
    role,
    phone: null,
    createdAt: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString()
  }
  expect(await app.runtime.runPromise(Effect.flatMap(MemberStore, (s) => s.insert(member)))).toBe(true)
  return member
}

const mailTo = async (workspaceId: string, email: string) => {
  const body = await expectOk(await app.admin(`/workspaces/${workspaceId}/mail`))
  return (body.mail as Array<{ to: string; text: string }>).filter((m) => m.to === email)
}

/** The link mailed to `email` (sent after the answer: waited for). */
const mailedLink = async (workspaceId: string, email: string, count = 1) => {
  for (let i = 0; i < 100; i++) {
    const mail = await mailTo(workspaceId, email)
    // Newest first.
    if (mail.length >= count) return /http:\/\/test\.local(\/app\/sign-in\/[A-Za-z0-9_-]+)/.exec(mail[0]!.text)![1]!
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`no sign-in mail for ${email}`)
}

const requestLink = (email: string, headers: Record<string, string> = { origin: ORIGIN }) =>
  app.fetch("/v1/app/sign-in", { method: "POST", json: { email }, headers })

/** Signs `member` in through the mailed link; answers the session cookie (`sb_session=...`). */
const signIn = async (member: MemberRecord) => {
  const before = (await mailTo(member.workspaceId, member.email)).length
  expect((await requestLink(member.email)).status).toBe(202)
  const link = await mailedLink(member.workspaceId, member.email, before + 1)
  const res = await app.fetch(link, { redirect: "manual" })
  expect(res.status).toBe(303)
  return /^(sb_session=[^;]+)/.exec(res.headers.get("set-cookie")!)![1]!
}

const console_ = (cookie: string, method: string, path: string, json?: unknown, origin: string | null = ORIGIN) =>
  app.fetch(`/v1/app${path}`, {
    method,
    headers: { cookie, ...(origin === null ? {} : { origin }) },
    ...(json === undefined ? {} : { json })
  })
const tool = (cookie: string, name: string, input: unknown = {}) => console_(cookie, "POST", `/tools/${name}`, input)

describe("sign-in by email link", () => {
  it("mails a member a one-time link that sets a browser-safe session cookie", async () => {
    const member = await addMember(app.workspaceId, "member")
    expect((await requestLink(member.email.toUpperCase())).status).toBe(202)
    const link = await mailedLink(member.workspaceId, member.email)
    const first = await app.fetch(link, { redirect: "manual" })
    expect(first.status).toBe(303)
    expect(first.headers.get("location")).toBe("/app")
    const cookie = first.headers.get("set-cookie")!
    expect(cookie).toMatch(/^sb_session=[A-Za-z0-9_-]{43};/)
    expect(cookie).toContain("HttpOnly")
    expect(cookie).toContain("SameSite=Lax")
    expect(cookie).toContain("Path=/")
    // PUBLIC_BASE_URL here is http: no Secure (a browser would drop the cookie).
    expect(cookie).not.toContain("Secure")
    const again = await app.fetch(link, { redirect: "manual" })
    expect(again.status).toBe(400)
    expect(again.headers.get("content-type")).toContain("text/html")
    expect(await again.text()).toContain("already used or has expired")
  })

  it("answers the same for an unknown email, and mails nobody", async () => {
    const res = await requestLink("nobody-here@example.com")
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ sent: true })
    await new Promise((r) => setTimeout(r, 100))
    expect(await mailTo(app.workspaceId, "nobody-here@example.com")).toEqual([])
  })

  it("mails at most 3 links an email per 15 minutes, answering 202 every time", async () => {
    const member = await addMember(app.workspaceId, "member")
    for (let i = 0; i < 5; i++) expect((await requestLink(member.email)).status).toBe(202)
    await new Promise((r) => setTimeout(r, 200))
    expect(await mailTo(member.workspaceId, member.email)).toHaveLength(3)
  })

  it("refuses a sign-in request from another origin, or without one", async () => {
    const member = await addMember(app.workspaceId, "member")
    expect((await requestLink(member.email, { origin: "https://evil.example" })).status).toBe(403)
    expect((await requestLink(member.email, {})).status).toBe(403)
    await new Promise((r) => setTimeout(r, 100))
    expect(await mailTo(member.workspaceId, member.email)).toEqual([])
  })

  it("limits sign-in requests per address", async () => {
    const limited = await makeTestApp({ rateLimitPerMinute: 600 })
    try {
      const statuses = []
      for (let i = 0; i < 12; i++) {
        const res = await limited.fetch("/v1/app/sign-in", {
          method: "POST",
          json: { email: `x${i}@example.com` },
          headers: { origin: ORIGIN }
        })
        statuses.push(res.status)
      }
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(202))
      expect(statuses.slice(10)).toEqual([429, 429])
    } finally {
      await limited.close()
    }
  })

  it("refuses a malformed link token like a used one", async () => {
    const res = await app.fetch("/app/sign-in/not-a-token", { redirect: "manual" })
    expect(res.status).toBe(400)
  })
})

describe("the session", () => {
  it("answers who is signed in; 401 without a session", async () => {
    const member = await addMember(app.workspaceId, "admin")
    const cookie = await signIn(member)
    const me = await expectOk(await console_(cookie, "GET", "/me"))
    expect(me.member).toEqual({
      id: member.id,
      email: member.email,
      name: member.name,
      role: "admin",
      phone: null,
      createdAt: member.createdAt
    })
    expect(me.workspace).toEqual({ id: app.workspaceId, name: "Default workspace" })
    expect((await console_("sb_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "GET", "/me")).status).toBe(401)
    expect((await app.fetch("/v1/app/me")).status).toBe(401)
  })

  it("is never accepted on /v1/api or /v1/mcp, and the console answers no CORS header", async () => {
    const member = await addMember(app.workspaceId, "owner")
    const cookie = await signIn(member)
    expect((await app.fetch("/v1/api/contacts", { headers: { cookie } })).status).toBe(401)
    const mcp = await app.fetch("/v1/mcp", {
      method: "POST",
      headers: { cookie, accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" }
    })
    expect(mcp.status).toBe(401)
    const me = await console_(cookie, "GET", "/me")
    expect(me.headers.get("access-control-allow-origin")).toBeNull()
    expect(me.headers.get("access-control-allow-credentials")).toBeNull()
    const preflight = await app.fetch("/v1/app/tools/contacts_create", {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" }
    })
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull()
    // The API keeps its CORS for any origin.
    expect((await app.fetch("/v1/api/contacts")).headers.get("access-control-allow-origin")).toBe("*")
  })

  it("refuses state-changing requests without the console's origin (CSRF)", async () => {
    const member = await addMember(app.workspaceId, "member")
    const cookie = await signIn(member)
    const input = { firstName: "Forged", phones: [{ number: "+12175550999" }] }
    for (const origin of ["https://evil.example", "null", null]) {
      const res = await console_(cookie, "POST", "/tools/contacts_create", input, origin)
      expect(res.status).toBe(403)
      expect((await res.json()).error.code).toBe("permission_denied")
    }
    expect((await console_(cookie, "POST", "/sign-out", undefined, "https://evil.example")).status).toBe(403)
    // Reads need no origin.
    expect((await console_(cookie, "GET", "/me", undefined, null)).status).toBe(200)
    const list = await expectOk(await tool(cookie, "contacts_list", { q: "Forged" }))
    expect(list.contacts).toEqual([])
  })

  it("ends on sign-out: the cookie is cleared and the session refused", async () => {
    const member = await addMember(app.workspaceId, "member")
    const cookie = await signIn(member)
    const out = await console_(cookie, "POST", "/sign-out")
    expect(out.status).toBe(200)
    expect(out.headers.get("set-cookie")).toMatch(/^sb_session=; .*Max-Age=0/)
    expect((await console_(cookie, "GET", "/me")).status).toBe(401)
  })
})

describe("capabilities with the member as the actor", () => {
  it("lists what a role may call, and refuses the rest with 403", async () => {
    const member = await addMember(app.workspaceId, "member")
    const admin = await addMember(app.workspaceId, "admin")
    const memberCookie = await signIn(member)
    const adminCookie = await signIn(admin)
    const names = async (cookie: string) =>
      ((await expectOk(await console_(cookie, "GET", "/tools"))).tools as Array<{ name: string }>).map((t) => t.name)
    const memberTools = await names(memberCookie)
    const adminTools = await names(adminCookie)
    expect(memberTools).toContain("messages_send")
    expect(memberTools).toContain("notes_create")
    expect(memberTools).not.toContain("keys_create")
    expect(memberTools).not.toContain("webhooks_create")
    expect(memberTools).not.toContain("numbers_buy")
    expect(adminTools).toContain("keys_create")
    expect(adminTools).toContain("webhooks_create")
    const refused = await tool(memberCookie, "keys_create", { kind: "test" })
    expect(refused.status).toBe(403)
    expect((await tool(memberCookie, "webhooks_list")).status).toBe(403)
    expect((await tool(memberCookie, "no_such_tool")).status).toBe(404)
    expect((await tool(memberCookie, "contacts_create", { firstName: 7 })).status).toBe(400)
  })

  it("an admin's key works on the API once, and is revoked from the console; both audit-logged", async () => {
    const admin = await addMember(app.workspaceId, "admin")
    const cookie = await signIn(admin)
    const created = await expectOk(
      await tool(cookie, "keys_create", { kind: "test", scopes: ["contacts:read"], name: "CRM" })
    )
    expect(created.key.token).toMatch(/^svc_test_/)
    expect((await app.fetch("/v1/api/contacts", { headers: bearer(created.key.token) })).status).toBe(200)
    const listed = await expectOk(await tool(cookie, "keys_list"))
    const entry = listed.keys.find((k: { id: string }) => k.id === created.key.id)
    expect(entry.name).toBe("CRM")
    expect(entry).not.toHaveProperty("token")
    expect(await expectOk(await tool(cookie, "keys_revoke", { id: created.key.id }))).toEqual({ revoked: true })
    expect((await app.fetch("/v1/api/contacts", { headers: bearer(created.key.token) })).status).toBe(401)
    const audit = await expectOk(await app.admin(`/workspaces/${app.workspaceId}/audit-log`))
    const mine = audit.entries.filter((e: { actor: string }) => e.actor === `member:${admin.id}`)
    expect(mine.map((e: { action: string }) => e.action).sort()).toEqual(["key.created", "key.revoked"])
  })

  it("replies, notes and assigns as the member; another workspace's member cannot be assigned", async () => {
    const { workspaceId } = await app.createWorkspace("Console texting", readyBilling)
    const live = (await app.createKey(workspaceId, { kind: "live" })).token
    const test = (await app.createKey(workspaceId, { kind: "test" })).token
    const number = "+12175550190"
    await expectOk(
      await app.admin(`/workspaces/${workspaceId}/numbers`, { method: "POST", json: { e164: number } }),
      201
    )
    await expectOk(
      await app.fetch("/v1/api/messaging/registration", { method: "POST", headers: bearer(live), json: { business } }),
      201
    )
    for (let i = 0; i < 3; i++) {
      await expectOk(await app.fetch("/v1/api/messaging/refresh", { method: "POST", headers: bearer(live) }))
    }
    const inbound = await expectOk(
      await app.fetch("/v1/api/test-helpers/inbound-messages", {
        method: "POST",
        headers: bearer(test),
        json: { from: "+12175550191", to: number, body: "Is the shop open Sunday?" }
      }),
      201
    )
    const member = await addMember(workspaceId, "member")
    const teammate = await addMember(workspaceId, "member")
    const stranger = await addMember(app.workspaceId, "member")
    const cookie = await signIn(member)

    const sent = await expectOk(
      await tool(cookie, "messages_send", { conversationId: inbound.conversationId, body: "Yes, 10 to 4." })
    )
    expect(sent.message.authorUid).toBe(member.id)
    expect(sent.message.deliveryStatus).not.toBe("simulated")

    const noted = await expectOk(
      await tool(cookie, "notes_create", { conversationId: inbound.conversationId, body: "Regular customer." })
    )
    expect(noted.activity).toMatchObject({ type: "internal_note", authorUid: member.id, body: "Regular customer." })

    const assigned = await expectOk(
      await tool(cookie, "conversations_assign", { id: inbound.conversationId, assigneeUid: teammate.id })
    )
    expect(assigned.conversation.assigneeUid).toBe(teammate.id)
    expect(
      (await tool(cookie, "conversations_assign", { id: inbound.conversationId, assigneeUid: stranger.id })).status
    )
      .toBe(404)
    expect((await tool(cookie, "conversations_assign", { id: inbound.conversationId, assigneeUid: "x" })).status).toBe(
      404
    )

    const done = await expectOk(
      await tool(cookie, "conversations_update", { id: inbound.conversationId, status: "done" })
    )
    expect(done.conversation.status).toBe("done")

    const thread = await expectOk(await tool(cookie, "conversations_get", { id: inbound.conversationId }))
    expect(thread.activities.map((a: { type: string }) => a.type)).toEqual(["message", "message", "internal_note"])
    expect(thread.conversation.assigneeUid).toBe(teammate.id)

    // The other workspace's member sees none of it.
    const strangerCookie = await signIn(stranger)
    expect((await tool(strangerCookie, "conversations_get", { id: inbound.conversationId })).status).toBe(404)
  })

  it("switches workspace for an email in several, and acts there", async () => {
    const { workspaceId } = await app.createWorkspace("Second shop")
    const email = `both${seq}@example.com`
    const first = await addMember(app.workspaceId, "member", email)
    await addMember(workspaceId, "admin", email)
    const cookie = await signIn(first)
    const me = await expectOk(await console_(cookie, "GET", "/me"))
    expect(me.workspace.id).toBe(app.workspaceId)
    expect(me.workspaces.map((w: { id: string }) => w.id).sort()).toEqual([app.workspaceId, workspaceId].sort())
    const switched = await expectOk(await console_(cookie, "POST", "/workspace", { workspaceId }))
    expect(switched.workspace).toEqual({ id: workspaceId, name: "Second shop" })
    expect(switched.member.role).toBe("admin")
    await expectOk(await tool(cookie, "contacts_create", { firstName: "Only", lastName: "Here" }))
    const here = await expectOk(await tool(cookie, "contacts_list", { q: "Only Here" }))
    expect(here.contacts).toHaveLength(1)
    const other = await addMember(app.workspaceId, "member")
    expect((await expectOk(await tool(await signIn(other), "contacts_list", { q: "Only Here" }))).contacts).toEqual([])
    expect((await console_(cookie, "POST", "/workspace", { workspaceId: crypto.randomUUID() })).status).toBe(404)
  })
})

describe("the live feed", () => {
  it("streams the workspace's new events, and not another's", async () => {
    const member = await addMember(app.workspaceId, "member")
    const cookie = await signIn(member)
    const res = await console_(cookie, "GET", "/events")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/event-stream")
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    const until = async (pattern: RegExp) => {
      const deadline = Date.now() + 30_000
      while (!pattern.test(text)) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} in ${text}`)
        const { done, value } = await reader.read()
        if (done) throw new Error("stream ended")
        text += decoder.decode(value)
      }
    }
    await until(/: connected/)
    const other = await app.createWorkspace("Quiet neighbour")
    await expectOk(
      await app.fetch("/v1/api/contacts", {
        method: "POST",
        headers: bearer(other.key),
        json: { firstName: "Theirs" }
      }),
      201
    )
    await expectOk(
      await app.fetch("/v1/api/contacts", {
        method: "POST",
        headers: bearer(app.testKey),
        json: { firstName: "Ours" }
      }),
      201
    )
    await until(/event: contact\.updated\ndata: (.+)\n\n/)
    const data = JSON.parse(/event: contact\.updated\ndata: (.+)\n\n/.exec(text)![1]!)
    const ours = await expectOk(
      await app.fetch("/v1/api/contacts?q=Ours", { headers: bearer(app.testKey) })
    )
    expect(data.data.contactId ?? data.data.id).toBe(ours.contacts[0].id)
    expect(text.match(/event: /g)).toHaveLength(1)
    await reader.cancel()
  })
})
