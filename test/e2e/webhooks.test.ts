/**
 * Webhook durability end to end: the real server process on a real Postgres delivers to a local
 * receiver; the process is SIGKILLed while deliveries are pending and restarted on the same
 * database, and the receiver still gets every event (at least once). Needs Postgres: skipped
 * without one, a failure under CI=true.
 */
import { createServer, type Server } from "node:http"
import pg from "pg"
import { afterAll, describe, expect, inject, it } from "vitest"
import { freshDatabase } from "../support/postgres.ts"
import { type RunningServer, startServer } from "../support/server.ts"

const EVENTS = 1000
const CONCURRENCY = 20

interface Receiver {
  readonly url: string
  /** webhook-id -> how many times it arrived. */
  readonly counts: Map<string, number>
  readonly contactIds: Set<string>
  /** How long each answer is held back. */
  delayMs: number
  readonly close: () => Promise<void>
}

const startReceiver = async (): Promise<Receiver> => {
  const counts = new Map<string, number>()
  const contactIds = new Set<string>()
  const receiver = { counts, contactIds, delayMs: 0 } as { -readonly [K in keyof Receiver]: Receiver[K] }
  const server: Server = createServer((req, res) => {
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("error", () => undefined)
    res.on("error", () => undefined)
    req.on("end", () => {
      const id = String(req.headers["webhook-id"])
      counts.set(id, (counts.get(id) ?? 0) + 1)
      try {
        contactIds.add(JSON.parse(body).data.contactId)
      } catch {
        // counted by id anyway
      }
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200).end()
      }, receiver.delayMs)
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`
  receiver.close = () =>
    new Promise((done) => {
      server.closeAllConnections()
      server.close(() => done())
    })
  return receiver
}

const url = inject("postgresUrl")
const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

const runs = url !== null
if (url === null && process.env["CI"] === "true") {
  describe("webhook durability on Postgres", () => {
    it("needs a Postgres under CI=true", () => {
      expect.fail("globalSetup provided no Postgres URL, and CI=true requires the Postgres end-to-end tests to run")
    })
  })
}

describe.runIf(runs)("webhook durability: SIGKILL while deliveries are pending, restart on the same Postgres", () => {
  it("every one of 1,000 events reaches the receiver (at least once)", async () => {
    const t0 = Date.now()
    const db = await freshDatabase(url!, "e2e_webhooks")
    cleanups.push(db.drop)
    const receiver = await startReceiver()
    cleanups.push(receiver.close)
    const env = { DATABASE_URL: db.url, OUTBOUND_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "1000000" }

    let server: RunningServer = await startServer("node", env)
    cleanups.push(() => server.stop())
    const key = server.testKey!
    expect(key).toMatch(/^svc_test_/)
    const call = (base: string, path: string, init: RequestInit = {}) =>
      fetch(`${base}/v1/api${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }
      })

    const created = await call(server.baseUrl, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: receiver.url, events: ["*"] })
    })
    expect(created.status).toBe(201)

    // A slow receiver keeps deliveries pending while the events pour in: each answer is held 10 s
    // (below the 15 s attempt timeout), so at most 64 attempts per 10 s complete, however fast the
    // machine is, and 64 are in flight (leased, unanswered) when the process dies.
    receiver.delayMs = 10_000
    const produceStarted = Date.now()
    let next = 0
    const producer = async () => {
      while (next < EVENTS) {
        const i = next++
        const res = await call(server.baseUrl, "/contacts", {
          method: "POST",
          body: JSON.stringify({ firstName: `Contact ${i}` })
        })
        if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${await res.text()}`)
        await res.arrayBuffer()
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, producer))
    const produceMs = Date.now() - produceStarted

    // Crash: no draining, no clean shutdown.
    const signal = await server.kill()
    expect(signal).toBe("SIGKILL")
    const atKill = receiver.counts.size
    console.log(
      `produced ${EVENTS} events in ${produceMs} ms; receiver had ${atKill} distinct events when the server was SIGKILLed`
    )
    expect(atKill, "deliveries were still pending at the kill").toBeLessThan(EVENTS)

    // Every event the crashed process committed is in the outbox.
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    cleanups.push(() => client.end())
    const outbox = await client.query<{ id: string }>("SELECT id FROM outbox_events")
    expect(outbox.rows).toHaveLength(EVENTS)
    const expected = new Set(outbox.rows.map((r) => `evt_${r.id.replace(/-/g, "")}`))

    receiver.delayMs = 0
    const restartedAt = Date.now()
    server = await startServer("node", env)
    expect(server.testKey, "the second boot finds the workspace").toBeNull()
    // Done when every event has arrived and no delivery is left pending: the ones the killed process
    // had in flight (leased, unanswered) are retried once their lease ends.
    const pendingCount = async () =>
      Number(
        (await client.query<{ n: string }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'succeeded'"))
          .rows[0]!.n
      )
    let allReceivedMs: number | null = null
    for (;;) {
      const missingNow = [...expected].some((id) => !receiver.counts.has(id))
      if (!missingNow && allReceivedMs === null) allReceivedMs = Date.now() - restartedAt
      if (!missingNow && (await pendingCount()) === 0) break
      if (Date.now() - restartedAt > 70_000) break
      await new Promise((r) => setTimeout(r, 200))
    }
    const recoveredMs = Date.now() - restartedAt
    const missing = [...expected].filter((id) => !receiver.counts.has(id))
    const unexpected = [...receiver.counts.keys()].filter((id) => !expected.has(id))
    const duplicates = [...receiver.counts.values()].filter((n) => n > 1)
    const extra = duplicates.reduce((s, n) => s + n - 1, 0)
    console.log(
      `after restart: ${
        receiver.counts.size - missing.length
      }/${EVENTS} distinct events received (all by ${allReceivedMs} ms), ` +
        `every delivery settled after ${recoveredMs} ms; ${duplicates.length} events arrived more than once (${extra} extra requests); ` +
        `${missing.length} missing; whole test ${Date.now() - t0} ms`
    )
    expect(missing, "every event is delivered").toEqual([])
    expect(unexpected).toEqual([])
    expect(receiver.contactIds.size).toBe(EVENTS)

    // and the database agrees: every delivery succeeded, none left leased or pending
    const states = await client.query<{ status: string; n: string }>(
      "SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status"
    )
    expect(states.rows.map((r) => [r.status, Number(r.n)])).toEqual([["succeeded", EVENTS]])
    expect(await server.stop()).toBe(0)
  }, 120_000)
})
