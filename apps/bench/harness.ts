/**
 * Plumbing shared by the benchmarks (main.ts, messages.ts): the database and first boot,
 * cleanup, child processes, single requests, autocannon load rounds (GET and POST) and CPU readings.
 */
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { freshDatabase, startPostgres } from "../../test/support/postgres.ts"

const here = dirname(fileURLToPath(import.meta.url))
export const root = join(here, "..", "..")
export const benchDir = here
const tsx = join(root, "node_modules", ".bin", "tsx")

/**
 * Seconds of load each server gets before its measured rounds (BENCH_WARMUP): long enough for both
 * to reach steady state from a cold start (docs/benchmarks.md, "How to read the figures"). Both
 * servers get the same warm-up.
 */
export const WARMUP_SECONDS = 10

export const intEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const n = Number(raw.replace(/[_,]/g, ""))
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number`)
  return Math.floor(n)
}

export const log = (line = "") => console.log(line)
export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "-"

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export interface Child {
  readonly name: string
  readonly port: number
  /** Process group id (the tsx wrapper's pid; node runs as its child in the same group). */
  readonly pid: number | undefined
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const children = new Set<ChildProcess>()
process.on("exit", () => {
  for (const child of children) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
})

/** The node flags `npm start` gives the server for `database` (apps/server/start.sh), so benchmarks run it as users do. */
export const startFlags = (database: "embedded" | "postgres"): ReadonlyArray<string> => {
  const script = readFileSync(join(root, "apps/server/start.sh"), "utf8")
  const line = new RegExp(`^${database.toUpperCase()}_FLAGS="([^"]*)"$`, "m").exec(script)
  if (line === null) throw new Error(`apps/server/start.sh sets no ${database.toUpperCase()}_FLAGS`)
  return line[1]!.split(" ").filter((f) => f !== "")
}

/**
 * Node flags for every server the benchmarks start on Postgres, service and baseline alike:
 * `npm start`'s. BENCH_NODE_FLAGS (space-separated) replaces them, to measure what another set costs.
 */
export const NODE_FLAGS = process.env["BENCH_NODE_FLAGS"] !== undefined
  ? process.env["BENCH_NODE_FLAGS"].split(" ").filter((f) => f !== "")
  : startFlags("postgres")

/**
 * Starts `script` under tsx in its own process group and waits until it answers HTTP; `cwd` is another
 * checkout, for A/B runs; `flags` are node's: the embedded benchmark passes `npm start`'s, a profile
 * NODE_FLAGS plus `--cpu-prof` (which NODE_OPTIONS refuses).
 */
