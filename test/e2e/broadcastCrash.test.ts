/**
 * A broadcast across kill -9 (the issue's Must-show; docs/design/jobs.md §4; docs/features/scheduling.md
 * "At most once per recipient"): the real server texting live (CARRIER=telnyx) through the fake
 * Telnyx, which holds each `POST /v2/messages` answer 150-450 ms so that texts are in flight when a
 * process is SIGKILLed, twice, mid-broadcast, and restarted on the same data each time. The fake
 * lives in this process: its record of requests outlives the kills.
 *
 * - On the embedded database (PGlite in DATA_DIR, one process): its next start gives up at once the
 *   sends the dead process left in flight.
 * - On Postgres, three processes: the first, then the second, is killed and restarted while the others
 *   send on; a live process gives up the dead one's sends when their in-flight mark runs out
 *   (SCHEDULING_IN_FLIGHT_MS, shortened here to within the lease that the rest waits out anyway).
 *
 * No recipient is texted twice; every recipient ends sent, skipped or failed; the failed ones are
 * `unknown_outcome`, no more than the sends the killed processes had in flight, each texted at most
 * once; a sent one was texted exactly once; the counts add up, over the API and over the rows.
 */
import { PGlite } from "@electric-sql/pglite"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import pg from "pg"
import { afterAll, describe, expect, inject, it } from "vitest"
import { pgliteOptions } from "../../adapters/pglite/PgliteClient.ts"
import { DEFAULT_IN_FLIGHT } from "../../adapters/scheduling/worker.ts"
import { type FakeTelnyx, type RecordedRequest, startFakeTelnyx } from "../support/fakeTelnyx.ts"
import { freshDatabase } from "../support/postgres.ts"
import { business } from "../support/registration.ts"
import { freePort, type RunningServer, startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"
import { until } from "../support/until.ts"

const RECIPIENTS = 2000
/** Kill a process when the fake has received this many texts of the broadcast: twice, mid-way. */
const KILL_AFTER = [700, 1400]
/** How long the fake holds each answer to `POST /v2/messages`. */
const LATENCY = { min: 150, max: 450 }
/**
 * After a kill, before the restart: enough for the fake to read what the dead process had written
 * (already in the kernel) and past the longest answer it held, even on a loaded machine.
 */
const SETTLE_MS = 1500
const ADMIN_TOKEN = "e2e-broadcast-crash-admin"
const PROFILE_ID = "fake-profile"
const CONNECTION_ID = "fake-connection"
/** Texted once before the broadcast, to know the number texts live: not a recipient. */
const PROBE = "+14155550123"
const BILLING = {
  plan: "pro",
  trial: false,
  subscription: "active",
  paymentMethod: true,
  identity: "verified",
  mobileVerified: true,
  billedVia: "card",
  ownerEmail: "owner@acme.example"
}
const phones = Array.from({ length: RECIPIENTS }, (_, i) => `+1646555${String(i).padStart(4, "0")}`)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const tempDir = tempDirs("broadcast-crash")

const STATES_SQL = "SELECT state, count(*)::int AS n FROM text_sends WHERE source_id = $1 GROUP BY state"
const COUNTERS_SQL =
  "SELECT total, sent, failed, skipped_opted_out, skipped_canceled, pending FROM broadcasts WHERE id = $1"
type Query = <R>(text: string, params: Array<unknown>) => Promise<Array<R>>

/** The broadcast's rows by state, and its counters. */
const rowsOf = async (query: Query, broadcastId: string) => {
  const states = await query<{ state: string; n: number }>(STATES_SQL, [broadcastId])
  const counters = await query<Record<string, number>>(COUNTERS_SQL, [broadcastId])
  return { states: Object.fromEntries(states.map((r) => [r.state, r.n])), counters: counters[0] }
}

/** Read from the data dir itself (the server stopped: one process per data dir). */
const pgliteRows = async (dataDir: string, broadcastId: string) => {
  const db = await PGlite.create(pgliteOptions(join(dataDir, "pglite")))
  try {
    return await rowsOf(async (text, params) => (await db.query<any>(text, params)).rows, broadcastId)
  } finally {
    await db.close()
  }
}

const postgresRows = async (url: string, broadcastId: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await rowsOf(async (text, params) => (await client.query(text, params)).rows, broadcastId)
  } finally {
    await client.end()
  }
}

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

