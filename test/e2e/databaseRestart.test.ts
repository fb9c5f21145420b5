/**
 * End to end, issue 38 item 9: the database goes away under traffic. The real server process on a
 * private Postgres cluster, the file's own (each case on a database of its own); clients create
 * contacts without pause while the cluster is stopped (`fast`: sessions ended by the server;
 * `immediate`: a crash) and started again on the same port. While it is away every answer is
 * `503 unavailable` with `Retry-After`, never a 500 and never a hang; the service reconnects by
 * itself; every contact it acknowledged is there afterwards; and the webhook worker goes on to
 * deliver every acknowledged contact's event. The second case: a worker's LISTEN comes back. The
 * last is a failover, so its primary is gone for good: the primary crashes, the service's address
 * leads nowhere for a while (connections held unanswered), then moves to a synchronous standby,
 * which is promoted; the same holds, and every acknowledged contact is on the new primary.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { freshDatabase, type PostgresHandle, startPostgres } from "../support/postgres.ts"
import { type RunningServer, startServer } from "../support/server.ts"
import { startTcpProxy } from "../support/tcpProxy.ts"

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` until it holds, or fails after `ms`. */
const eventually = async (what: string, check: () => boolean | Promise<boolean>, ms = 120_000, seen = () => "") => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms / 1000} s: ${what} ${seen()}`)
    await sleep(200)
  }
}

interface Answer {
  readonly status: number
  readonly retryAfter: string | null
  readonly code: string | null
  readonly contactId: string | null
  /** How long the answer took, in ms. */
  readonly ms: number
}

// Commits acknowledged only once in the WAL, as a production server does (the test clusters turn
// that off for speed): an immediate stop is a crash, and must lose nothing acknowledged.
const cluster = await startPostgres({ fresh: true, settings: ["synchronous_commit=on"] })
if (cluster === null && process.env["CI"] === "true") throw new Error("CI=true but no Postgres to restart")
// Here, not in the test: a run that filters the test out (-t) stops the cluster too.
if (cluster !== null) cleanups.push(cluster.stop)

/** A webhook receiver: the contact ids of the events it got. */
const startReceiver = async () => {
  const delivered = new Set<string>()
  const receiver = createServer((req, res) => {
    let body = ""
    req.on("data", (c: Buffer) => (body += c.toString()))
    req.on("end", () => {
      const event = JSON.parse(body) as { data?: { contactId?: string } }
      if (event.data?.contactId !== undefined) delivered.add(event.data.contactId)
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
  cleanups.push(() => new Promise((r) => receiver.close(r)))
  return { delivered, url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks` }
}

/** Subscribes `url` to `contact.updated` with the server's first-boot key; the key's headers. */
const subscribe = async (server: RunningServer, url: string) => {
  const headers = { authorization: `Bearer ${server.testKey}`, "content-type": "application/json" }
  const hook = await fetch(`${server.baseUrl}/v1/api/webhooks`, {
    method: "POST",
    headers,
    body: JSON.stringify({ url, events: ["contact.updated"] })
  })
  expect(hook.status).toBe(201)
  return headers
}

