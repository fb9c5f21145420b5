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

it.runIf(url !== null || process.env["CI"] === "true")(
  "messaging over sockets on Postgres: send, inbound, reply, thread, search",
  async () => {
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
          headers: {
            authorization: `Bearer ${init.token ?? key}`,
            ...(init.json === undefined ? {} : { "content-type": "application/json" })
          },
          ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
        })
        const text = await res.text()
        return { status: res.status, headers: res.headers, body: text === "" ? null : (JSON.parse(text) as any), text }
      }

      // no number yet: the gate says so
      const early = await call("/v1/api/messages", { json: { to: ADA, body: "too early" } })
      expect(early.status).toBe(409)
      expect(early.body.error.code).toBe("failed_precondition")

      const seeded = await call(`/v1/admin/workspaces/${workspaceId}/numbers`, {
        json: { e164: NUMBER },
        token: ADMIN_TOKEN
      })
      expect(seeded.status, seeded.text).toBe(201)

      const sent = await call("/v1/api/messages", { json: { to: ADA, body: "Your table for two is ready" } })
      expect(sent.status, sent.text).toBe(201)
      expect(sent.body).toMatchObject({
        simulated: true,
        message: { direction: "outbound", deliveryStatus: "simulated" }
      })
      expect(sent.headers.get("x-request-id")).toBeTruthy()

      const got = await call("/v1/api/test-helpers/inbound-messages", {
        json: { from: ADA, to: NUMBER, body: "Thanks, on our way (ada@example.com)" }
      })
      expect(got.status, got.text).toBe(201)
      expect(got.body.conversationId).toBe(sent.body.conversationId)

      const reply = await call("/v1/api/messages", {
        json: { conversationId: sent.body.conversationId, body: "See you soon" }
      })
      expect(reply.status, reply.text).toBe(201)

      const thread = await call(`/v1/api/conversations/${sent.body.conversationId}`)
      expect(thread.status).toBe(200)
      expect(thread.body.activities.map((a: any) => [a.direction, a.body])).toEqual([
        ["outbound", "Your table for two is ready"],
        ["inbound", "Thanks, on our way (ada@example.com)"],
        ["outbound", "See you soon"]
      ])
      expect(thread.body.conversation).toMatchObject({
        numberE164: NUMBER,
        participants: [ADA],
        status: "open",
        unread: 0,
        contactName: ADA
      })

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

      const status = await call("/v1/api/test-helpers/delivery-status", {
        json: { activityId: reply.body.message.id, status: "delivered" }
      })
      expect(status.body.message.deliveryStatus).toBe("delivered")
      const late = await call("/v1/api/test-helpers/delivery-status", {
        json: { activityId: reply.body.message.id, status: "sent" }
      })
      expect(late.body.message.deliveryStatus).toBe("delivered")

      // The parts of a long text arrive at once (carriers deliver them concurrently) from a number
      // nobody has seen: one placeholder contact, one thread, and every part counted as unread.
      const NEWCOMER = "+14155550188"
      const parts = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          call("/v1/api/test-helpers/inbound-messages", {
            json: { from: NEWCOMER, to: NUMBER, body: `part ${i + 1} of 8` }
          }))
      )
      for (const part of parts) {
        expect(part.status, part.text).toBe(201)
      }
      expect(new Set(parts.map((p) => p.body.conversationId)).size).toBe(1)
      const newcomers = await call(`/v1/api/contacts?q=${encodeURIComponent(NEWCOMER)}`)
      expect(newcomers.body.contacts.map((c: any) => c.phone)).toEqual([NEWCOMER])
      const burst = await call(`/v1/api/conversations/${parts[0]!.body.conversationId}`)
      expect(burst.body.activities).toHaveLength(8)
      expect(burst.body.conversation).toMatchObject({ participants: [NEWCOMER], unread: 8 })

      // A contact deleted while texts from its number arrive: its thread is not left pointing at the
      // deleted contact, so the next contact made for that number names the thread.
      const LEAVER = "+14155550166"
      const lee = await call("/v1/api/contacts", { json: { firstName: "Lee", phone: LEAVER } })
      expect(lee.status, lee.text).toBe(201)
      const first = await call("/v1/api/test-helpers/inbound-messages", {
        json: { from: LEAVER, to: NUMBER, body: "hello" }
      })
      const [removed, ...during] = await Promise.all([
        call(`/v1/api/contacts/${lee.body.contact.id}`, { method: "DELETE" }),
        ...Array.from({ length: 6 }, (_, i) =>
          call("/v1/api/test-helpers/inbound-messages", {
            json: { from: LEAVER, to: NUMBER, body: `still here ${i}` }
          }))
      ])
      expect(removed!.status, removed!.text).toBe(200)
      for (const d of during) {
        expect(d.status, d.text).toBe(201)
      }
      await call("/v1/api/test-helpers/inbound-messages", { json: { from: LEAVER, to: NUMBER, body: "anyone?" } })
      const again = await call("/v1/api/contacts", { json: { firstName: "Lee Again", phone: LEAVER } })
      expect(again.status, again.text).toBe(201)
      const leaverThread = await call(`/v1/api/conversations/${first.body.conversationId}`)
      expect(leaverThread.body.conversation.contactName).toBe("Lee Again")

      // Carrier reports for one message arrive at once and out of order: status only moves forward.
      const answer = await call("/v1/api/messages", { json: { to: NEWCOMER, body: "All eight parts received" } })
      expect(answer.status, answer.text).toBe(201)
      const reports = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          call("/v1/api/test-helpers/delivery-status", {
            json: { activityId: answer.body.message.id, status: i % 2 === 0 ? "delivered" : "sent" }
          }))
      )
      for (const report of reports) {
        expect(report.status, report.text).toBe(200)
      }
      const settled = await call(`/v1/api/conversations/${answer.body.conversationId}`)
      expect(settled.body.activities.find((a: any) => a.id === answer.body.message.id).deliveryStatus).toBe("delivered")
    } finally {
      expect(await server.stop()).toBe(0)
      await db.drop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  },
  120_000
)
