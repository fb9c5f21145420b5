/**
 * `npm run bench:webhooks`: webhook delivery from one server process to a local receiver.
 * Prints figures and writes them (figures-webhooks.json); asserts nothing.
 *
 * 1. Postgres: a throwaway cluster with pg_stat_statements (BENCH_DATABASE_URL instead: a fresh
 *    database on it, without statement counts). Each server run gets a fresh database.
 * 2. Per run: the server (the worker; OUTBOUND_ALLOW_PRIVATE=true), an API-only replica of it
 *    (WEBHOOK_WORKER=false) on the same database, and an endpoint subscribed to `*` pointing at a
 *    minimal node:http receiver in this process.
 * 3. Throughput: WEBHOOK_EVENTS events written to the outbox in one transaction by this process (with
 *    the NOTIFY a replica's insert sends); signed deliveries per second from the first receipt to the
 *    last. Also counted: SQL statements and transactions per delivered event (pg_stat_statements,
 *    the server's role only: this process connects as another role), and with WEBHOOK_CPU_PROF=<dir>
 *    the server runs under --cpu-prof and the profile is cut to this phase: where its CPU went.
 * 4. API commits: WEBHOOK_PROBES contacts created one at a time (every 20 ms) with POST /contacts on
 *    the server; API-call-to-receipt: from sending the request to the receiver reading the event.
 * 5. Foreign commits: WEBHOOK_FOREIGN_PROBES contacts created the same way through the replica: the
 *    event is committed by another process, and the worker learns of it by LISTEN/NOTIFY (or its poll).
 *
 * WEBHOOK_BASELINE_DIR=<another checkout> (a `git archive` of the earlier commit with node_modules
 * linked in) runs the same phases on that checkout's server too, alternating rounds with this one
 * (WEBHOOK_ROUNDS each, default 2), so the figures carry a baseline measured in the same run.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { hostname, loadavg } from "node:os"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import pg from "pg"
import { freshDatabase, startPostgres } from "../../test/support/postgres.ts"
import { type Figure, writeFigures } from "./figures.ts"
import { fmt, freePort, intEnv, log, NODE_FLAGS, percentile, root, sleep } from "./harness.ts"
import { monotonicMicros, summarizeWindow, type WindowSummary } from "./profileWindow.ts"

const EVENTS = intEnv("WEBHOOK_EVENTS", 20_000)
const PROBES = intEnv("WEBHOOK_PROBES", 200)
const FOREIGN_PROBES = intEnv("WEBHOOK_FOREIGN_PROBES", 30)
const BASELINE_DIR = process.env["WEBHOOK_BASELINE_DIR"] ? resolve(process.env["WEBHOOK_BASELINE_DIR"]) : undefined
const ROUNDS = intEnv("WEBHOOK_ROUNDS", BASELINE_DIR ? 2 : 1)
const PROFILE_DIR = process.env["WEBHOOK_CPU_PROF"] ? resolve(process.env["WEBHOOK_CPU_PROF"]) : undefined
/** The channel the outbox insert notifies (adapters/sql/outbox.ts); a baseline that does not listen ignores it. */
const OUTBOX_CHANNEL = "outbox_events"
const BENCH_ROLE = "webhook_bench"

interface Run {
  readonly label: string
  readonly round: number
  readonly deliveriesPerSecond: number
  readonly commitToLastMs: number
  readonly duplicates: number
  /** Connections opened to the receiver by the end of the throughput phase. */
  readonly connections: number
  readonly statementsPerEvent: number | null
  readonly transactionsPerEvent: number | null
  readonly topStatements: ReadonlyArray<{ readonly calls: number; readonly query: string }>
  readonly api: ReadonlyArray<number>
  readonly foreign: ReadonlyArray<number>
  readonly profile: WindowSummary | null
  readonly loadBefore: ReadonlyArray<number>
  readonly loadAfter: ReadonlyArray<number>
}