/** The server on `databaseUrl`, a webhook receiver with an endpoint for `contact.updated`, and clients writing. */
const serveUnderTraffic = async (databaseUrl: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-e2e-dbrestart-"))
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))

  const { delivered, url: receiverUrl } = await startReceiver()
  const server: RunningServer = await startServer("node", {
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    OUTBOUND_ALLOW_PRIVATE: "true",
    RATE_LIMIT_PER_MINUTE: "1000000",
    WEBHOOK_POLL_MS: "500"
  })
  cleanups.push(() => server.stop())
  const headers = await subscribe(server, receiverUrl)

  // Writers: four clients creating contacts back to back, each request bounded by 20 s: the
  // service answers within its pool checkout bound (10 s), with room to spare.
  const answers: Array<Answer> = []
  let writing = true
  let n = 0
  const writer = async () => {
    while (writing) {
      const i = n++
      const sent = Date.now()
      try {
        const res = await fetch(`${server.baseUrl}/v1/api/contacts`, {
          method: "POST",
          headers,
          body: JSON.stringify({ firstName: `Contact ${i}` }),
          signal: AbortSignal.timeout(20_000)
        })
        const text = await res.text()
        const body = (text === "" ? { error: { code: `empty body` } } : JSON.parse(text)) as {
          contact?: { id: string }
          error?: { code: string }
        }
        answers.push({
          status: res.status,
          retryAfter: res.headers.get("retry-after"),
          code: body.error?.code ?? null,
          contactId: body.contact?.id ?? null,
          ms: Date.now() - sent
        })
        if (res.status !== 201) await sleep(100)
      } catch (error) {
        answers.push({ status: 0, retryAfter: null, code: String(error), contactId: null, ms: Date.now() - sent })
      }
    }
  }
  const writers = Array.from({ length: 4 }, writer)
  const since = (from: number, status: number) => answers.slice(from).filter((a) => a.status === status).length
  /** The answers since `from`, counted by status and code. */
  const tally = (from = 0) => {
    const counts = new Map<string, number>()
    for (const a of answers.slice(from)) {
      counts.set(`${a.status} ${a.code}`, (counts.get(`${a.status} ${a.code}`) ?? 0) + 1)
    }
    const slowest = Math.max(0, ...answers.slice(from).map((a) => a.ms))
    return `${JSON.stringify([...counts])}, the slowest in ${slowest} ms`
  }
  const lines = (pattern: RegExp) => server.output().split("\n").filter((l) => pattern.test(l)).slice(-6).join("\n")
  const ready = async () => (await fetch(`${server.baseUrl}/readyz`)).status

  return {
    server,
    ready,
    /** Waits for `count` answers of `status` after the `from`th (60 s; 120 s for acknowledgements). */
    answered: async (what: string, from: number, status: 201 | 503, count: number) => {
      await eventually(
        what,
        () => since(from, status) >= count,
        status === 201 ? 120_000 : 60_000,
        () => `${tally(from)}\n${lines(/ 406 |rror/)}`
      )
      console.log(`${what}: ${tally(from)}`)
    },
    /** How many answers so far: `answered` counts from here. */
    mark: () => answers.length,
    /**
     * Stops the writers, then: nothing but acknowledgements and 503s with Retry-After (no 500, no
     * hang, no reset), every acknowledged contact stored, and its event delivered. Answers the
     * acknowledged ids.
     */
    finish: async () => {
      writing = false
      await Promise.all(writers)
      const unexpected = answers.filter((a) => a.status !== 201 && a.status !== 503)
      expect(unexpected, `${JSON.stringify(unexpected.slice(0, 5))}\n${lines(/ 40[0-9] | 50[0-9] /)}`).toEqual([])
      for (const a of answers.filter((a) => a.status === 503)) {
        expect(a.code).toBe("unavailable")
        expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1)
      }
      const acknowledged = answers.flatMap((a) => (a.contactId === null ? [] : [a.contactId]))
      for (const id of acknowledged) {
        const res = await fetch(`${server.baseUrl}/v1/api/contacts/${id}`, { headers })
        expect(res.status, `contact ${id}`).toBe(200)
      }
      await eventually(
        "every acknowledged contact's event delivered",
        () => acknowledged.every((id) => delivered.has(id)),
        180_000
      )
      expect(await server.stop()).toBe(0)
      return acknowledged
    }
  }
}

