/**
 * At most once per recipient across kill -9 (CONTRACT "Scheduled messages and broadcasts"): a live
 * broadcast of 2,000 recipients on the embedded database, sent through the fake Telnyx (which lives
 * in this process, so its record of the texts it received survives the kills, and answers each
 * after 300 ms, so texts are in flight when the process dies). The service is killed twice in the
 * middle and started again on the same data directory. Then no recipient got two texts, every one
 * ends sent, skipped or failed, the failed ones are `unknown_outcome` (the sends in flight at a
 * kill, each received at most once), and the counts are the tally of the recipients.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type FakeTelnyx, startFakeTelnyx } from "../support/fakeTelnyx.ts"
import { business, readyBilling } from "../support/registration.ts"
import { freePort, type RunningServer, startServer } from "../support/server.ts"

const ADMIN_TOKEN = "broadcast-crash-admin"
const RECIPIENTS = 2000
const LATENCY_MS = 300
/** What one process claims at once (adapters/scheduling/worker.ts DEFAULT_BATCH): the most in flight at a kill. */
const IN_FLIGHT_MOST = 25

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("a live broadcast across kill -9 on the embedded database", () => {
  it(
    "texts no recipient twice; every recipient ends sent, skipped or failed with unknown_outcome; counts add up",
    async () => {
      const fake: FakeTelnyx = await startFakeTelnyx()
      cleanups.push(() => fake.stop())
      fake.setOrderFlow({ onCreate: "success", onRetrieve: "success" })
      const dataDir = mkdtempSync(join(tmpdir(), "switchboard-broadcast-crash-"))
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
      const port = await freePort()
      const env = {
        PORT: String(port),
        DATA_DIR: dataDir,
        ADMIN_TOKEN,
        CARRIER: "telnyx",
        TELNYX_BASE_URL: fake.baseUrl,
        TELNYX_API_KEY: fake.apiKey,
        TELNYX_PUBLIC_KEY: fake.publicKey,
        TELNYX_MESSAGING_PROFILE_ID: "fake-profile",
        TELNYX_CONNECTION_ID: "fake-connection",
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        REGISTRY_POLL_MS: "300",
        RATE_LIMIT_PER_MINUTE: "100000",
        SCHEDULING_POLL_MS: "100"
      }
      let server: RunningServer = await startServer("node", env, 120_000)
      cleanups.push(() => server.stop())

      const call = async (token: string, method: string, path: string, json?: unknown) => {
        const res = await fetch(`${server.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(json === undefined ? {} : { body: JSON.stringify(json) }),
          signal: AbortSignal.timeout(30_000)
        })
        const text = await res.text()
        expect(res.status, `${method} ${path}: ${text}`).toBeLessThan(300)
        return JSON.parse(text) as any
      }
      const { workspace } = await call(ADMIN_TOKEN, "POST", "/v1/admin/workspaces", {
        name: "Acme Plumbing",
        billing: readyBilling
      })
      const live = (await call(ADMIN_TOKEN, "POST", `/v1/admin/workspaces/${workspace.id}/keys`, { kind: "live" })).key
        .token as string
      await call(ADMIN_TOKEN, "PATCH", `/v1/admin/workspaces/${workspace.id}`, {
        textingSegmentsPerMinute: 4500,
        quietHours: null
      })
      const available = (await call(live, "GET", "/v1/api/numbers/available?type=local&limit=1")).available
      await call(live, "POST", "/v1/api/numbers", { phoneNumber: available[0].phone_number })
      await call(live, "POST", "/v1/api/messaging/registration", { business })
      // The fake registry approves the campaign and assigns the number on later reads (the poller's,
      // every 300 ms): the live path is open once a direct send reaches the fake.
      const opened = Date.now() + 60_000
      for (;;) {
        const res = await fetch(`${server.baseUrl}/v1/api/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${live}`, "content-type": "application/json" },
          body: JSON.stringify({ to: "+14155550100", body: "Before the broadcast" })
        })
        if (res.status === 201) break
        expect(Date.now(), await res.text()).toBeLessThan(opened)
        await sleep(300)
      }

      fake.setMessageLatency(LATENCY_MS)
      const phones = Array.from({ length: RECIPIENTS }, (_, i) => `+1415${String(5_000_000 + i).padStart(7, "0")}`)
      const { broadcast } = await call(live, "POST", "/v1/api/broadcasts", {
        body: "Closed Friday. Reply STOP to opt out.",
        recipients: { phones }
      })
      const receivedFor = () => fake.receivedMessages.filter((m) => JSON.parse(m.body).to !== "+14155550100")

      const kills: Array<number> = []
      for (const at of [700, 1400]) {
        const deadline = Date.now() + 180_000
        while (receivedFor().length < at && Date.now() < deadline) await sleep(20)
        expect(receivedFor().length, "texts reached the fake before the kill").toBeGreaterThanOrEqual(at)
        await server.kill()
        kills.push(receivedFor().length)
        server = await startServer("node", env, 120_000)
      }

      const deadline = Date.now() + 300_000
      let done = (await call(live, "GET", `/v1/api/broadcasts/${broadcast.id}`)).broadcast
      while (done.status !== "completed" && Date.now() < deadline) {
        await sleep(500)
        done = (await call(live, "GET", `/v1/api/broadcasts/${broadcast.id}`)).broadcast
      }
      expect(done.status).toBe("completed")
      // Texts the fake was still holding when the last one settled.
      await sleep(LATENCY_MS * 2)

      const recipients: Array<any> = []
      let cursor: string | null = null
      do {
        const page: any = await call(
          live,
          "GET",
          `/v1/api/broadcasts/${broadcast.id}/recipients?limit=200${cursor === null ? "" : `&cursor=${cursor}`}`
        )
        recipients.push(...page.recipients)
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(recipients).toHaveLength(RECIPIENTS)

      const texts = new Map<string, number>()
      for (const m of receivedFor()) {
        const to = String(JSON.parse(m.body).to)
        texts.set(to, (texts.get(to) ?? 0) + 1)
      }
      const twice = [...texts].filter(([, n]) => n > 1)
      expect(twice, "recipients texted twice").toEqual([])

      const byStatus = new Map<string, number>()
      for (const r of recipients) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1)
      const unknown = recipients.filter((r) => r.status === "failed")
      for (const r of unknown) expect(r.failure.code, JSON.stringify(r)).toBe("unknown_outcome")
      for (const r of recipients.filter((r) => r.status === "sent")) expect(texts.get(r.phone), r.phone).toBe(1)
      expect(recipients.every((r) => ["sent", "skipped", "failed"].includes(r.status))).toBe(true)
      console.log(
        `broadcast crash: texts received at the kills ${kills.join(", ")}; sent ${byStatus.get("sent") ?? 0}, ` +
          `unknown_outcome ${unknown.length} (of them received by the fake: ${
            unknown.filter((r) => texts.has(r.phone)).length
          })`
      )
      expect(unknown.length).toBeLessThanOrEqual(kills.length * IN_FLIGHT_MOST)
      expect(done.counts).toEqual({
        total: RECIPIENTS,
        sent: byStatus.get("sent") ?? 0,
        failed: byStatus.get("failed") ?? 0,
        skippedOptedOut: byStatus.get("skipped") ?? 0,
        skippedCanceled: 0,
        pending: 0
      })
    },
    600_000
  )
})
