/**
 * Pacing measured (CONTRACT "Pacing"): three server processes on one Postgres send one broadcast of
 * 200 recipients, each text three GSM-7 segments, at 300 segments a minute. The pace is shared, so
 * the 600 segments take two minutes whichever process sends each text: the span from the first
 * text to the last is 199 spacings of 0.6 s, within 5% of two minutes, no minute holds more than
 * its 300 segments (and one text), and every process sent some. Needs Postgres: skipped without
 * one, a failure under CI=true.
 */
import pg from "pg"
import { afterAll, describe, expect, inject, it } from "vitest"
import { segmentsOf } from "../../core/pacing/segments.ts"
import { freshDatabase } from "../support/postgres.ts"
import { type RunningServer, startServer } from "../support/server.ts"

const ADMIN_TOKEN = "pacing-test-admin-token"
const RECIPIENTS = 200
const PER_MINUTE = 300
const BODY = "Your appointment is confirmed. ".repeat(13).slice(0, 400)

const url = inject("postgresUrl")
const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

if (url === null && process.env["CI"] === "true") {
  describe("pacing across three processes", () => {
    it("needs a Postgres under CI=true", () => {
      expect.fail("globalSetup provided no Postgres URL, and CI=true requires the Postgres end-to-end tests to run")
    })
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** This process's `scheduled_sends_total` from its /metrics. */
const sendsOf = async (server: RunningServer) => {
  const text = await (await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
    .text()
  const line = text.split("\n").find((l) => l.startsWith("scheduled_sends_total"))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

describe.runIf(url !== null)("pacing across three processes on one Postgres", () => {
  it("a 600-segment broadcast at 300 segments a minute takes two minutes, within 5%, shared by the three", async () => {
    expect(segmentsOf(BODY)).toMatchObject({ encoding: "GSM-7", segments: 3 })
    const db = await freshDatabase(url!, "e2e_pacing")
    cleanups.push(db.drop)
    const env = { DATABASE_URL: db.url, ADMIN_TOKEN, SCHEDULING_POLL_MS: "200" }
    const servers: ReadonlyArray<RunningServer> = await Promise.all([
      startServer("node", env),
      startServer("node", env),
      startServer("node", env)
    ])
    for (const s of servers) cleanups.push(() => s.stop())
    const first = servers.find((s) => s.testKey !== null)!
    const workspaceId = /\(([0-9a-f-]{36})\) on first boot/.exec(first.output())![1]!
    const admin = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${first.baseUrl}/v1/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      expect(res.status, await res.clone().text()).toBeLessThan(300)
    }
    await admin("POST", `/workspaces/${workspaceId}/numbers`, { e164: "+14155550100" })
    await admin("PATCH", `/workspaces/${workspaceId}`, { textingSegmentsPerMinute: PER_MINUTE, quietHours: null })
    const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
      const res = await fetch(`${first.baseUrl}/v1/api${path}`, {
        method: init.method ?? "GET",
        headers: { authorization: `Bearer ${first.testKey}`, "content-type": "application/json" },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
      })
      const json = (await res.json()) as any
      expect(res.status, JSON.stringify(json)).toBeLessThan(300)
      return json
    }
    const phones = Array.from({ length: RECIPIENTS }, (_, i) => `+1415${String(3_000_000 + i).padStart(7, "0")}`)
    const { broadcast } = await api("/broadcasts", { method: "POST", body: { body: BODY, recipients: { phones } } })

    const deadline = Date.now() + 240_000
    let status = broadcast.status
    while (status !== "completed" && Date.now() < deadline) {
      await sleep(2000)
      status = (await api(`/broadcasts/${broadcast.id}`)).broadcast.status
    }
    const done = (await api(`/broadcasts/${broadcast.id}`)).broadcast
    const failures = (await api(`/broadcasts/${broadcast.id}/recipients?status=failed&limit=1`)).recipients
    expect(done.counts, JSON.stringify(failures)).toEqual({
      total: RECIPIENTS,
      sent: RECIPIENTS,
      failed: 0,
      skippedOptedOut: 0,
      skippedCanceled: 0,
      pending: 0
    })

    // When each text was recorded, read from the database.
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    const { rows } = await client.query<{ at: string }>(
      `SELECT (extract(epoch FROM created_at) * 1000)::bigint AS at FROM activities
       WHERE workspace_id = $1 AND type = 'message' ORDER BY created_at`,
      [workspaceId]
    )
    await client.end()
    const times = rows.map((r) => Number(r.at))
    expect(times).toHaveLength(RECIPIENTS)
    const spanMs = times.at(-1)! - times[0]!
    const expected = (RECIPIENTS - 1) * (3 * 60_000 / PER_MINUTE)
    console.log(
      `pacing: ${RECIPIENTS} texts of 3 segments at ${PER_MINUTE}/min: span ${spanMs} ms (expected ${expected})`
    )
    expect(Math.abs(spanMs - 120_000) / 120_000).toBeLessThanOrEqual(0.05)
    // No 60-second window holds more than its 300 segments and one text more.
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[j]! - times[i]! < 60_000 && j < times.length) j++
      expect((j - i) * 3, `window from text ${i}`).toBeLessThanOrEqual(PER_MINUTE + 3)
    }
    const perProcess = await Promise.all(servers.map(sendsOf))
    console.log(`pacing: texts settled per process ${perProcess.join(", ")}`)
    expect(perProcess.reduce((a, b) => a + b, 0)).toBe(RECIPIENTS)
    for (const n of perProcess) expect(n).toBeGreaterThan(0)
  }, 360_000)
})