interface Setup {
  /** How many server processes share the database. */
  readonly processes: number
  /** Extra environment of every process (the database). */
  readonly env: Record<string, string>
  /** The broadcast's rows and counters, once every process has stopped. */
  readonly rows: (dataDirs: ReadonlyArray<string>, broadcastId: string) => ReturnType<typeof rowsOf>
}

const crashMidBroadcast = async (label: string, setup: Setup) => {
  const t0 = Date.now()
  const fake: FakeTelnyx = await startFakeTelnyx()
  cleanups.push(() => fake.stop())
  // Each process keeps its port (and data dir) across restarts; the first's address is the PUBLIC_BASE_URL.
  const ports: Array<number> = []
  for (let i = 0; i < setup.processes; i++) ports.push(await freePort())
  const dataDirs = ports.map(() => tempDir())
  const baseOf = (i: number) => `http://127.0.0.1:${ports[i]}`
  const envOf = (i: number) => ({
    ...setup.env,
    PORT: String(ports[i]),
    DATA_DIR: dataDirs[i]!,
    ADMIN_TOKEN,
    CARRIER: "telnyx",
    TELNYX_BASE_URL: fake.baseUrl,
    TELNYX_API_KEY: fake.apiKey,
    TELNYX_PUBLIC_KEY: fake.publicKey,
    TELNYX_MESSAGING_PROFILE_ID: PROFILE_ID,
    TELNYX_CONNECTION_ID: CONNECTION_ID,
    PUBLIC_BASE_URL: baseOf(0),
    REGISTRY_POLL_MS: "300",
    OUTBOUND_ALLOW_PRIVATE: "true",
    RATE_LIMIT_PER_MINUTE: "1000000"
  })
  const servers: Array<RunningServer> = [await startServer("node", envOf(0), 120_000)]
  cleanups.push(() => Promise.all(servers.map((s) => s.stop())))

  /** A call to process `to` (default the first; restarted on the same port after a kill). */
  const api = async (path: string, init: { token: string; method?: string; json?: unknown; to?: number }) => {
    const res = await fetch(`${baseOf(init.to ?? 0)}${path}`, {
      method: init.method ?? (init.json === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${init.token}`,
        ...(init.json === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      signal: AbortSignal.timeout(30_000)
    })
    const text = await res.text()
    return { status: res.status, body: text === "" ? null : JSON.parse(text), text }
  }
  const admin = (path: string, json?: unknown, method?: string) =>
    api(`/v1/admin${path}`, { token: ADMIN_TOKEN, json, ...(method === undefined ? {} : { method }) })

  // A live workspace, paced as fast as the admin API allows, without quiet hours.
  const ws = await admin("/workspaces", { name: "Acme Plumbing", billing: BILLING })
  expect(ws.status, ws.text).toBe(201)
  const workspaceId: string = ws.body.workspace.id
  const patched = await admin(
    `/workspaces/${workspaceId}`,
    { textingSegmentsPerMinute: 4500, quietHours: null },
    "PATCH"
  )
  expect(patched.status, patched.text).toBe(200)
  const liveKey = await admin(`/workspaces/${workspaceId}/keys`, { kind: "live", name: "live" })
  expect(liveKey.status, liveKey.text).toBe(201)
  const live: string = liveKey.body.key.token

  // A number bought at Telnyx, the 10DLC registration filed and approved, the number assigned.
  const found = await api("/v1/api/numbers/available?type=local&locality=Chicago&limit=5", { token: live })
  expect(found.status, found.text).toBe(200)
  const number: string = found.body.available[0].phone_number
  const bought = await api("/v1/api/numbers", { token: live, json: { phoneNumber: number } })
  expect(bought.status, bought.text).toBe(201)
  const filed = await api("/v1/api/messaging/registration", { token: live, json: { business } })
  expect(filed.status, filed.text).toBe(201)
  await until("campaign_active", async () => {
    const m = await api("/v1/api/messaging", { token: live })
    return m.body.messaging.step === "campaign_active" ? true : undefined
  })
  await until("a live text accepted", async () => {
    const res = await api("/v1/api/messages", { token: live, json: { to: PROBE, body: "Ready" } })
    return res.status === 201 ? true : undefined
  })
  for (let i = 1; i < setup.processes; i++) servers.push(await startServer("node", envOf(i), 120_000))

  // The broadcast; its texts reach the fake, whose answers now take a while.
  fake.setMessageLatency(LATENCY)
  const recipientSet = new Set(phones)
  const texts = (): Array<RecordedRequest> =>
    fake.requests.filter((r) =>
      r.method === "POST" && r.path === "/v2/messages" && recipientSet.has(String((r.json as any)?.to))
    )
  const created = await api("/v1/api/broadcasts", {
    token: live,
    json: { body: "We are closed Friday for the holiday.", recipients: { phones } }
  })
  expect(created.status, created.text).toBe(201)
  const broadcastId: string = created.body.broadcast.id
  expect(created.body.broadcast.counts).toMatchObject({ total: RECIPIENTS, pending: RECIPIENTS })
  const sendingFrom = Date.now()

  // Each kill (of the first process, then of the second when there are several): when, and how
  // many texts the fake had received then.
  const kills: Array<{ at: number; received: number; restartedAt: number; upAt: number }> = []
  for (const [k, after] of KILL_AFTER.entries()) {
    const victim = k % setup.processes
    await until(`${after} texts at the fake`, () => (texts().length >= after ? true : undefined), 300_000)
    const at = Date.now()
    const received = texts().length
    expect(await servers[victim]!.kill()).toBe("SIGKILL")
    await sleep(SETTLE_MS)
    const restartedAt = Date.now()
    servers[victim] = await startServer("node", envOf(victim), 120_000)
    kills.push({ at, received, restartedAt, upAt: Date.now() })
  }

  // The rest is sent: texts claimed by a killed process wait out their lease (30 s), and on Postgres
  // its sends in flight are given up when their mark runs out.
  const done = await until("the broadcast completed", async () => {
    const b = await api(`/v1/api/broadcasts/${broadcastId}`, { token: live })
    return b.body.broadcast.status === "completed" ? b.body.broadcast : undefined
  }, 300_000)
  const sendingMs = Date.now() - sendingFrom

  // Every recipient, a page of 200 at a time.
  const recipients: Array<any> = []
  let cursor: string | null = null
  do {
    const page = await api(
      `/v1/api/broadcasts/${broadcastId}/recipients?limit=200${cursor === null ? "" : `&cursor=${cursor}`}`,
      { token: live }
    )
    expect(page.status, page.text).toBe(200)
    recipients.push(...page.body.recipients)
    cursor = page.body.nextCursor ?? null
  } while (cursor !== null)
  expect(recipients).toHaveLength(RECIPIENTS)
  expect(new Set(recipients.map((r) => r.phone))).toEqual(recipientSet)

  // No one texted twice.
  const requestsTo = new Map<string, Array<RecordedRequest>>()
  for (const r of texts()) {
    const to = String((r.json as any).to)
    requestsTo.set(to, [...(requestsTo.get(to) ?? []), r])
  }
  const twice = [...requestsTo].filter(([, rs]) => rs.length > 1).map(([to, rs]) => [to, rs.length])
  expect(twice, "no recipient texted twice").toEqual([])
  expect(texts().every((r) => r.answer === 200), "the fake took every text").toBe(true)

  // Every recipient settled: sent (texted once), or failed unknown_outcome (texted at most once).
  const tally: Record<string, number> = {}
  for (const r of recipients) tally[r.status] = (tally[r.status] ?? 0) + 1
  expect(recipients.filter((r) => !["sent", "skipped", "failed"].includes(r.status)), "none left pending").toEqual([])
  const sent = recipients.filter((r) => r.status === "sent")
  const failed = recipients.filter((r) => r.status === "failed")
  expect(sent.filter((r) => (requestsTo.get(r.phone)?.length ?? 0) !== 1), "a sent recipient was texted once")
    .toEqual([])
  expect(sent.every((r) => typeof r.messageId === "string")).toBe(true)
  expect(failed.filter((r) => r.failure?.code !== "unknown_outcome"), "failed only as unknown_outcome").toEqual([])
  // Skipped only for an opt-out or a cancel: there is neither here.
  expect(tally["skipped"] ?? 0).toBe(0)

  // In flight at a kill: texts the fake received from a process that died before settling them.
  // Each was received before its kill (or in the settle window, read from the kernel after it);
  // none after the last restart, when every process left was one that lives to the end.
  const sentPhones = new Set(sent.map((r) => r.phone))
  const unsettled = texts().filter((r) => !sentPhones.has(String((r.json as any).to)))
  const killOf = (r: RecordedRequest) => kills.findIndex((k) => r.at < k.restartedAt)
  expect(unsettled.filter((r) => killOf(r) < 0).map((r) => (r.json as any).to), "texts unsettled by a live process")
    .toEqual([])
  const inFlightAtKills = kills.map((_, k) => unsettled.filter((r) => killOf(r) === k).length)
  // A send marked in flight whose request had not reached the fake when its process died is
  // unknown_outcome too, with no request; together they are at most what the killed processes had
  // in hand (their slots: DEFAULT_IN_FLIGHT each).
  const untexted = failed.filter((r) => !requestsTo.has(r.phone))
  expect(failed.length, "unknown_outcome: the texts in flight at the kills, and sends marked but not yet sent")
    .toBe(unsettled.length + untexted.length)
  expect(failed.length, "no more than the killed processes had in flight").toBeLessThanOrEqual(
    KILL_AFTER.length * DEFAULT_IN_FLIGHT
  )

  // Counts add up, over the API.
  expect(done.counts).toEqual({
    total: RECIPIENTS,
    sent: sent.length,
    failed: failed.length,
    skippedOptedOut: 0,
    skippedCanceled: 0,
    pending: 0
  })
  expect(done.completedAt).not.toBeNull()

  // And over the rows, read with every process stopped.
  for (const s of servers) expect(await s.stop()).toBe(0)
  const rows = await setup.rows(dataDirs, broadcastId)
  expect(rows.states).toEqual({
    ...(sent.length > 0 ? { sent: sent.length } : {}),
    ...(failed.length > 0 ? { failed: failed.length } : {})
  })
  expect(rows.counters).toEqual({
    total: RECIPIENTS,
    sent: sent.length,
    failed: failed.length,
    skipped_opted_out: 0,
    skipped_canceled: 0,
    pending: 0
  })

  const perFive: Array<number> = []
  for (const r of texts()) {
    const k = Math.floor((r.at - sendingFrom) / 5000)
    while (perFive.length <= k) perFive.push(0)
    perFive[k]!++
  }
  const since = (t: number) => ((t - sendingFrom) / 1000).toFixed(1)
  console.log(
    `${label}: ${RECIPIENTS} recipients, ${sent.length} sent, ${failed.length} failed unknown_outcome ` +
      `(${unsettled.length} texted, ${untexted.length} never reached the fake); ` +
      `kills after ${kills.map((k) => k.received).join(" and ")} texts, texts in flight at each: ${
        inFlightAtKills.join(", ")
      }; killed at ${kills.map((k) => `${since(k.at)} s (up again at ${since(k.upAt)} s)`).join(", ")}; ` +
      `completed after ${(sendingMs / 1000).toFixed(1)} s; texts per 5 s: ${perFive.join(" ")}; ` +
      `whole test ${((Date.now() - t0) / 1000).toFixed(1)} s`
  )
}

describe("a live broadcast across kill -9", () => {
  it(
    "on the embedded database: texts no recipient twice, settles every one, gives up only the sends in flight",
    async () => {
      await crashMidBroadcast("PGlite", {
        processes: 1,
        env: {},
        rows: (dataDirs, id) => pgliteRows(dataDirs[0]!, id)
      })
    },
    600_000
  )

  const url = inject("postgresUrl")
  it.runIf(url !== null)(
    "on Postgres with three processes: the same, the dead process's sends given up when their mark runs out",
    async () => {
      const db = await freshDatabase(url!, "e2e_broadcast_crash")
      cleanups.push(db.drop)
      await crashMidBroadcast("Postgres", {
        processes: 3,
        env: {
          DATABASE_URL: db.url,
          // One key for every process (each has its own DATA_DIR).
          SECRETS_KEY: randomBytes(32).toString("hex"),
          // Within the lease (LEASE_MS) that the dead process's other claims wait out, and far beyond
          // a send to the fake: its marks run out before those leases, not a minute after the kill.
          SCHEDULING_IN_FLIGHT_MS: "20000"
        },
        rows: (_, id) => postgresRows(db.url, id)
      })
    },
    600_000
  )
})
