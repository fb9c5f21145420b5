/**
 * `npm run bench:boot`: boot time and memory of the server as `npm start` runs it. BOOTS (3) boots
 * on the embedded database (the first on a fresh DATA_DIR, the rest warm on the same one), and as
 * many on Postgres when DATABASE_URL is set. Each boot reports the time from spawning `npm start`
 * to "Listening", the server process's resident memory (VmRSS of the node process `npm start`
 * started, not npm's) after IDLE_MS of idleness, and again after REQUESTS (2,000) authenticated
 * GETs at CONCURRENCY (10) plus IDLE_MS.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { alive } from "../../test/support/server.ts"
import { fmt, freePort, intEnv, log, root, sleep } from "./harness.ts"

const BOOTS = intEnv("BOOTS", 3)
const REQUESTS = intEnv("REQUESTS", 2_000)
const CONCURRENCY = intEnv("CONCURRENCY", 10)
const IDLE_MS = intEnv("IDLE_MS", 3_000)

/** Resident memory of a process in MB, from /proc (Linux). */
const rssMb = (pid: number) => {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  return kb === undefined ? Number.NaN : Number(kb) / 1024
}

/** The node process under `pid` (npm's child, or its shell's child when npm runs the script through sh). */
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
    if (comm === "node" || comm === "MainThread") return child
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

const bootOnce = async (env: Record<string, string>, key: string | null): Promise<Boot> => {
  const port = await freePort()
  const started = performance.now()
  // DATABASE_URL only where the mode sets it: without it, the embedded database.
  const { DATABASE_URL: _, ...inherited } = process.env
  const npm = spawn("npm", ["start"], {
    cwd: root,
    env: { ...inherited, PORT: String(port), HOST: "127.0.0.1", NO_COLOR: "1", RATE_LIMIT_PER_MINUTE: "1000000", ...env },
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
    pid = serverPid(npm.pid!)
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
          const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
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

const run = async (mode: string, env: Record<string, string>) => {
  let key: string | null = null
  for (let i = 0; i < BOOTS; i++) {
    const boot = await bootOnce(env, key)
    key = boot.key
    const kind = i === 0 ? "first boot" : "warm boot "
    log(
      `${mode.padEnd(9)} ${kind}  ${fmt(boot.bootMs / 1000, 1).padStart(5)} s   idle RSS ${fmt(boot.idleMb).padStart(4)} MB   ` +
        `after ${fmt(REQUESTS)} GETs ${fmt(boot.loadedMb).padStart(4)} MB (${fmt(boot.reqPerSec)} req/s)`
    )
  }
}

log(`${BOOTS} boots per mode; RSS read ${IDLE_MS} ms after Listening and after the load; ${REQUESTS} GET /v1/api/contacts at ${CONCURRENCY} concurrent`)
const dataDir = mkdtempSync(join(tmpdir(), "switchboard-boot-"))
try {
  await run("embedded", { DATA_DIR: dataDir })
  const databaseUrl = process.env.DATABASE_URL
  // Postgres mode on the given database: its first boot is the first on that database only if it is empty.
  if (databaseUrl !== undefined && databaseUrl !== "") await run("postgres", { DATA_DIR: mkdtempSync(join(tmpdir(), "switchboard-boot-")), DATABASE_URL: databaseUrl })
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
