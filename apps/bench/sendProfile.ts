/**
 * `npx tsx apps/bench/sendProfile.ts`: where a `POST /v1/api/messages` (test key) spends its work.
 * Prints figures; it never asserts.
 *
 * 1. SQL per send: with Postgres's `log_statement = all` on for a moment, BENCH_TRIPS sequential
 *    sends without an Idempotency-Key, then as many with a fresh key each, then as many replays;
 *    every statement the service sent in each phase is counted from the server log (BEGIN and
 *    COMMIT included) and divided by the sends. Round trips are counted apart, from the service's
 *    own statement histogram (`/metrics`): statements sent ahead of another in one write (a
 *    transaction's BEGIN and lock) are logged one by one but cost no round trip of their own.
 *    Needs the throwaway cluster (its log file).
 * 2. A CPU profile of the service under BENCH_SECONDS of send load (autocannon, BENCH_CONNECTIONS,
 *    after BENCH_WARMUP), written by `node --cpu-prof` when the service stops, then summarized: self
 *    time by function and package, inclusive time by function. Written to BENCH_PROFILE_DIR (a
 *    temporary directory by default) and apps/bench/results/send-profile.json.
 *
 * The database holds only what the sends write: the per-send work of the service does not depend
 * on the size of the tables (Postgres's does; `npm run bench:messages` measures that).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { summarizeProfile } from "./cpuProfile.ts"
import { writeFigures } from "./figures.ts"
import {
  benchDir,
  call,
  cleanupStack,
  firstBoot,
  fmt,
  freePort,
  intEnv,
  load,
  log,
  NODE_FLAGS,
  root,
  type Route,
  runMain,
  sleep,
  startChild,
  type Target,
  WARMUP_SECONDS
} from "./harness.ts"

const TRIPS = intEnv("BENCH_TRIPS", 20)
const SECONDS = intEnv("BENCH_SECONDS", 20)
const WARMUP = intEnv("BENCH_WARMUP", WARMUP_SECONDS)
const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50)
const NUMBER = "+14155550100"

const recipient = (i: number) => `+1415555${String(2000 + (i % 1000)).padStart(4, "0")}`
const body = (i: number) =>
  JSON.stringify({ to: recipient(i), body: `Your appointment is confirmed for tomorrow, ticket ${i}` })

/** A statement as logged, reduced to its shape: parameters and literals out, whitespace folded. */
const shape = (text: string) =>
  text
    .replace(/\s+/g, " ")
    .replace(/'[^']*'/g, "'…'")
    .slice(0, 110)