describe.runIf(cluster !== null)("the database goes away under traffic", () => {
  it(
    "Postgres stopped and started again: 503 with Retry-After while it is away, reconnects by itself, loses no acknowledged write or event",
    async () => {
      const handle = cluster as PostgresHandle
      const service = await serveUnderTraffic(handle.url)
      for (const mode of ["fast", "immediate"] as const) {
        await service.answered("contacts created before the stop", service.mark(), 201, 20)
        const stoppedAt = service.mark()
        await handle.server!.halt(mode)
        await service.answered(`503s while Postgres is stopped (${mode})`, stoppedAt, 503, 5)
        expect(await service.ready(), "/readyz says the database is away").toBe(503)
        await handle.server!.resume()
        await service.answered(`writes acknowledged again after the restart (${mode})`, service.mark(), 201, 20)
        await eventually("/readyz ready again", async () => (await service.ready()) === 200)
      }
      await service.finish()
    },
    600_000
  )

  it(
    "the notices a process listens to resume after a restart: events committed by another process wake its webhook worker again",
    async () => {
      const handle = cluster as PostgresHandle
      const db = await freshDatabase(handle.url, "notices")
      const dataDir = mkdtempSync(join(tmpdir(), "switchboard-e2e-dbrestart-"))
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
      const { delivered, url: receiverUrl } = await startReceiver()
      const env = { DATABASE_URL: db.url, DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: "true" }
      // The worker's poll is out of reach of the test: only the NOTIFY of the API-only process's
      // commits (adapters/sql/outboxNotices.ts) can wake it.
      const worker = await startServer("node", { ...env, WEBHOOK_POLL_MS: "600000" })
      cleanups.push(() => worker.stop())
      const api = await startServer("node", { ...env, WEBHOOK_WORKER: "false" })
      cleanups.push(() => api.stop())
      const headers = await subscribe(worker, receiverUrl)
      /** Creates contacts through the API-only process until one is acknowledged (within 60 s). */
      const created: Array<string> = []
      const create = async () => {
        for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
          const res = await fetch(`${api.baseUrl}/v1/api/contacts`, {
            method: "POST",
            headers,
            body: JSON.stringify({ firstName: "Noticed" }),
            signal: AbortSignal.timeout(15_000)
          }).catch(() => undefined)
          const body = (await res?.json().catch(() => undefined)) as { contact?: { id: string } } | undefined
          if (res?.status === 201) return void created.push(body!.contact!.id)
          await sleep(200)
        }
        throw new Error("no contact acknowledged by the API-only process within 60 s")
      }
      const allDelivered = () => created.every((id) => delivered.has(id))
      await create()
      await eventually("an event delivered before the restart", allDelivered, 60_000)

      await handle.server!.halt("fast")
      await handle.server!.resume()
      await create()
      // A contact now and then while the worker's listening connection comes back: a notice sent
      // before it listens again is lost, the next one wakes the worker for both.
      await eventually(
        "events committed after the restart delivered",
        async () => allDelivered() || (await create(), await sleep(1000), false),
        90_000,
        () => `${created.filter((id) => !delivered.has(id)).length} of ${created.length} not delivered`
      )
      expect(await api.stop()).toBe(0)
      expect(await worker.stop()).toBe(0)
    },
    600_000
  )

  it(
    "a standby promoted: 503 with Retry-After while the primary is gone and the standby takes no writes, then writes on the new primary with no acknowledged write lost",
    async () => {
      // The file's cluster, last: its primary crashes for good. A database of this test's own,
      // which the standby copies with the others.
      const primary = cluster as PostgresHandle
      const db = await freshDatabase(primary.url, "failover")
      // Commits wait for the standby (synchronous_standby_names, set once it streams), as an
      // operator who must not lose an acknowledged write configures it: with asynchronous
      // replication the last commits acknowledged before the crash may never reach the standby.
      const standby = await primary.server!.standby()
      const admin = new pg.Client({ connectionString: db.url })
      await admin.connect()
      await admin.query("ALTER SYSTEM SET synchronous_standby_names = '*'")
      await admin.query("SELECT pg_reload_conf()")
      await eventually(
        "the standby synchronous",
        async () => (await admin.query("SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'")).rowCount === 1
      )
      await admin.end()

      // node-postgres takes one host (no multi-host URL, no target_session_attrs), so the service
      // reaches the database as operators arrange a failover for such clients: through an address
      // that moves to the new primary (a virtual IP, DNS, HAProxy or PgBouncer). Here it moves
      // before the promotion ends, as DNS or a pooler checking only that a server answers can:
      // the service then talks to a standby still in recovery, which refuses every write.
      const proxy = await startTcpProxy(primary.server!.port)
      cleanups.push(proxy.close)
      const url = new URL(db.url)
      url.port = String(proxy.port)
      const service = await serveUnderTraffic(url.toString())

      await service.answered("contacts created before the failover", service.mark(), 201, 20)
      const crashedAt = service.mark()
      await primary.server!.halt("immediate")
      await service.answered("503s while the primary is gone", crashedAt, 503, 5)
      expect(await service.ready(), "/readyz says the database is away").toBe(503)

      // The address leads nowhere for a while: connections are held unanswered, and requests must
      // still answer (503) within the writers' bound rather than wait for them.
      proxy.moveTo(null)
      const heldAt = service.mark()
      await service.answered("503s while connections are held", heldAt, 503, 5)
      expect(await service.ready(), "/readyz says the database is away").toBe(503)

      proxy.moveTo(standby.port)
      const movedAt = service.mark()
      await service.answered("503s while the standby is in recovery", movedAt, 503, 5)
      expect(await service.ready(), "/readyz says a standby in recovery cannot serve").toBe(503)

      await standby.promote()
      await service.answered("writes acknowledged on the new primary", service.mark(), 201, 20)
      await eventually("/readyz ready again", async () => (await service.ready()) === 200)
      const acknowledged = await service.finish()

      // On the new primary itself, not only through the service.
      const promotedUrl = new URL(db.url)
      promotedUrl.port = String(standby.port)
      const promoted = new pg.Client({ connectionString: promotedUrl.toString() })
      await promoted.connect()
      try {
        const { rows } = await promoted.query<{ id: string }>("SELECT id FROM contacts WHERE id = ANY($1::uuid[])", [
          acknowledged
        ])
        expect(new Set(rows.map((r) => r.id))).toEqual(new Set(acknowledged))
      } finally {
        await promoted.end()
      }
    },
    600_000
  )
})
