/**
 * `npm run bench:boot`: boot time and memory of the server as `npm start` runs it (the esbuild
 * bundle), against the same server run through tsx's loader with the same Node flags (the baseline),
 * and as `npm run start:deno` runs it (Deno on its own bundle, against `npm start`), boots of the
 * three alternating. BOOTS (3) boots of each on the embedded database (the first on a
 * fresh DATA_DIR, the rest warm on the same one), and as many on Postgres when DATABASE_URL is set.
 * Each boot reports the time from spawning the command to "Listening", the server process's
 * resident memory (VmRSS of the node or deno process, not npm's) after IDLE_MS of idleness, and again
 * after REQUESTS (2,000) authenticated GETs at CONCURRENCY (10) plus IDLE_MS. EMBEDDED=0 skips the
 * embedded database, DENO=0 the Deno boots. Headline figures go to
 * apps/bench/results/figures-boot.json.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { alive } from "../../test/support/server.ts"
import { type Figure, writeFigures } from "./figures.ts"
import { fmt, freePort, intEnv, log, root, sleep, startFlags } from "./harness.ts"

const BOOTS = intEnv("BOOTS", 3)
const REQUESTS = intEnv("REQUESTS", 2_000)
const CONCURRENCY = intEnv("CONCURRENCY", 10)
const IDLE_MS = intEnv("IDLE_MS", 3_000)
/** EMBEDDED=0 skips the embedded database (with DATABASE_URL set: Postgres only). */
const EMBEDDED = process.env.EMBEDDED !== "0"
const DENO = process.env.DENO !== "0"

/** Resident memory of a process in MB, from /proc (Linux). */
const rssMb = (pid: number) => {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  return kb === undefined ? Number.NaN : Number(kb) / 1024
}

/** The server process under `pid` (npm's child, or its shell's child when npm runs the script through sh). */
const serverPid = (pid: number): number | undefined => {
  const children = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8")
        // Fields after the command name (which may hold spaces): state, ppid, ...
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
        return ppid === pid ? [Number(d)] : []
      } catch {
        return []
      }
    })
  for (const child of children) {
    const comm = readFileSync(`/proc/${child}/comm`, "utf8").trim()
    if (comm === "node" || comm === "MainThread" || comm === "deno") return child
    const deeper = serverPid(child)
    if (deeper !== undefined) return deeper
  }
  return undefined
}

interface Boot {
  readonly bootMs: number
  readonly idleMb: number
  readonly loadedMb: number
  readonly reqPerSec: number
  readonly key: string | null
}

/**
 * What starts the server: `npm start`; its baseline, Node running the TypeScript entry point through
 * tsx's loader; or `npm run start:deno`.
 */
type Runner = "npm start" | "tsx" | "start:deno"
/** The command of `runner`; tsx gets the node flags `npm start` gives the server on that database. */
const command = (runner: Runner, env: Record<string, string>): ReadonlyArray<string> =>
  runner === "npm start"
    ? ["npm", "start"]
    : runner === "start:deno"
    ? ["npm", "run", "start:deno"]
    : [
      process.execPath,
      ...startFlags(env["DATABASE_URL"] === undefined ? "embedded" : "postgres"),
      "--import",
      "tsx",
      "apps/server/node.ts"
    ]

/** A GET, sent again when the connection drops (a kept-alive connection the server closed as it was reused, on a loaded machine). */
const get = async (url: string, token: string, attempts = 3): Promise<Response> => {
  try {
    return await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  } catch (e) {
    if (attempts <= 1) throw e
    return get(url, token, attempts - 1)
  }
}

const bootOnce = async (runner: Runner, env: Record<string, string>, key: string | null): Promise<Boot> => {
  const port = await freePort()
  const started = performance.now()
  // DATABASE_URL only where the mode sets it: without it, the embedded database.
  const { DATABASE_URL: _, ...inherited } = process.env
  const [program, ...args] = command(runner, env)
  const npm = spawn(program!, args, {
    cwd: root,
    env: {
      ...inherited,
      PORT: String(port),
      HOST: "127.0.0.1",
      NO_COLOR: "1",
      RATE_LIMIT_PER_MINUTE: "1000000",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let out = ""
  npm.stdout!.on("data", (d) => (out += d))
  npm.stderr!.on("data", (d) => (out += d))
  const exited = new Promise<void>((done) => npm.once("exit", () => done()))
  let pid: number | undefined
  try {
    while (!/Listening on/.test(out)) {
      if (npm.exitCode !== null) throw new Error(`server exited early:\n${out}`)
      if (performance.now() - started > 120_000) throw new Error(`server did not start in 120 s:\n${out}`)
      await sleep(20)
    }
    const bootMs = performance.now() - started
    pid = runner === "tsx" ? npm.pid! : serverPid(npm.pid!)
    if (pid === undefined) throw new Error("no server process under npm")
    await sleep(IDLE_MS)
    const idleMb = rssMb(pid)
    const token = key ?? /(svc_test_[0-9A-Za-z]{40})/.exec(out)?.[1] ?? null
    if (token === null) throw new Error(`no test key printed:\n${out}`)
    const url = `http://127.0.0.1:${port}/v1/api/contacts?limit=10`
    let sent = 0
    const loadStarted = performance.now()
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (sent < REQUESTS) {
          sent++
          const res = await get(url, token)
          if (res.status !== 200) throw new Error(`GET contacts answered ${res.status}: ${await res.text()}`)
          await res.arrayBuffer()
        }
      })
    )
    const reqPerSec = REQUESTS / ((performance.now() - loadStarted) / 1000)
    await sleep(IDLE_MS)
    return { bootMs, idleMb, loadedMb: rssMb(pid), reqPerSec, key: token }
  } finally {
    if (npm.exitCode === null) process.kill(npm.pid!, "SIGTERM")
    await exited
    // An npm that does not relay SIGTERM to the server leaves it running: say so, and stop it.
    if (pid !== undefined && alive(pid)) {
      log(`  server ${pid} outlived npm's SIGTERM; stopping it`)
      process.kill(pid, "SIGTERM")
      while (alive(pid)) await sleep(50)
    }
  }
}