interface Server {
  readonly port: number
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/** The server with `npm start`'s node flags on Postgres (through tsx's loader, so a baseline checkout runs as it is), in `cwd`, until it prints "Listening on". */
const startServer = async (
  cwd: string,
  env: Record<string, string>,
  nodeFlags: ReadonlyArray<string> = []
): Promise<Server> => {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [
    ...NODE_FLAGS,
    ...nodeFlags,
    "--import",
    "tsx",
    "apps/server/node.ts"
  ], {
    cwd,
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      NO_COLOR: "1",
      RATE_LIMIT_PER_MINUTE: "1000000",
      OUTBOUND_ALLOW_PRIVATE: "true"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  child.stderr!.on("data", (d) => (out += d))
  const exited = new Promise<void>((r) => child.on("exit", () => r()))
  const deadline = Date.now() + 90_000
  while (!/Listening on/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${out}`)
    await sleep(100)
  }
  return {
    port,
    output: () => out,
    stop: async () => {
      child.kill("SIGTERM")
      await Promise.race([exited, sleep(15_000).then(() => child.kill("SIGKILL"))])
    }
  }
}

const withUser = (url: string, user: string) => {
  const u = new URL(url)
  u.username = user
  return u.toString()
}

const runOnce = async (
  label: string,
  cwd: string,
  round: number,
  baseUrl: string,
  statsAvailable: boolean
): Promise<Run> => {
  const loadBefore = loadavg()
  const db = await freshDatabase(baseUrl, "benchwh")
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-benchwh-"))
  const profileDir = PROFILE_DIR && join(PROFILE_DIR, `${label}-${round}`)
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const servers: Array<Server> = []
  const receiver = createHttpServer()
  const client = new pg.Client({ connectionString: withUser(db.url, BENCH_ROLE) })
  // Dropping the database at the end terminates this connection; that must not crash the run.
  client.on("error", () => undefined)
  try {
    // The receiver: when each event id first arrives, and how many arrived in all.
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
    // Connections the server opened to the receiver: kept alive, a handful for the whole run.
    let connections = 0
    receiver.on("connection", () => connections++)
    const receiverPort = await freePort()
    await new Promise<void>((r) => receiver.listen(receiverPort, "127.0.0.1", () => r()))

    const server = await startServer(
      cwd,
      { DATABASE_URL: db.url, DATA_DIR: dataDir },
      profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []
    )
    servers.push(server)
    const key = /(svc_test_[0-9A-Za-z]{40})/.exec(server.output())![1]!
    const replica = await startServer(cwd, { DATABASE_URL: db.url, DATA_DIR: dataDir, WEBHOOK_WORKER: "false" })
    servers.push(replica)
    const api = (port: number, path: string, body: unknown) =>
      fetch(`http://127.0.0.1:${port}/v1/api${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    const hook = await api(server.port, "/webhooks", { url: `http://127.0.0.1:${receiverPort}/hook`, events: ["*"] })
    if (hook.status !== 201) throw new Error(`endpoint creation failed: ${hook.status} ${await hook.text()}`)

    await client.connect()
    const { rows } = await client.query("SELECT id FROM workspaces LIMIT 1")
    const workspaceId = rows[0].id as string

    // Throughput.
    const ids = Array.from({ length: EVENTS }, () => randomUUID())
    want = EVENTS
    const done = new Promise<void>((r) => (waiter = r))
    if (statsAvailable) await client.query("SELECT pg_stat_statements_reset()")
    const from = monotonicMicros()
    await client.query("BEGIN")
    for (let i = 0; i < ids.length; i += 5000) {
      await client.query(
        `INSERT INTO outbox_events (id, workspace_id, type, data, created_at)
         SELECT u, $1, 'contact.updated', jsonb_build_object('contactId', u, 'change', 'created'), now() FROM unnest($2::uuid[]) u`,
        [workspaceId, ids.slice(i, i + 5000)]
      )
    }
    await client.query(`SELECT pg_notify('${OUTBOX_CHANNEL}', '1')`)
    await client.query("COMMIT")
    const committed = performance.now()
    await done
    const to = monotonicMicros()
    const times = [...received.values()]
    const first = Math.min(...times)
    const last = Math.max(...times)
    const deliveriesPerSecond = (EVENTS - 1) / ((last - first) / 1000)
    const duplicates = total - EVENTS
    const throughputConnections = connections

    let statementsPerEvent: number | null = null
    let transactionsPerEvent: number | null = null
    let topStatements: Run["topStatements"] = []
    if (statsAvailable) {
      // Every statement of the server and replica (role postgres) on this database since the reset.
      const stats = await client.query<{ calls: string; query: string }>(
        `SELECT s.calls, s.query FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid JOIN pg_database d ON d.oid = s.dbid
         WHERE r.rolname <> $1 AND d.datname = current_database() ORDER BY s.calls DESC`,
        [BENCH_ROLE]
      )
      const calls = stats.rows.map((r) => ({
        calls: Number(r.calls),
        query: r.query.replace(/\s+/g, " ").slice(0, 110)
      }))
      statementsPerEvent = calls.reduce((s, r) => s + r.calls, 0) / EVENTS
      transactionsPerEvent = calls.filter((r) => /^commit/i.test(r.query)).reduce((s, r) => s + r.calls, 0) / EVENTS
      topStatements = calls.slice(0, 8)
    }

    /** Waits until the receiver holds one more delivery than `before`; returns when it arrived. */
    const nextReceipt = async (before: number) => {
      want = before + 1
      await new Promise<void>((r) => {
        waiter = r
        if (received.size >= want) r()
      })
      return Math.max(...[...received.values()].slice(before))
    }
    const probe = async (port: number, count: number, name: string) => {
      const latencies: Array<number> = []
      for (let i = 0; i < count; i++) {
        const before = received.size
        const sent = performance.now()
        const res = await api(port, "/contacts", { firstName: `${name} ${i}` })
        if (res.status !== 201) throw new Error(`contact creation failed: ${res.status} ${await res.text()}`)
        latencies.push((await nextReceipt(before)) - sent)
        await sleep(20)
      }
      return latencies
    }
    const apiLatencies = await probe(server.port, PROBES, "Probe")
    const foreignLatencies = await probe(replica.port, FOREIGN_PROBES, "Replica probe")

    await client.end()
    for (const s of servers.splice(0).reverse()) await s.stop()
    let profile: WindowSummary | null = null
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith(".cpuprofile"))
      if (file) profile = summarizeWindow(join(profileDir, file), from, to)
    }
    return {
      label,
      round,
      deliveriesPerSecond,
      commitToLastMs: last - committed,
      duplicates,
      connections: throughputConnections,
      statementsPerEvent,
      transactionsPerEvent,
      topStatements,
      api: apiLatencies,
      foreign: foreignLatencies,
      profile,
      loadBefore,
      loadAfter: loadavg()
    }
  } finally {
    await client.end().catch(() => undefined)
    for (const s of servers.reverse()) await s.stop()
    receiver.closeAllConnections()
    receiver.close()
    await db.drop().catch(() => undefined)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / xs.length
const sorted = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)
const spread = (xs: ReadonlyArray<number>) => {
  const s = sorted(xs)
  return `p50 ${fmt(percentile(s, 0.5), 1)} ms, p95 ${fmt(percentile(s, 0.95), 1)} ms, p99 ${
    fmt(percentile(s, 0.99), 1)
  } ms`
}
const load = (l: ReadonlyArray<number>) => l.map((x) => x.toFixed(2)).join(" ")

const printRun = (r: Run) => {
  log(`\n[${r.label}, round ${r.round}] load average ${load(r.loadBefore)} -> ${load(r.loadAfter)}`)
  log(
    `  throughput: ${fmt(r.deliveriesPerSecond)} signed deliveries/s (first to last receipt); commit to last receipt ${
      fmt(r.commitToLastMs)
    } ms; ${r.duplicates} duplicate receipts; ${r.connections} connections opened`
  )
  if (r.statementsPerEvent !== null) {
    log(
      `  SQL per delivered event: ${fmt(r.statementsPerEvent, 3)} statements, ${
        fmt(r.transactionsPerEvent!, 3)
      } commits; most called:`
    )
    for (const s of r.topStatements) log(`    ${String(s.calls).padStart(7)}  ${s.query}`)
  }
  log(`  API-call-to-receipt (${r.api.length} contacts on the worker's process): ${spread(r.api)}`)
  log(
    `  foreign commits (${r.foreign.length} contacts through the API-only replica), call-to-receipt: ${
      spread(r.foreign)
    }`
  )
  if (r.profile) {
    const p = r.profile
    log(
      `  server CPU during the throughput phase: ${fmt(p.busyPercent)}% of a core over ${
        fmt(p.sampledMs)
      } ms sampled; self time by region:`
    )
    for (const s of p.regions) log(`    ${fmt(s.percent, 1).padStart(5)}%  ${s.name}`)
    log("  top functions (self):")
    for (const s of p.functions.slice(0, 12)) log(`    ${fmt(s.percent, 1).padStart(5)}%  ${s.name}`)
  }
}

const main = async () => {
  const cluster = process.env["BENCH_DATABASE_URL"]
    ? null
    : await startPostgres({ fresh: true, settings: ["shared_preload_libraries=pg_stat_statements"] })
  const baseUrl = process.env["BENCH_DATABASE_URL"] ?? cluster?.url
  if (!baseUrl) throw new Error("No Postgres: set BENCH_DATABASE_URL or install Postgres binaries")
  const startedAt = new Date().toISOString()
  try {
    const admin = new pg.Client({ connectionString: baseUrl })
    await admin.connect()
    await admin.query(
      `DO $$ BEGIN CREATE ROLE ${BENCH_ROLE} LOGIN SUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$`
    )
    // template1, so every fresh database has the view.
    const statsAvailable = cluster !== null
    if (statsAvailable) {
      const t1 = new pg.Client({ connectionString: new URL("/template1", baseUrl).toString() })
      await t1.connect()
      await t1.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
      await t1.end()
    }
    await admin.end()

    const checkouts = [...(BASELINE_DIR ? [{ label: "before", dir: BASELINE_DIR }] : []), { label: "after", dir: root }]
    const runs: Array<Run> = []
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of checkouts) {
        const run = await runOnce(c.label, c.dir, round, baseUrl, statsAvailable)
        printRun(run)
        runs.push(run)
      }
    }