export const startChild = async (
  name: string,
  script: string,
  env: Record<string, string>,
  port: number,
  cwd = root,
  flags: ReadonlyArray<string> = NODE_FLAGS
): Promise<Child> => {
  const child = spawn(tsx, [...flags, script], {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  children.add(child)
  let out = ""
  const keep = (chunk: Buffer) => {
    out = out.length < 64 * 1024 ? out + chunk.toString() : out
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  let exited: number | null = null
  const exit = new Promise<void>((resolve) =>
    child.on("exit", (code, signal) => {
      exited = code ?? (signal ? 128 : 1)
      children.delete(child)
      resolve()
    })
  )
  // a first embedded boot (PGlite initdb) on a loaded machine takes over a minute
  const deadline = Date.now() + 180_000
  for (;;) {
    if (exited !== null) throw new Error(`${name} exited (${exited}) before listening:\n${out}`)
    if (Date.now() > deadline) throw new Error(`${name} did not listen within 180 s:\n${out}`)
    const up = await new Promise<boolean>((resolve) => {
      const req = request({ host: "127.0.0.1", port, path: "/", method: "GET", timeout: 1000 }, (res) => {
        res.resume()
        resolve(true)
      })
      req.on("error", () => resolve(false))
      req.on("timeout", () => req.destroy())
      req.end()
    })
    if (up) break
    await sleep(200)
  }
  return {
    name,
    port,
    pid: child.pid,
    output: () => out,
    stop: async () => {
      if (exited !== null || child.pid === undefined) return
      try {
        process.kill(-child.pid, "SIGTERM")
      } catch {
        return
      }
      const timedOut = await Promise.race([exit.then(() => false), sleep(10_000).then(() => true)])
      if (timedOut) {
        try {
          process.kill(-child.pid, "SIGKILL")
        } catch {
          // gone
        }
        await exit
      }
    }
  }
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 })

/** One request, by default on a single keep-alive socket (sequential probes); `agent` for concurrent ones. */
export const call = (
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  agent: Agent = keepAlive
) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method,
        headers: body === undefined
          ? headers
          : { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
        agent
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(body)
  })

export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!

/** Each term's median latency, slowest first, from the latencies recorded per term. */
export const slowestTerms = (byTerm: ReadonlyMap<string, ReadonlyArray<number>>) =>
  [...byTerm].map(([term, ms]) => ({ term, median: percentile([...ms].sort((a, b) => a - b), 0.5) })).sort((a, b) =>
    b.median - a.median
  )

export interface Target<Server extends string = "service" | "baseline"> {
  /** "service", "baseline", or another server measured beside them (main.ts: the library floors). */
  readonly server: Server
  readonly port: number
  readonly headers: Record<string, string>
}

/** A load route: each request gets the next path (and body, for POST). */
export interface Route {
  readonly name: string
  readonly method: "GET" | "POST"
  readonly next: (target: Target<string>) => { readonly path: string; readonly body?: string }
}

export interface RoundFigures {
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly total: number
}

export const load = (target: Target<string>, route: Route, seconds: number, connections: number) =>
  new Promise<RoundFigures>((resolve, reject) => {
    const headers = route.method === "POST" ? { ...target.headers, "content-type": "application/json" } : target.headers
    autocannon(
      {
        url: `http://127.0.0.1:${target.port}`,
        connections,
        duration: seconds,
        headers,
        requests: [
          {
            method: route.method,
            headers,
            setupRequest: (req) => {
              const next = route.next(target)
              return next.body === undefined
                ? { ...req, path: next.path }
                : { ...req, path: next.path, body: next.body }
            }
          }
        ]
      },
      (error, result) => {
        if (error) return reject(error)
        resolve({
          reqPerSec: result.requests.mean,
          p50: result.latency.p50,
          p99: result.latency.p99,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          total: result.requests.total
        })
      }
    )
  })

/** user+system CPU seconds of live processes matching `select(pgrp, ppid)`, from /proc (Linux; NaN elsewhere). */
const procCpuSeconds = (select: (pgrp: number, ppid: number) => boolean) => {
  let ticks = 0
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
        // fields after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        if (select(Number(f[2]), Number(f[1]))) ticks += Number(f[11]) + Number(f[12])
      } catch {
        // process went away
      }
    }
  } catch {
    return NaN
  }
  return ticks / 100
}

/** CPU seconds used so far by the processes of a process group. */
export const groupCpuSeconds = (pgid: number) => procCpuSeconds((pgrp) => pgrp === pgid)
/**
 * CPU seconds used so far by a process's children, live (from /proc) and exited (the parent's
 * cutime/cstime): the Postgres backends and background workers of a postmaster.
 */
export const childrenCpuSeconds = (ppid: number) => {
  try {
    const stat = readFileSync(`/proc/${ppid}/stat`, "utf8")
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(f[13]) + Number(f[14])) / 100 + procCpuSeconds((_, parent) => parent === ppid)
  } catch {
    return NaN
  }
}

/** Runs a benchmark's `main` and exits: 0 when it resolves, 1 (with the error printed) when it fails. */
export const runMain = (main: () => Promise<void>) =>
  main().then(
    () => process.exit(0),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )

/** Steps run last-first when the benchmark ends, fails or is interrupted (Ctrl-C). */
export const cleanupStack = () => {
  const steps: Array<() => Promise<void>> = []
  const run = async () => {
    while (steps.length > 0) {
      const step = steps.pop()!
      await step().catch((error) => console.error("cleanup:", error))
    }
  }
  process.once("SIGINT", () => {
    log("\ninterrupted, cleaning up")
    void run().finally(() => process.exit(130))
  })
  return { push: (step: () => Promise<void>) => void steps.push(step), run }
}