const runners: ReadonlyArray<Runner> = DENO ? ["npm start", "tsx", "start:deno"] : ["npm start", "tsx"]
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

/**
 * BOOTS boots of each runner, alternating (which goes first alternates too); the boots by runner.
 * `shared`: both runners on one database (Postgres), so the test key is whichever printed it.
 */
const run = async (mode: string, env: (runner: Runner) => Record<string, string>, shared = false) => {
  const boots: Record<Runner, Array<Boot>> = { "npm start": [], tsx: [], "start:deno": [] }
  for (let i = 0; i < BOOTS; i++) {
    for (const runner of i % 2 === 0 ? runners : [...runners].reverse()) {
      const key = (shared ? runners.map((r) => boots[r][0]).find((b) => b !== undefined) : boots[runner][0])?.key ??
        null
      const boot = await bootOnce(runner, env(runner), key)
      boots[runner].push(boot)
      const kind = i === 0 ? "first boot" : "warm boot "
      log(
        `${mode.padEnd(9)} ${runner.padEnd(10)} ${kind}  ${fmt(boot.bootMs / 1000, 1).padStart(5)} s   idle RSS ${
          fmt(boot.idleMb).padStart(4)
        } MB   ` +
          `after ${fmt(REQUESTS)} GETs ${fmt(boot.loadedMb).padStart(4)} MB (${fmt(boot.reqPerSec)} req/s)`
      )
    }
  }
  return boots
}

const baselineOf = {
  "npm start": { runner: "tsx", label: "the same server through tsx's loader" },
  "start:deno": { runner: "npm start", label: "npm start (Node) in the same run" }
} as const

/** A lower-is-better figure of `runner`'s boots against the same of its baseline's boots. */
const figure = (
  name: string,
  unit: string,
  value: number,
  baseline: { readonly label: string; readonly value: number },
  target?: number
): Figure => ({
  figure: name,
  value: Math.round(value),
  unit,
  baseline: { label: baseline.label, value: Math.round(baseline.value) },
  ratio: Number((baseline.value / value).toFixed(2)),
  ...(target === undefined ? {} : { target: `< ${target} ${unit}`, met: value < target })
})

const figuresOf = (mode: string, boots: Record<Runner, Array<Boot>>, idleTarget?: number): Array<Figure> => {
  const [first, warm] = [(r: Runner) => boots[r].slice(0, 1), (r: Runner) => boots[r].slice(1)]
  const of = (pick: (r: Runner) => Array<Boot>, field: keyof Omit<Boot, "key">) => (r: Runner) =>
    mean(pick(r).map((b) => b[field]))
  const rowsOf = (runner: keyof typeof baselineOf) => {
    const baseline = baselineOf[runner]
    const suffix = runner === "start:deno" ? ", Deno" : ""
    const row = (name: string, unit: string, value: (r: Runner) => number, target?: number) =>
      figure(`${name} (${mode}${suffix})`, unit, value(runner), {
        label: baseline.label,
        value: value(baseline.runner)
      }, target)
    return [
      row("idle RSS, first boot", "MB", of(first, "idleMb"), idleTarget),
      ...(BOOTS > 1
        ? [
          row("idle RSS, warm boots (mean)", "MB", of(warm, "idleMb"), idleTarget),
          row(`RSS after ${REQUESTS} GETs, warm boots (mean)`, "MB", of(warm, "loadedMb")),
          row("boot to Listening, warm boots (mean)", "ms", of(warm, "bootMs"))
        ]
        : []),
      row("boot to Listening, first boot", "ms", of(first, "bootMs"))
    ]
  }
  return [...rowsOf("npm start"), ...(DENO ? rowsOf("start:deno") : [])]
}

log(
  `${BOOTS} boots per mode and runner; RSS read ${IDLE_MS} ms after Listening and after the load; ${REQUESTS} GET /v1/api/contacts at ${CONCURRENCY} concurrent`
)
// Built before the first boot, so no boot's time includes a build.
execFileSync(process.execPath, ["apps/server/build.mjs", "server", "console"], { cwd: root, stdio: "inherit" })
if (DENO) execFileSync(process.execPath, ["apps/server/build.mjs", "deno"], { cwd: root, stdio: "inherit" })
const startedAt = new Date().toISOString()
const dataDirs: Array<string> = []
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-boot-"))
  dataDirs.push(dir)
  return dir
}
try {
  const figures: Array<Figure> = []
  if (EMBEDDED) {
    const embeddedDirs = { "npm start": freshDir(), tsx: freshDir(), "start:deno": freshDir() }
    figures.push(...figuresOf("embedded", await run("embedded", (runner) => ({ DATA_DIR: embeddedDirs[runner] })), 250))
  }
  const databaseUrl = process.env.DATABASE_URL
  // Postgres mode on the given database, both runners on it (and on one DATA_DIR, for its secrets key):
  // only the first boot of all is the first on that database, and only if it was empty.
  if (databaseUrl !== undefined && databaseUrl !== "") {
    const postgresDir = freshDir()
    figures.push(
      ...figuresOf(
        "Postgres",
        await run("postgres", () => ({ DATA_DIR: postgresDir, DATABASE_URL: databaseUrl }), true)
      )
    )
  }
  log(`figures: ${writeFigures({ benchmark: "boot", startedAt, host: hostname(), figures })}`)
} finally {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
}