    const of = (label: string) => runs.filter((r) => r.label === label)
    const after = of("after")
    const before = of("before")
    const rate = (rs: ReadonlyArray<Run>) => mean(rs.map((r) => r.deliveriesPerSecond))
    const pooled = (rs: ReadonlyArray<Run>, pick: (r: Run) => ReadonlyArray<number>, p: number) =>
      percentile(sorted(rs.flatMap(pick)), p)
    const baseline = (
      name: string,
      value: number
    ) => (before.length > 0 ? { baseline: { label: `${name}, before (${BASELINE_DIR})`, value } } : {})
    const lower = (value: number, base: number) => (before.length > 0 ? { ratio: base / value } : {})
    const figures: Array<Figure> = [
      {
        figure: "webhook deliveries/s, one process, local receiver (mean of rounds)",
        value: rate(after),
        unit: "deliveries/s",
        ...baseline("deliveries/s", rate(before)),
        ...(before.length > 0 ? { ratio: rate(after) / rate(before) } : {}),
        target: ">= 2,000 deliveries/s",
        met: rate(after) >= 2000
      },
      ...(["api", "foreign"] as const).flatMap((kind) =>
        ([0.5, 0.95] as const).map((p): Figure => {
          const value = pooled(after, (r) => r[kind], p)
          const base = pooled(before, (r) => r[kind], p)
          const name = `${kind === "api" ? "API commit" : "foreign commit (API-only replica)"} to receipt p${p * 100}`
          return {
            figure: name,
            value,
            unit: "ms",
            ...baseline(name, base),
            ...lower(value, base),
            ...(p === 0.5 ? { target: "p50 < 50 ms", met: value < 50 } : {})
          }
        })
      ),
      ...(after[0]?.statementsPerEvent != null
        ? [
          {
            figure: "SQL statements per delivered event (throughput phase)",
            value: mean(after.map((r) => r.statementsPerEvent!)),
            unit: "statements",
            ...baseline("statements", mean(before.map((r) => r.statementsPerEvent!))),
            ...lower(mean(after.map((r) => r.statementsPerEvent!)), mean(before.map((r) => r.statementsPerEvent!)))
          }
        ]
        : [])
    ]
    const file = writeFigures({ benchmark: "webhooks", startedAt, host: hostname(), figures })
    log("\nWebhook delivery benchmark (one server process, Postgres, local receiver)")
    log(
      `  node ${process.version}; ${EVENTS} events per throughput phase; ${ROUNDS} round(s) each; load average now ${
        load(loadavg())
      }`
    )
    if (before.length > 0) {
      const pairs = after.map((r, i) =>
        `${fmt(r.deliveriesPerSecond)}/${fmt(before[i]?.deliveriesPerSecond ?? NaN)} = ${
          fmt(r.deliveriesPerSecond / (before[i]?.deliveriesPerSecond ?? NaN), 2)
        }`
      )
      log(`  deliveries/s by round, after/before: ${pairs.join("; ")}`)
    }
    for (const f of figures) {
      const base = f.baseline ? ` (before ${fmt(f.baseline.value, 1)}, ratio ${fmt(f.ratio ?? NaN, 2)})` : ""
      const target = f.target ? ` target ${f.target}: ${f.met ? "met" : "NOT met"}` : ""
      log(`  ${f.figure}: ${fmt(f.value, 1)} ${f.unit}${base}${target}`)
    }
    log(`  figures written to ${file}`)
  } finally {
    await cluster?.stop()
  }
}

await main().catch((e) => {
  console.error("benchmark failed:", e)
  process.exitCode = 1
})