export interface FirstBoot {
  readonly databaseUrl: string
  /** What every service process of the run is started with. */
  readonly serviceEnv: Record<string, string>
  readonly adminToken: string
  /** The test key printed at first boot. */
  readonly key: string
  readonly workspaceId: string
  /** A client on the benchmark database, for seeding and checks. */
  readonly db: pg.Client
  /** The first-boot service, still running for admin calls: stop it before loading. */
  readonly boot: Child
  /** The database, key and data came from an earlier run's BENCH_KEEP_DIR. */
  readonly reused: boolean
}

/**
 * Postgres (a fresh database on BENCH_DATABASE_URL, or a throwaway cluster), a data dir, and the
 * service's first boot: migrations, the workspace and its test key, through the real code path.
 */
export const firstBoot = async (
  cleanups: ReturnType<typeof cleanupStack>,
  names: { readonly database: string; readonly prefix: string; readonly settings?: ReadonlyArray<string> }
): Promise<FirstBoot> => {
  let databaseUrl: string
  const external = process.env["BENCH_DATABASE_URL"]
  // BENCH_KEEP_DIR: the cluster, the service's DATA_DIR and the first boot's credentials live there
  // and are used again by the next run (a 10M-row seed is made once and measured several times).
  const keepDir = process.env["BENCH_KEEP_DIR"] || undefined
  const kept = keepDir === undefined ? undefined : join(keepDir, "first-boot.json")
  if (external !== undefined && external !== "") {
    const fresh = await freshDatabase(external, names.prefix)
    cleanups.push(fresh.drop)
    databaseUrl = fresh.url
    log(`database: fresh database on BENCH_DATABASE_URL (${new URL(fresh.url).pathname.slice(1)})`)
  } else {
    // Up to six servers side by side (the reads benchmark: the service, the bare server, four
    // floors), each with a pool of 20 that fills under load: more than Postgres's default 100. A
    // server given as BENCH_DATABASE_URL needs as many.
    const handle = await startPostgres({
      fresh: true,
      database: names.database,
      settings: ["max_connections=200", ...(names.settings ?? [])],
      keepIn: keepDir === undefined ? undefined : join(keepDir, "postgres")
    })
    if (handle === null) throw new Error("no Postgres binaries found; set BENCH_DATABASE_URL")
    cleanups.push(handle.stop)
    databaseUrl = handle.url
    log(`database: ${keepDir === undefined ? "throwaway" : "kept"} cluster ${databaseUrl}`)
  }
  const dataDir = keepDir === undefined
    ? mkdtempSync(join(tmpdir(), `switchboard-${names.prefix}-`))
    : join(keepDir, "data")
  if (keepDir === undefined) cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  const before = kept !== undefined && existsSync(kept)
    ? JSON.parse(readFileSync(kept, "utf8")) as { adminToken: string; key: string }
    : undefined
  const adminToken = before?.adminToken ?? randomBytes(24).toString("hex")
  const serviceEnv = {
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: adminToken,
    RATE_LIMIT_PER_MINUTE: "100000000",
    DATA_DIR: dataDir
  }

  const boot = await startChild("service (first boot)", "apps/server/node.ts", serviceEnv, await freePort())
  cleanups.push(boot.stop)
  // The key is printed once the server listens (apps/server/main.ts BootstrapLive), a moment after it answers.
  const deadline = Date.now() + 60_000
  const printed = () => /svc_test_[0-9A-Za-z]{40}/.exec(boot.output())?.[0]
  let key = before?.key ?? printed()
  while (key === undefined && Date.now() < deadline) {
    await sleep(100)
    key = printed()
  }
  if (key === undefined) throw new Error(`no first-boot test key in the service output:\n${boot.output()}`)
  if (kept !== undefined && before === undefined) writeFileSync(kept, JSON.stringify({ adminToken, key }))
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  cleanups.push(() => db.end())
  const workspaces = await db.query<{ id: string }>("SELECT id FROM workspaces")
  const workspaceId = workspaces.rows[0]?.id
  if (workspaces.rows.length !== 1 || workspaceId === undefined) {
    throw new Error(`expected one workspace, found ${workspaces.rows.length}`)
  }
  return { databaseUrl, serviceEnv, adminToken, key, workspaceId, db, boot, reused: before !== undefined }
}
