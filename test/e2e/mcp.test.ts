/**
 * The MCP endpoint end to end: the real server (Node, then Deno) over sockets, driven by the
 * official SDK client as an assistant would, and by the MCP Inspector's command line. Every tool of
 * the capability table is called for real; every tool is refused to a key without its scope; the
 * transport's refusals (no key, GET/DELETE, a foreign Origin) answer before any JSON-RPC.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes } from "../../core/auth/scopes.ts"
import { tools } from "../../core/tools/index.ts"
import { soleProprietor } from "../support/registration.ts"
import { type RunningServer, startServer } from "../support/server.ts"

const ADMIN = "mcp-admin-token"
const root = resolve(import.meta.dirname, "../..")
const run = promisify(execFile)

interface Connected {
  readonly client: Client
  readonly close: () => Promise<void>
}

const connect = async (baseUrl: string, key: string): Promise<Connected> => {
  const client = new Client({ name: "switchboard-e2e", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } }
  })
  await client.connect(transport)
  // Tools are validated against their outputSchema only once listed.
  await client.listTools()
  return { client, close: () => client.close() }
}

type Result = Awaited<ReturnType<Client["callTool"]>>

const textOf = (r: Result) => (r.content as Array<{ type: string; text: string }>)[0]!.text

const ok = (r: Result): any => {
  if (r.isError) throw new Error(`tool failed: ${textOf(r)}`)
  expect(JSON.parse(textOf(r))).toEqual(r.structuredContent)
  return r.structuredContent
}

const failed = (r: Result): { code: string; message: string; requestId: string } => {
  expect(r.isError).toBe(true)
  return (JSON.parse(textOf(r)) as { error: { code: string; message: string; requestId: string } }).error
}

const receiver = () =>
  new Promise<{ url: string; bodies: Array<{ headers: Record<string, string>; body: string }>; server: Server }>(
    (done) => {
      const bodies: Array<{ headers: Record<string, string>; body: string }> = []
      const server = createServer((req, res) => {
        let body = ""
        req.on("data", (d) => (body += d))
        req.on("end", () => {
          bodies.push({ headers: req.headers as Record<string, string>, body })
          res.writeHead(204).end()
        })
      })
      server.listen(
        0,
        "127.0.0.1",
        () => done({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, bodies, server })
      )
    }
  )

describe.each(["node", "deno"] as const)("the MCP endpoint under %s", (runtime) => {
  let server: RunningServer
  let dir: string
  let hooks: Awaited<ReturnType<typeof receiver>>
  let key: string
  const rest = (path: string, init: RequestInit & { key?: string | null } = {}) =>
    fetch(`${server.baseUrl}${path}`, {
      ...init,
      headers: {
        "content-type": "application/json",
        ...(init.key === null ? {} : { authorization: `Bearer ${init.key ?? key}` }),
        ...(init.headers as Record<string, string> | undefined)
      }
    })
  const admin = async (path: string, body: unknown) => {
    const res = await rest(`/v1/admin${path}`, { method: "POST", body: JSON.stringify(body), key: ADMIN })
    expect(res.status).toBe(201)
    return (await res.json()) as any
  }
  const mcpPost = (body: unknown, headers: Record<string, string> = {}) =>
    rest("/v1/mcp", {
      method: "POST",
      body: JSON.stringify(body),
      headers: { accept: "application/json, text/event-stream", ...headers }
    })

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchboard-mcp-"))
    hooks = await receiver()
    server = await startServer(runtime, {
      DATA_DIR: dir,
      ADMIN_TOKEN: ADMIN,
      OUTBOUND_ALLOW_PRIVATE: "true",
      MCP_ALLOWED_ORIGINS: "https://console.example"
    })
    key = server.testKey!
  }, 90_000)

  afterAll(async () => {
    await server?.stop()
    hooks?.server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("answers 401 with WWW-Authenticate before reading any JSON-RPC, 405 to GET and DELETE, 403 to a foreign Origin", async () => {
    for (const body of ["not json at all", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })]) {
      const res = await rest("/v1/mcp", {
        method: "POST",
        body,
        key: null,
        headers: { accept: "application/json, text/event-stream" }
      })
      expect(res.status).toBe(401)
      expect(res.headers.get("www-authenticate")).toBe("Bearer")
      expect(res.headers.get("x-request-id")).toMatch(/^req_/)
      expect(res.headers.get("ratelimit-limit")).not.toBeNull()
      expect(((await res.json()) as any).error.code).toBe("unauthenticated")
    }
    const revoked = await rest("/v1/mcp", { method: "POST", body: "{}", key: `svc_test_${"0".repeat(40)}` })
    expect(revoked.status).toBe(401)

    for (const method of ["GET", "DELETE"]) {
      const res = await rest("/v1/mcp", { method })
      expect(res.status).toBe(405)
      expect(res.headers.get("allow")).toBe("POST")
      expect(((await res.json()) as any).error.code).toBe("invalid_argument")
    }

    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" }
    const foreign = await mcpPost(list, { origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    expect(((await foreign.json()) as any).error.message).toContain("MCP_ALLOWED_ORIGINS")
    expect((await mcpPost(list, { origin: "https://console.example" })).status).toBe(200)

    const noAccept = await rest("/v1/mcp", {
      method: "POST",
      body: JSON.stringify(list),
      headers: { accept: "application/json" }
    })
    expect(noAccept.status).toBe(406)
    expect((await rest("/v1/mcp", { method: "POST", body: JSON.stringify(list), headers: { accept: "*/*" } })).status)
      .toBe(200)
    for (const version of ["1999-01-01", "2025-03-26", "2024-11-05"]) {
      const badVersion = await mcpPost(list, { "mcp-protocol-version": version })
      expect(badVersion.status).toBe(400)
      expect(((await badVersion.json()) as any).error.message).toContain("2025-11-25 and 2025-06-18")
    }

    // One message per POST: a batch would run many tool calls for one rate-limit token.
    const batch = await mcpPost([list, { ...list, id: 2 }])
    expect(batch.status).toBe(400)
    expect(((await batch.json()) as any).error.message).toContain("batches")

    // Arguments that are not an object are a tool error a model can read.
    for (const args of [null, [1], "hello"]) {
      const res = await mcpPost({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "contacts_list", arguments: args }
      })
      const body = (await res.json()) as any
      expect(body.id).toBe(7)
      expect(body.result.isError).toBe(true)
      expect(JSON.parse(body.result.content[0].text).error).toMatchObject({
        code: "invalid_argument",
        message: expect.stringContaining("arguments")
      })
    }
    const unknown =
      (await (await mcpPost({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "nope", arguments: {} } }))
        .json()) as any
    expect(unknown.error).toEqual({ code: -32602, message: "Unknown tool: nope" })
  })

  it(
    "negotiates 2025-11-25 and 2025-06-18 statelessly, and counts each call against the key's rate limit",
    async () => {
      for (const version of ["2025-11-25", "2025-06-18"]) {
        const res = await mcpPost({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "1" } }
        })
        expect(res.status).toBe(200)
        expect(res.headers.get("mcp-session-id")).toBeNull()
        const body = (await res.json()) as any
        expect(body.result.protocolVersion).toBe(version)
        expect(body.result.capabilities.tools).toBeDefined()
      }
      // A client asking for an older revision (no structuredContent there) is offered ours.
      const older = await mcpPost({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "old", version: "1" } }
      })
      expect(((await older.json()) as any).result.protocolVersion).toBe("2025-11-25")
      // Every POST is billed to the key: a key that spent its minute is refused before any JSON-RPC runs.
      const ws = await admin("/workspaces", { name: "Rate limited" })
      const spender = (await admin(`/workspaces/${ws.workspace.id}/keys`, { kind: "test" })).key.token as string
      const call = {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "contacts_list", arguments: { limit: 1 } }
      }
      const post = () =>
        rest("/v1/mcp", {
          method: "POST",
          key: spender,
          body: JSON.stringify(call),
          headers: { accept: "application/json, text/event-stream" }
        })
      const limit = Number((await post()).headers.get("ratelimit-limit"))
      let refused: Response | undefined
      for (let sent = 1; refused === undefined && sent < limit * 2; sent += 50) {
        const batch = await Promise.all(Array.from({ length: 50 }, post))
        refused = batch.find((r) => r.status === 429)
      }
      expect(refused).toBeDefined()
      expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(refused!.headers.get("ratelimit-remaining")).toBe("0")
      expect(((await refused!.json()) as any).error.code).toBe("resource_exhausted")
    },
    60_000
  )

  it("lists every tool of the table with its schemas and honest annotations", async () => {
    const { client, close } = await connect(server.baseUrl, key)
    const { tools: listed } = await client.listTools()
    expect(listed.map((t) => t.name).sort()).toEqual(tools.map((t) => t.name).sort())
    for (const t of listed) {
      expect(t.name).toMatch(/^[a-z]+_[a-z_]+$/)
      expect(t.inputSchema.type).toBe("object")
      expect(t.outputSchema?.type).toBe("object")
      const entry = tools.find((x) => x.name === t.name)!
      expect(t.description).toContain(`Scope \`${entry.scope}\``)
      expect(t.annotations).toMatchObject({
        readOnlyHint: entry.hints.readOnly,
        destructiveHint: entry.hints.destructive,
        openWorldHint: entry.hints.openWorld
      })
    }
    expect(listed.find((t) => t.name === "contacts_list")!.annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: false
    })
    expect(listed.find((t) => t.name === "contacts_delete")!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true
    })
    expect(listed.find((t) => t.name === "messages_send")!.annotations).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true
    })
    expect(Object.keys(listed.find((t) => t.name === "messages_send")!.inputSchema.properties ?? {})).toContain(
      "idempotencyKey"
    )
    await close()
  })

  it("does the whole workspace's work through its tools, each one called", async () => {
    const { client, close } = await connect(server.baseUrl, key)
    const called = new Set<string>()
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      called.add(name)
      return client.callTool({ name, arguments: args })
    }

    // Contacts.
    const contact =
      ok(await call("contacts_create", { firstName: "Ada", lastName: "Lovelace", phone: "+1 415 555 0123" })).contact
    expect(contact.phones).toEqual([{ value: "+14155550123" }])
    expect(ok(await call("contacts_list", { q: "ada" })).contacts.map((c: any) => c.id)).toEqual([contact.id])
    expect(ok(await call("contacts_get", { id: contact.id })).contact.firstName).toBe("Ada")
    expect(ok(await call("contacts_update", { id: contact.id, company: "Analytical Engines" })).contact.company).toBe(
      "Analytical Engines"
    )
    const invalid = failed(await call("contacts_create", { firstName: 42 }))
    expect(invalid.code).toBe("invalid_argument")
    expect(invalid.message).toContain("firstName")

    // Numbers.
    const available = ok(await call("numbers_search", { limit: 2 })).available
    expect(available.length).toBeGreaterThan(0)
    const bought = ok(await call("numbers_buy", { phoneNumber: available[0].phone_number }))
    const e164: string = bought.number.e164
    expect(ok(await call("numbers_list")).numbers.map((n: any) => n.e164)).toContain(e164)

    // Messages, idempotent on the key sent as an argument.
    const first = ok(
      await call("messages_send", { to: "+14155550123", body: "Your table is ready", idempotencyKey: "mcp-send-1" })
    )
    expect(first.simulated).toBe(true)
    const again = ok(
      await call("messages_send", { to: "+14155550123", body: "Your table is ready", idempotencyKey: "mcp-send-1" })
    )
    expect(again.message.id).toBe(first.message.id)
    expect(
      failed(await call("messages_send", { to: "+14155550123", body: "Another text", idempotencyKey: "mcp-send-1" }))
        .code
    ).toBe("invalid_argument")
    expect(ok(await call("messages_search", { q: "table" })).results.map((r: any) => r.activityId)).toEqual([
      first.message.id
    ])
    expect(ok(await call("conversations_list")).conversations.map((c: any) => c.id)).toContain(first.conversationId)
    const thread = ok(await call("conversations_get", { id: first.conversationId }))
    expect(thread.activities.map((a: any) => a.id)).toContain(first.message.id)
    expect(ok(await call("conversations_update", { id: first.conversationId, status: "done" })).conversation.status)
      .toBe("done")

    // Opt-outs: one recorded through the tool refuses every send to the phone until removed.
    const optOut = ok(await call("opt_outs_create", { phone: "(415) 555-0177", note: "Asked by phone" }))
    expect(optOut).toMatchObject({ created: true, optOut: { phone: "+14155550177", source: "api", keyword: null } })
    expect(ok(await call("opt_outs_create", { phone: "+14155550177" }))).toEqual({ ...optOut, created: false })
    expect(ok(await call("opt_outs_list", { phone: "+14155550177" })).optOuts).toEqual([optOut.optOut])
    expect(failed(await call("messages_send", { to: "+14155550177", body: "Hello" }))).toMatchObject({
      code: "failed_precondition",
      message: `+14155550177 opted out of texts from this workspace on ${
        optOut.optOut.createdAt.slice(0, 10)
      } (recorded through the API); they can opt back in by texting START`
    })
    expect(ok(await call("opt_outs_delete", { phone: "+14155550177" }))).toEqual({ deleted: true })
    expect(failed(await call("opt_outs_delete", { phone: "+14155550177" })).code).toBe("not_found")
    expect(ok(await call("messages_send", { to: "+14155550177", body: "Hello" })).simulated).toBe(true)

    // Scheduled messages and broadcasts, an hour ahead, canceled before they go.
    const sendAt = new Date(Date.now() + 3_600_000).toISOString()
    const later = ok(await call("scheduled_messages_create", { to: "+14155550123", body: "Tomorrow at 9", sendAt }))
      .scheduledMessage
    expect(later).toMatchObject({ to: "+14155550123", status: "scheduled", sendAt })
    expect(ok(await call("scheduled_messages_list", { status: "scheduled" })).scheduledMessages.map((m: any) => m.id))
      .toEqual([later.id])
    expect(ok(await call("scheduled_messages_get", { id: later.id })).scheduledMessage.body).toBe("Tomorrow at 9")
    expect(ok(await call("scheduled_messages_cancel", { id: later.id })).scheduledMessage.status).toBe("canceled")
    const broadcast = ok(
      await call("broadcasts_create", {
        body: "Closed Friday",
        recipients: { phones: ["+14155550123", "(415) 555-0123"], contactIds: [contact.id] },
        sendAt
      })
    ).broadcast
    expect(broadcast).toMatchObject({ status: "scheduled", counts: { total: 1, pending: 1 } })
    expect(ok(await call("broadcasts_list")).broadcasts.map((b: any) => b.id)).toEqual([broadcast.id])
    expect(ok(await call("broadcasts_get", { id: broadcast.id })).broadcast.id).toBe(broadcast.id)
    expect(ok(await call("broadcasts_recipients", { id: broadcast.id })).recipients).toEqual([
      { phone: "+14155550123", contactId: contact.id, status: "pending", messageId: null, failure: null }
    ])
    expect(ok(await call("broadcasts_cancel", { id: broadcast.id })).broadcast.counts).toMatchObject({
      skippedCanceled: 1,
      pending: 0
    })

    // Texting registration (a test key files a mock registration; the simulated registry asks for a PIN).
    expect(ok(await call("messaging_status")).messaging.step).toBeDefined()
    expect(
      (await rest("/v1/api/test-helpers/registry", { method: "POST", body: JSON.stringify({ brand: "otp" }) })).status
    ).toBe(200)
    ok(await call("messaging_register", { business: soleProprietor }))
    expect(ok(await call("messaging_refresh")).messaging.step).toBe("brand_otp_pending")
    ok(await call("messaging_resend_otp"))
    const { pin } = (await (await rest("/v1/api/test-helpers/otp")).json()) as { pin: string }
    expect(ok(await call("messaging_verify_otp", { pin })).messaging.brand.status).toBe("accepted")

    // The agent and calls.
    expect(ok(await call("agent_get")).agent).toBeNull()
    ok(await call("agent_update", { greeting: "Thanks for calling Ada's.", instructions: "Take bookings." }))
    expect(ok(await call("agent_publish")).agent.status).toBe("published")
    expect(ok(await call("numbers_connect", { e164 })).voiceMode).toBe("agent")
    const placed = ok(await call("calls_place", { to: "+14155550123", instructions: "Confirm tomorrow at 10am." }))
    expect(placed.simulated).toBe(true)
    expect(ok(await call("calls_list", { limit: 5 })).calls.map((c: any) => c.id)).toContain(placed.call.id)
    ok(await call("numbers_disconnect", { e164 }))

    // Webhooks, delivered to a real receiver and verified with the secret the tool answered.
    expect(ok(await call("webhooks_event_types")).events.length).toBeGreaterThan(10)
    const hook = ok(await call("webhooks_create", { url: hooks.url, events: ["*"] })).webhook
    expect(ok(await call("webhooks_list")).webhooks.map((w: any) => w.id)).toContain(hook.id)
    expect(ok(await call("webhooks_get", { id: hook.id })).webhook.url).toBe(hooks.url)
    ok(await call("webhooks_update", { id: hook.id, label: "CRM" }))
    const rotated = ok(await call("webhooks_rotate", { id: hook.id }))
    ok(await call("webhooks_test", { id: hook.id }))
    const deadline = Date.now() + 10_000
    while (!hooks.bodies.some((b) => b.body.includes("ping")) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50))
    }
    const ping = hooks.bodies.find((b) => b.body.includes("ping"))!
    expect(() => new Webhook(rotated.webhook.secret).verify(ping.body, ping.headers)).not.toThrow()
    const [pinged] = ok(await call("webhooks_deliveries", { id: hook.id })).deliveries
    expect(pinged.eventId).toBe(ping.headers["webhook-id"])
    // Sent again now: the same webhook-id, one more attempt on the same delivery.
    const retried = ok(await call("webhooks_deliveries_retry", { id: hook.id, deliveryId: pinged.id })).delivery
    expect(retried).toMatchObject({ id: pinged.id, eventId: pinged.eventId, status: "succeeded", attempts: 2 })
    const pings = hooks.bodies.filter((b) => b.headers["webhook-id"] === pinged.eventId)
    expect(pings).toHaveLength(2)
    expect(() => new Webhook(rotated.webhook.secret).verify(pings[1]!.body, pings[1]!.headers)).not.toThrow()
    const since = new Date(Date.now() - 3_600_000).toISOString()
    expect(ok(await call("webhooks_recover", { id: hook.id, since }))).toEqual({ queued: 0 })
    expect(failed(await call("webhooks_recover", { id: hook.id, since: "2020-01-01T00:00:00Z" })).code).toBe(
      "invalid_argument"
    )
    ok(await call("webhooks_delete", { id: hook.id }))

    expect(ok(await call("contacts_delete", { id: contact.id })).deleted).toBe(true)
    expect(failed(await call("contacts_get", { id: contact.id })).code).toBe("not_found")

    expect([...called].sort()).toEqual(tools.map((t) => t.name).sort())
    await close()
  }, 60_000)

  it(
    "refuses every tool to a key without its scope, naming the scope, and hides other workspaces' records",
    async () => {
      const ws = await admin("/workspaces", { name: "Scoped" })
      const keys = new Map<string, string>()
      // For each scope, a key holding every other scope.
      for (const scope of allScopes) {
        const created = await admin(`/workspaces/${ws.workspace.id}/keys`, {
          kind: "test",
          scopes: allScopes.filter((s) => s !== scope)
        })
        keys.set(scope, created.key.token)
      }
      for (const [scope, token] of keys) {
        const { client, close } = await connect(server.baseUrl, token)
        // Offered only what its scopes allow; the rest is still refused by name, with the scope.
        const offered = (await client.listTools()).tools.map((t) => t.name).sort()
        expect(offered).toEqual(tools.filter((x) => x.scope !== scope).map((x) => x.name).sort())
        for (const t of tools.filter((x) => x.scope === scope)) {
          const refused = failed(
            await client.callTool({ name: t.name, arguments: t.example as Record<string, unknown> })
          )
          expect(refused.code, t.name).toBe("permission_denied")
          expect(refused.message, t.name).toContain(scope)
        }
        await close()
      }

      // A record of the first workspace is not found from the second.
      const { client: mine, close: closeMine } = await connect(server.baseUrl, key)
      const theirs = ok(await mine.callTool({ name: "contacts_create", arguments: { firstName: "Grace" } })).contact
      await closeMine()
      const other = await admin(`/workspaces/${ws.workspace.id}/keys`, { kind: "test" })
      const { client, close } = await connect(server.baseUrl, other.key.token)
      expect(failed(await client.callTool({ name: "contacts_get", arguments: { id: theirs.id } })).code).toBe(
        "not_found"
      )
      expect(
        failed(await client.callTool({ name: "contacts_update", arguments: { id: theirs.id, firstName: "Eve" } })).code
      ).toBe("not_found")
      await close()
    },
    60_000
  )

  it("works from the MCP Inspector's command line", async () => {
    const cli = [
      resolve(root, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
      "--cli",
      `${server.baseUrl}/v1/mcp`,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer ${key}`
    ]
    const listed = await run(process.execPath, [...cli, "--method", "tools/list"], { cwd: root, timeout: 60_000 })
    const names = (JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)
    expect(names.sort()).toEqual(tools.map((t) => t.name).sort())
    const called = await run(process.execPath, [
      ...cli,
      "--method",
      "tools/call",
      "--tool-name",
      "contacts_create",
      "--tool-arg",
      "firstName=Inspector"
    ], { cwd: root, timeout: 60_000 })
    expect(JSON.parse(called.stdout).structuredContent.contact.firstName).toBe("Inspector")
  }, 150_000)
})
