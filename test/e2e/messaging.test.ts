/**
 * End to end: the real Node server on a real Postgres (a fresh database), driven over sockets with
 * the test key it prints at first boot, as a new user would with curl: seed a number through the
 * admin API, send, receive an inbound text through the test helper, reply, read the thread, search.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, inject, it } from "vitest"
import { freshDatabase } from "../support/postgres.ts"
import { startServer } from "../support/server.ts"

const ADMIN_TOKEN = "e2e-messaging-admin"
const NUMBER = "+14155550100"
const ADA = "+14155550123"

const url = inject("postgresUrl")

it.runIf(url !== null || process.env["CI"] === "true")("messaging over sockets on Postgres: send, inbound, reply, thread, search", async () => {
  if (url === null) throw new Error("CI=true needs Postgres for the messaging e2e")
  const db = await freshDatabase(url, "e2e_msg")
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-e2e-msg-"))
  const server = await startServer("node", { DATABASE_URL: db.url, DATA_DIR: dataDir, ADMIN_TOKEN })
  try {
    const key = server.testKey
    expect(key).toMatch(/^svc_test_/)
    const workspaceId = /\(([0-9a-f-]{36})\) on first boot/.exec(server.output())?.[1]
    expect(workspaceId).toBeDefined()
    const call = async (path: string, init: { method?: string; json?: unknown; token?: string } = {}) => {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method: init.method ?? (init.json === undefined ? "GET" : "POST"),
        headers: { authorization: `Bearer ${init.token ?? key}`, ...(init.json === undefined ? {} : { "content-type": "application/json" }) },
        ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
      })
      const text = await res.text()
      return { status: res.status, headers: res.headers, body: text === "" ? null : (JSON.parse(text) as any), text }
    }

    // no number yet: the gate says so
    const early = await call("/v1/api/messages", { json: { to: ADA, body: "too early" } })
    expect(early.status).toBe(409)
    expect(early.body.error.code).toBe("failed_precondition")

    const seeded = await call(`/v1/admin/workspaces/${workspaceId}/numbers`, { json: { e164: NUMBER }, token: ADMIN_TOKEN })
    expect(seeded.status, seeded.text).toBe(201)

    const sent = await call("/v1/api/messages", { json: { to: ADA, body: "Your table for two is ready" } })
    expect(sent.status, sent.text).toBe(201)
    expect(sent.body).toMatchObject({ simulated: true, message: { direction: "outbound", deliveryStatus: "simulated" } })
    expect(sent.headers.get("x-request-id")).toBeTruthy()

    const got = await call("/v1/api/test-helpers/inbound-messages", { json: { from: ADA, to: NUMBER, body: "Thanks, on our way (ada@example.com)" } })
    expect(got.status, got.text).toBe(201)
    expect(got.body.conversationId).toBe(sent.body.conversationId)

    const reply = await call("/v1/api/messages", { json: { conversationId: sent.body.conversationId, body: "See you soon" } })
    expect(reply.status, reply.text).toBe(201)

    const thread = await call(`/v1/api/conversations/${sent.body.conversationId}`)
    expect(thread.status).toBe(200)
    expect(thread.body.activities.map((a: any) => [a.direction, a.body])).toEqual([
      ["outbound", "Your table for two is ready"],
      ["inbound", "Thanks, on our way (ada@example.com)"],
      ["outbound", "See you soon"]
    ])
    expect(thread.body.conversation).toMatchObject({ numberE164: NUMBER, participants: [ADA], status: "open", unread: 0, contactName: ADA })

    const list = await call("/v1/api/conversations?status=open")
    expect(list.body.conversations.map((c: any) => c.id)).toEqual([sent.body.conversationId])

    const found = await call(`/v1/api/messages/search?q=${encodeURIComponent("TAB")}`)
    expect(found.body.results.map((r: any) => r.activityId)).toEqual([sent.body.message.id])
    const both = await call("/v1/api/messages/search?q=o")
    expect(both.body.results.map((r: any) => r.activityId)).toEqual([got.body.message.id])
    // punctuation is a word break on Postgres too
    const email = await call("/v1/api/messages/search?q=example")
    expect(email.body.results.map((r: any) => r.activityId)).toEqual([got.body.message.id])
    const newestFirst = await call("/v1/api/messages/search?q=s")
    expect(newestFirst.body.results.map((r: any) => r.body)).toEqual(["See you soon"])

    const status = await call("/v1/api/test-helpers/delivery-status", { json: { activityId: reply.body.message.id, status: "delivered" } })
    expect(status.body.message.deliveryStatus).toBe("delivered")
    const late = await call("/v1/api/test-helpers/delivery-status", { json: { activityId: reply.body.message.id, status: "sent" } })
    expect(late.body.message.deliveryStatus).toBe("delivered")
  } finally {
    expect(await server.stop()).toBe(0)
    await db.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}, 120_000)
