/**
 * `npm run bench:webhooks`: webhook delivery from one server process to a local receiver.
 * Prints figures; asserts nothing.
 *
 * 1. Postgres: BENCH_DATABASE_URL (a fresh database on it) or a throwaway cluster.
 * 2. The server (apps/server/node.ts, OUTBOUND_ALLOW_PRIVATE=true) and an endpoint subscribed to `*`
 *    pointing at a minimal node:http receiver in this process.
 * 3. Throughput: WEBHOOK_EVENTS events are written to the outbox in one transaction by this process;
 *    the clock runs from that commit until the receiver holds every event id: signed deliveries per
 *    second. The server learns of a foreign commit at its next poll, up to WEBHOOK_POLL_MS (1 s) in.
 * 4. Latency through the API: WEBHOOK_PROBES contacts created one at a time (every 20 ms) with
 *    POST /contacts; API-call-to-receipt is the time from sending the request to the receiver reading
 *    the contact.updated delivery. The commit wakes the server's worker at once. p50/p95/p99.
 * 5. Latency of foreign commits: WEBHOOK_FOREIGN_PROBES single events inserted into the outbox by this
 *    process (as an API-only replica would); commit-to-receipt is bounded by the server's poll. Each
 *    probe is inserted 20 ms after the previous receipt, just after a poll: near the worst case.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer } from "node:net"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { freshDatabase, startPostgres } from "../../test/support/postgres.ts"

const root = join(import.meta.dirname, "..", "..")
const EVENTS = Number(process.env.WEBHOOK_EVENTS ?? 20_000)
const PROBES = Number(process.env.WEBHOOK_PROBES ?? 200)
const FOREIGN_PROBES = Number(process.env.WEBHOOK_FOREIGN_PROBES ?? 20)

const freePort = () =>
  new Promise<number>((done) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number }
      s.close(() => done(port))
    })
  })

const pct = (xs: Array<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
}

const main = async () => {
  const cluster = process.env.BENCH_DATABASE_URL ? null : await startPostgres()
  const baseUrl = process.env.BENCH_DATABASE_URL ?? cluster?.url
  if (!baseUrl) throw new Error("No Postgres: set BENCH_DATABASE_URL or install Postgres binaries")
  const db = await freshDatabase(baseUrl, "benchwh")
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-benchwh-"))
  let server: ChildProcess | undefined
  const receiver = createHttpServer()
  try {
    // The receiver: record when each event id first arrives.
    const received = new Map<string, number>()
    let total = 0
    let waiter: (() => void) | undefined
    let want = 0
    receiver.on("request", (req, res) => {
      req.resume()
      req.on("end", () => {
        const id = String(req.headers["webhook-id"])
        total++
        if (!received.has(id)) received.set(id, performance.now())
        res.writeHead(204).end()
        if (waiter && received.size >= want) waiter()
      })
    })
    const receiverPort = await freePort()
    await new Promise<void>((r) => receiver.listen(receiverPort, "127.0.0.1", () => r()))

    const port = await freePort()
    server = spawn(join(root, "node_modules/.bin/tsx"), ["apps/server/node.ts"], {
      cwd: root,
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: db.url, DATA_DIR: dataDir, OUTBOUND_ALLOW_PRIVATE: "true", RATE_LIMIT_PER_MINUTE: "1000000" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    server.stdout!.on("data", (d) => (out += d))
    while (!/Listening on/.test(out)) await new Promise((r) => setTimeout(r, 100))
    const key = /(svc_test_[0-9A-Za-z]{40})/.exec(out)![1]!
    const hook = await fetch(`http://127.0.0.1:${port}/v1/api/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook`, events: ["*"] })
    })
    if (hook.status !== 201) throw new Error(`endpoint creation failed: ${hook.status} ${await hook.text()}`)

    const client = new pg.Client({ connectionString: db.url })
    // Dropping the database at the end terminates this connection; that must not crash the run.
    client.on("error", () => undefined)
    await client.connect()
    const { rows } = await client.query("SELECT id FROM workspaces LIMIT 1")
    const workspaceId = rows[0].id as string
    const idOf = (uuid: string) => `evt_${uuid.replace(/-/g, "")}`

    // Throughput.
    const ids = Array.from({ length: EVENTS }, () => randomUUID())
    want = EVENTS
    const done = new Promise<void>((r) => (waiter = r))
    await client.query("BEGIN")
    for (let i = 0; i < ids.length; i += 5000) {
      const chunk = ids.slice(i, i + 5000)
      await client.query(
        `INSERT INTO outbox_events (id, workspace_id, type, data, created_at)
         SELECT u, $1, 'contact.updated', jsonb_build_object('contactId', u, 'change', 'created'), now() FROM unnest($2::uuid[]) u`,
        [workspaceId, chunk]
      )
    }
    await client.query("COMMIT")
    const t0 = performance.now()
    await done
    const seconds = (performance.now() - t0) / 1000
    const throughput = EVENTS / seconds

    /** Waits until the receiver holds one more delivery than `before`; returns when it arrived. */
    const nextReceipt = async (before: number) => {
      want = before + 1
      await new Promise<void>((r) => {
        waiter = r
        if (received.size >= want) r()
      })
      return Math.max(...[...received.values()].slice(before))
    }

    // API-call-to-receipt, one contact at a time: the event commits in the server's own process.
    const apiLatencies: Array<number> = []
    for (let i = 0; i < PROBES; i++) {
      const before = received.size
      const sent = performance.now()
      const res = await fetch(`http://127.0.0.1:${port}/v1/api/contacts`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ firstName: `Probe ${i}` })
      })
      if (res.status !== 201) throw new Error(`contact creation failed: ${res.status} ${await res.text()}`)
      apiLatencies.push((await nextReceipt(before)) - sent)
      await new Promise((r) => setTimeout(r, 20))
    }

    // Commit-to-receipt of events committed by another process, one at a time.
    const foreignLatencies: Array<number> = []
    for (let i = 0; i < FOREIGN_PROBES; i++) {
      const id = randomUUID()
      const before = received.size
      await client.query(
        `INSERT INTO outbox_events (id, workspace_id, type, data, created_at) VALUES ($1::uuid, $2, 'contact.deleted', jsonb_build_object('contactId', $3::text), now())`,
        [id, workspaceId, id]
      )
      const committed = performance.now()
      await nextReceipt(before)
      foreignLatencies.push(received.get(idOf(id))! - committed)
      await new Promise((r) => setTimeout(r, 20))
    }
    await client.end()

    console.log("\nWebhook delivery benchmark (one server process, Postgres, local receiver)")
    console.log(`  node ${process.version}, ${cpus().length} cpus`)
    const spread = (xs: Array<number>) => `p50 ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms`
    console.log(`  throughput: ${EVENTS} events delivered in ${seconds.toFixed(2)} s = ${throughput.toFixed(0)} signed deliveries/s (${total - EVENTS - PROBES - FOREIGN_PROBES} duplicate receipts)`)
    console.log(`  API-call-to-receipt over ${PROBES} contacts created one at a time: ${spread(apiLatencies)}`)
    console.log(`  commit-to-receipt over ${FOREIGN_PROBES} events committed by another process (bounded by the poll): ${spread(foreignLatencies)}`)
  } finally {
    server?.kill("SIGTERM")
    await new Promise((r) => setTimeout(r, 1000))
    receiver.close()
    await db.drop().catch(() => undefined)
    await cluster?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main().catch((e) => {
  console.error("benchmark failed:", e)
  process.exitCode = 1
})