const main = async () => {
  const startedAt = new Date()
  const cleanups = cleanupStack()
  try {
    const { serviceEnv, adminToken, key, workspaceId, db, boot } = await firstBoot(cleanups, {
      database: "switchboard_bench_send",
      prefix: "benchsend"
    })
    const added = await call(boot.port, "POST", `/v1/admin/workspaces/${workspaceId}/numbers`, {
      authorization: `Bearer ${adminToken}`
    }, JSON.stringify({ e164: NUMBER }))
    await boot.stop()
    if (added.status !== 201) throw new Error(`admin addNumber: ${added.status} ${added.body}`)

    const profileDir = process.env["BENCH_PROFILE_DIR"] ?? mkdtempSync(join(tmpdir(), "switchboard-send-profile-"))
    mkdirSync(profileDir, { recursive: true })
    const service = await startChild("service", "apps/server/node.ts", serviceEnv, await freePort(), root, [
      ...NODE_FLAGS,
      "--cpu-prof",
      `--cpu-prof-dir=${profileDir}`
    ])
    cleanups.push(service.stop)
    const target: Target = { server: "service", port: service.port, headers: { authorization: `Bearer ${key}` } }
    let n = 0
    const send = async (headers: Record<string, string> = {}, i = n++) => {
      const r = await call(service.port, "POST", "/v1/api/messages", { ...target.headers, ...headers }, body(i))
      if (r.status !== 201) throw new Error(`send: ${r.status} ${r.body.slice(0, 200)}`)
      return r
    }
    for (let i = 0; i < 50; i++) await send() // every recipient's thread exists for some; code warm

    // 1. Round trips, from the server log of the throwaway cluster
    const dataDir = (await db.query<{ data_directory: string }>("SHOW data_directory")).rows[0]!.data_directory
    const logFile = join(dirname(dataDir), "postgres.log")
    const trips: Record<
      string,
      { perSend: number; roundTrips: number; statements: Array<{ statement: string; perSend: number }> }
    > = {}
    /**
     * The service's SQL client calls so far (each one round trip), from its statement histogram; NaN
     * (not counted) on a checkout older than that histogram, for a before-and-after run.
     */
    const clientCalls = async () => {
      const r = await call(service.port, "GET", "/metrics", { authorization: `Bearer ${adminToken}` })
      if (r.status !== 200) throw new Error(`/metrics: ${r.status} ${r.body.slice(0, 200)}`)
      const m = /^db_client_statement_duration_seconds_count\S* (\d+)$/m.exec(r.body)
      return m === null ? NaN : Number(m[1])
    }
    let readable = true
    try {
      statSync(logFile)
    } catch {
      readable = false
      log(`no server log at ${logFile} (BENCH_DATABASE_URL?): round trips not counted`)
    }
    if (readable) {
      const ownPid = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid
      await db.query("ALTER SYSTEM SET log_statement = 'all'")
      await db.query("SELECT pg_reload_conf()")
      await sleep(500)
      const phases: Array<{ name: string; run: () => Promise<void> }> = [
        { name: "no Idempotency-Key", run: async () => void (await send()) },
        { name: "fresh Idempotency-Key", run: async () => void (await send({ "idempotency-key": `trip-${n}` })) },
        {
          name: "replay of a stored key",
          run: async () => void (await send({ "idempotency-key": "trip-replayed" }, 7))
        }
      ]
      await send({ "idempotency-key": "trip-replayed" }, 7)
      for (const phase of phases) {
        await sleep(300)
        const from = statSync(logFile).size
        const callsFrom = await clientCalls()
        for (let i = 0; i < TRIPS; i++) await phase.run()
        await sleep(300) // the worker's wake-up after the last commit
        const roundTrips = (await clientCalls()) - callsFrom
        const text = readFileSync(logFile, "utf8").slice(from)
        const counts = new Map<string, number>()
        let total = 0
        // a statement's later lines start with a tab
        for (const entry of text.split(/\n(?!\t)/)) {
          const m = /^[^\n]*\[(\d+)\][^:]*LOG:\s+(?:statement|execute [^:]*): ([\s\S]*)$/.exec(entry)
          if (m === null || Number(m[1]) === ownPid) continue
          total++
          const s = shape(m[2]!.trim())
          counts.set(s, (counts.get(s) ?? 0) + 1)
        }
        trips[phase.name] = {
          perSend: total / TRIPS,
          roundTrips: roundTrips / TRIPS,
          statements: [...counts].sort((a, b) => b[1] - a[1]).map(([statement, c]) => ({
            statement,
            perSend: c / TRIPS
          }))
        }
      }
      await db.query("ALTER SYSTEM RESET log_statement")
      await db.query("SELECT pg_reload_conf()")
      for (const [name, t] of Object.entries(trips)) {
        log(`SQL statements per send, ${name}: ${fmt(t.perSend, 2)} in ${fmt(t.roundTrips, 2)} round trips`)
        for (const s of t.statements) log(`  ${fmt(s.perSend, 2).padStart(6)}  ${s.statement}`)
      }
    }

    // 2. Profile under load
    const sendRoute: Route = {
      name: "POST /v1/api/messages",
      method: "POST",
      next: () => ({ path: "/v1/api/messages", body: body(n++) })
    }
    const warm = await load(target, sendRoute, WARMUP, CONNECTIONS)
    log(`warm-up: ${fmt(warm.reqPerSec)} req/s`)
    const loadBefore = loadavg()[0]!
    const r = await load(target, sendRoute, SECONDS, CONNECTIONS)
    log(
      `profiled load: ${fmt(r.reqPerSec)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx} (load average ${
        loadBefore.toFixed(2)
      } -> ${loadavg()[0]!.toFixed(2)})`
    )
    // node writes the profile as it exits: a slow drain must not end in the harness's SIGKILL
    const written = () =>
      readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile")).map((f) => join(profileDir, f))
    process.kill(-service.pid!, "SIGTERM")
    for (let i = 0; i < 120 && written().length === 0; i++) await sleep(500)
    await sleep(1000)
    await service.stop()
    const profiles = written()
    const largest = profiles.sort((a, b) => statSync(b).size - statSync(a).size)[0]
    if (largest === undefined) {
      throw new Error(
        `no profile written to ${profileDir}; the service's last lines:\n${
          service.output().split("\n").slice(-8).join("\n")
        }`
      )
    }
    const summary = summarizeProfile(largest)
    log(
      `profile ${largest}: ${fmt(summary.sampledMs / 1000, 1)} s sampled, idle ${fmt(summary.idlePercent, 1)}%, GC ${
        fmt(summary.gcPercent, 1)
      }% of busy`
    )
    log("self time (% of busy):")
    for (const s of summary.self) log(`  ${fmt(s.percent, 1).padStart(5)}  ${s.name}`)
    log("self time by package (% of busy):")
    for (const s of summary.packages) log(`  ${fmt(s.percent, 1).padStart(5)}  ${s.name}`)
    log("inclusive time (% of busy):")
    for (const s of summary.inclusive) log(`  ${fmt(s.percent, 1).padStart(5)}  ${s.name}`)

    writeFigures({
      benchmark: "send-profile",
      startedAt: startedAt.toISOString(),
      host: `load average ${loadBefore.toFixed(2)}`,
      figures: Object.entries(trips).flatMap(([name, t]) => [
        {
          figure: `SQL statements per POST /v1/api/messages, ${name} (the webhook worker's included)`,
          value: t.perSend,
          unit: "statements"
        },
        {
          figure: `SQL round trips per POST /v1/api/messages, ${name} (the webhook worker's included)`,
          value: t.roundTrips,
          unit: "round trips"
        }
      ])
    })
    const outDir = join(benchDir, "results")
    mkdirSync(outDir, { recursive: true })
    writeFileSync(
      join(outDir, "send-profile.json"),
      JSON.stringify(
        {
          startedAt: new Date().toISOString(),
          loadAverage: loadBefore,
          load: r,
          trips,
          profile: { file: largest, ...summary }
        },
        null,
        2
      ) + "\n"
    )
    log(`wrote ${join("apps", "bench", "results", "send-profile.json")}`)
  } finally {
    await cleanups.run()
  }
}

runMain(main)
