/**
 * `npm run bench:embedded`: the service as `npm start` runs it with no DATABASE_URL (PGlite in
 * DATA_DIR, `npm start`'s node flags) beside PGlite's own floor: a bare node:http server over one
 * PGlite instance on a copy of the same data, running the same SQL (embeddedFloor.ts, floor.ts).
 * Prints figures (and writes apps/bench/results/embedded.json and figures-embedded.json); it never
 * asserts.
 *
 * 1. First boot of the service in a fresh DATA_DIR (migrations, workspace, test key); a sending
 *    number through the admin API.
 * 2. BENCH_CONTACTS contacts bulk-inserted into that PGlite database from this process (seed.ts),
 *    then the database directory is copied for the floor.
 * 3. Both servers, each a process of its own, are loaded with autocannon in alternating rounds:
 *    GET /v1/api/contacts/{id}, GET /v1/api/contacts?q=&limit=50 and POST /v1/api/messages (test
 *    key), with each process's CPU per request; then sequential single-client requests, with the
 *    SQL statements per request and their time from the service's GET /metrics.
 *
 * Env: BENCH_CONTACTS (100000), BENCH_SECONDS (10), BENCH_WARMUP (10), BENCH_ROUNDS (2),
 * BENCH_CONNECTIONS (50), BENCH_PROBE (300), BENCH_DEFAULT_FLAGS (unset; 1 adds the service run
 * with the benchmarks' usual node flags instead of `npm start`'s, on a third copy).
 */
import { PGlite } from "@electric-sql/pglite"
import { randomBytes } from "node:crypto"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import type pg from "pg"
import { pgliteOptions } from "../../adapters/pglite/PgliteClient.ts"
import { type Figure, writeFigures } from "./figures.ts"
import {
  benchDir,
  call,
  cleanupStack,
  fmt,
  freePort,
  groupCpuSeconds,
  intEnv,
  load,
  log,
  percentile,
  root,
  type RoundFigures,
  type Route,
  runMain,
  sleep,
  startChild,
  startFlags,
  type Target,
  WARMUP_SECONDS
} from "./harness.ts"
import { participant, textGen } from "./messagesSeed.ts"
import { seedContacts } from "./seed.ts"
import { SEARCH_TERMS } from "./sql.ts"

const CONTACTS = intEnv("BENCH_CONTACTS", 100_000)
const SECONDS = intEnv("BENCH_SECONDS", 10)
const WARMUP = intEnv("BENCH_WARMUP", WARMUP_SECONDS)
const ROUNDS = intEnv("BENCH_ROUNDS", 2)
const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50)
const PROBE = intEnv("BENCH_PROBE", 300)
const DEFAULT_FLAGS = process.env["BENCH_DEFAULT_FLAGS"] === "1"
const NUMBER = "+14155550100"
const LIMIT = 50
const READ_TARGET = { reqPerSec: 1500, ratio: 0.5 }

const pgliteVersion = String(
  JSON.parse(readFileSync(join(root, "node_modules", "@electric-sql", "pglite", "package.json"), "utf8")).version
)

type Server = "service" | "floor" | "service, bench flags"

const main = async () => {
  const startedAt = new Date()
  const cleanups = cleanupStack()
  delete process.env["DATABASE_URL"]
  const flags = startFlags("embedded")
  try {
    // 1. First boot in a fresh DATA_DIR
    const dataDir = mkdtempSync(join(tmpdir(), "switchboard-embedded-"))
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
    const adminToken = randomBytes(24).toString("hex")
    const serviceEnv = {
      ADMIN_TOKEN: adminToken,
      RATE_LIMIT_PER_MINUTE: "100000000",
      DATA_DIR: join(dataDir, "service")
    }
    mkdirSync(serviceEnv.DATA_DIR)
    const boot = await startChild(
      "service (first boot)",
      "apps/server/node.ts",
      serviceEnv,
      await freePort(),
      root,
      flags
    )
    cleanups.push(boot.stop)
    const key = /svc_test_[0-9A-Za-z]{40}/.exec(boot.output())?.[0]
    if (key === undefined) throw new Error(`no first-boot test key in the service output:\n${boot.output()}`)
    const workspaces = await call(boot.port, "GET", "/v1/admin/workspaces", { authorization: `Bearer ${adminToken}` })
    const workspaceId = String((JSON.parse(workspaces.body).workspaces as Array<{ id: string }>)[0]!.id)
    const added = await call(boot.port, "POST", `/v1/admin/workspaces/${workspaceId}/numbers`, {
      authorization: `Bearer ${adminToken}`
    }, JSON.stringify({ e164: NUMBER }))
    if (added.status !== 201) throw new Error(`admin addNumber: ${added.status} ${added.body}`)
    await boot.stop()
    log(
      `DATA_DIR ${serviceEnv.DATA_DIR}, workspace ${workspaceId}, key ${key.slice(0, 13)}…, npm start flags: ${
        flags.join(" ")
      }`
    )

    // 2. Seed in this process, then copy the database for the floor (and the flags variant)
    const pgliteDir = join(serviceEnv.DATA_DIR, "pglite")
    const db = await PGlite.create(pgliteOptions(pgliteDir))
    const inboxId = String(
      (await db.query<{ inbox_id: string }>("SELECT inbox_id FROM numbers WHERE e164 = $1", [NUMBER])).rows[0]!.inbox_id
    )
    log(`seeding ${fmt(CONTACTS)} contacts into PGlite`)
    // PGlite answers `query(text, values)` with `{ rows }`, all the seeder reads from pg
    const seed = await seedContacts(db as unknown as pg.Client, {
      workspaceId,
      count: CONTACTS,
      batchSize: 10_000,
      log: (l) => log(`  ${l}`)
    })
    const ids =
      (await db.query<{ id: string }>("SELECT id FROM contacts WHERE workspace_id = $1 ORDER BY random() LIMIT 1000", [
        workspaceId
      ])).rows.map((r) => r.id)
    const dirSize = Number(
      (await db.query<{ n: string }>(
        "SELECT sum(pg_relation_size(oid))::text AS n FROM pg_class WHERE relname LIKE 'contacts%'"
      )).rows[0]!.n
    )
    await db.close()
    log(`seeded in ${seed.seconds.toFixed(1)} s; contacts and their indexes ${fmt(dirSize / 2 ** 20)} MB`)
    // the whole DATA_DIR (the database and the secrets.key it is sealed with), not the service's lock
    const copy = (name: string) => {
      const dir = join(dataDir, name)
      cpSync(serviceEnv.DATA_DIR, dir, { recursive: true, filter: (path) => !path.endsWith("pglite.lock") })
      return dir
    }
    const floorDir = copy("floor")

    // 3. Servers
    const headers = { authorization: `Bearer ${key}` }
    const service = await startChild("service", "apps/server/node.ts", serviceEnv, await freePort(), root, flags)
    cleanups.push(service.stop)
    const floor = await startChild(
      "floor",
      "apps/bench/embeddedFloor.ts",
      { PGLITE_DIR: join(floorDir, "pglite"), WORKSPACE_ID: workspaceId, INBOX_ID: inboxId, NUMBER_E164: NUMBER },
      await freePort(),
      root,
      flags
    )
    cleanups.push(floor.stop)
    const servers: Array<{ name: Server; target: Target; pid: number | undefined }> = [
      { name: "service", target: { server: "service", port: service.port, headers }, pid: service.pid },
      { name: "floor", target: { server: "baseline", port: floor.port, headers: {} }, pid: floor.pid }
    ]
    if (DEFAULT_FLAGS) {
      const variant = await startChild("service, bench flags", "apps/server/node.ts", {
        ...serviceEnv,
        DATA_DIR: copy("variant")
      }, await freePort())
      cleanups.push(variant.stop)
      servers.push({
        name: "service, bench flags",
        target: { server: "service", port: variant.port, headers },
        pid: variant.pid
      })
    }

    const searchPath = (term: string) => `/v1/api/contacts?q=${encodeURIComponent(term)}&limit=${LIMIT}`
    let compared = 0
    let identical = 0
    const strip = (body: string) => JSON.stringify({ ...JSON.parse(body), nextCursor: undefined })
    for (
      const path of [
        ...ids.slice(0, 5).map((id) => `/v1/api/contacts/${id}`),
        ...SEARCH_TERMS.slice(0, 20).map(searchPath)
      ]
    ) {
      const [a, b] = await Promise.all(
        servers.slice(0, 2).map((s) => call(s.target.port, "GET", path, s.target.headers))
      )
      if (a!.status !== 200 || b!.status !== 200) {
        throw new Error(
          `sample ${path}: service ${a!.status} ${a!.body.slice(0, 200)} / floor ${b!.status} ${b!.body.slice(0, 200)}`
        )
      }
      compared++
      if (strip(a!.body) === strip(b!.body)) identical++
    }
    log(`sample run: ${compared} reads answered 200 by both; identical bodies (cursor aside): ${identical}/${compared}`)

    const gen = textGen(5000, 4242)
    const posts = Array.from(
      { length: 10_000 },
      (_, i) =>
        JSON.stringify({
          to: participant(Math.floor(gen.rnd() * 1000)),
          body: gen.body().slice(0, 1600) || `message ${i}`
        })
    )
    let postIndex = 0
    let idIndex = 0
    let termIndex = 0
    const routes: ReadonlyArray<Route> = [
      {
        name: "GET /v1/api/contacts/{id}",
        method: "GET",
        next: () => ({ path: `/v1/api/contacts/${ids[idIndex++ % ids.length]}` })
      },
      {
        name: `GET /v1/api/contacts?q=&limit=${LIMIT}`,
        method: "GET",
        next: () => ({ path: searchPath(SEARCH_TERMS[termIndex++ % SEARCH_TERMS.length]!) })
      },
      {
        name: "POST /v1/api/messages (test key)",
        method: "POST",
        next: () => ({ path: "/v1/api/messages", body: posts[postIndex++ % posts.length]! })
      }
    ]
    for (const s of servers) {
      const r = await call(s.target.port, "POST", "/v1/api/messages", s.target.headers, posts[0]!)
      if (r.status !== 201) throw new Error(`sample send to ${s.name}: ${r.status} ${r.body.slice(0, 300)}`)
    }

    // 4. Load: warm-up, then alternating rounds, with each process's CPU
    const loads: Array<number> = [loadavg()[0]!]
    const rounds = new Map<string, Array<RoundFigures & { cpuMsPerRequest: number; busy: number }>>()
    for (const route of routes) {
      for (const s of servers) {
        const w = await load(s.target, route, WARMUP, CONNECTIONS)
        log(`warm-up ${s.name.padEnd(20)} ${route.name}: ${fmt(w.reqPerSec)} req/s, non-2xx ${w.non2xx}`)
        await sleep(1000)
      }
      for (let round = 1; round <= ROUNDS; round++) {
        for (const s of servers) {
          const cpu0 = s.pid === undefined ? NaN : groupCpuSeconds(s.pid)
          const t0 = performance.now()
          const r = await load(s.target, route, SECONDS, CONNECTIONS)
          const wall = (performance.now() - t0) / 1000
          const cpu = (s.pid === undefined ? NaN : groupCpuSeconds(s.pid)) - cpu0
          const figures = { ...r, cpuMsPerRequest: (cpu * 1000) / r.total, busy: cpu / wall }
          rounds.set(`${route.name}|${s.name}`, [...(rounds.get(`${route.name}|${s.name}`) ?? []), figures])
          log(
            `round ${round} ${s.name.padEnd(20)} ${route.name}: ${
              fmt(r.reqPerSec)
            } req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
              `non-2xx ${r.non2xx}, errors ${r.errors + r.timeouts}, CPU ${fmt(figures.cpuMsPerRequest, 2)} ms/req (${
                fmt(figures.busy, 2)
              } cores)`
          )
          // a send round leaves at most CONNECTIONS requests queued: let them drain
          await sleep(1000)
        }
      }
      loads.push(loadavg()[0]!)
    }

    // 5. Sequential single-client requests (no queueing): the cost of one request, and for the
    // service, from its own GET /metrics, the SQL statements each request ran and their time
    const sqlTotals = async (port: number) => {
      const text = (await call(port, "GET", "/metrics", { authorization: `Bearer ${adminToken}` })).body
      const sum = (name: string) =>
        text.split("\n").filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).reduce(
          (a, l) => a + Number(l.slice(l.lastIndexOf(" ") + 1)),
          0
        )
      return {
        count: sum("db_client_statement_duration_seconds_count"),
        seconds: sum("db_client_statement_duration_seconds_sum")
      }
    }
    const sequential = new Map<string, { p50: number; p95: number; mean: number; statements: number; sqlMs: number }>()
    for (const route of routes) {
      for (const s of servers) {
        const ms: Array<number> = []
        const sql0 = s.name === "floor" ? undefined : await sqlTotals(s.target.port)
        for (let i = 0; i < PROBE; i++) {
          const next = route.next(s.target)
          const t = performance.now()
          await call(s.target.port, route.method, next.path, s.target.headers, next.body)
          ms.push(performance.now() - t)
        }
        const sql1 = sql0 === undefined ? undefined : await sqlTotals(s.target.port)
        const mean = ms.reduce((a, b) => a + b, 0) / ms.length
        ms.sort((a, b) => a - b)
        sequential.set(`${route.name}|${s.name}`, {
          p50: percentile(ms, 0.5),
          p95: percentile(ms, 0.95),
          mean,
          statements: sql0 && sql1 ? (sql1.count - sql0.count) / PROBE : NaN,
          sqlMs: sql0 && sql1 ? ((sql1.seconds - sql0.seconds) * 1000) / PROBE : NaN
        })
      }
    }
    loads.push(loadavg()[0]!)

    // 6. Report
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    const row = (route: string, server: Server) => {
      const rs = rounds.get(`${route}|${server}`) ?? []
      return {
        route,
        server,
        reqPerSec: mean(rs.map((r) => r.reqPerSec)),
        rounds: rs.map((r) => r.reqPerSec),
        p50: mean(rs.map((r) => r.p50)),
        p99: mean(rs.map((r) => r.p99)),
        non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
        errors: rs.reduce((a, r) => a + r.errors + r.timeouts, 0),
        cpuMsPerRequest: mean(rs.map((r) => r.cpuMsPerRequest)),
        busyCores: mean(rs.map((r) => r.busy)),
        sequential: sequential.get(`${route}|${server}`)!
      }
    }
    const rows = routes.flatMap((route) => servers.map((s) => row(route.name, s.name)))
    const ratio = (route: string, server: Server = "service") =>
      row(route, server).reqPerSec / row(route, "floor").reqPerSec
    const cpuModel = cpus()[0]?.model ?? "unknown"
    const line = "-".repeat(150)
    log()
    log(line)
    log(`Switchboard embedded (PGlite) benchmark  ${startedAt.toISOString()}`)
    log(
      `contacts ${
        fmt(CONTACTS)
      } | PGlite ${pgliteVersion} | Node ${process.version} | ${availableParallelism()} CPUs (${cpuModel}) | node flags: ${
        flags.join(" ")
      }`
    )
    log(
      `1-min load average: ${
        loads.map((l) => l.toFixed(1)).join(" -> ")
      } (start, after each route, after the sequential requests)`
    )
    log(
      `autocannon ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds per server, alternating, ${WARMUP} s warm-up; sequential: ${PROBE} single-client requests`
    )
    log(line)
    log(
      `${"route".padEnd(36)}${"server".padEnd(22)}${"req/s".padStart(8)}${"rounds".padStart(16)}${
        "p50 ms".padStart(8)
      }${"p99 ms".padStart(8)}${"errors".padStart(8)}` +
        `${"CPU ms/req".padStart(11)}${"cores".padStart(7)}${"seq p50/p95 ms".padStart(16)}${"SQL/req".padStart(8)}${
          "SQL ms".padStart(8)
        }${"svc/floor".padStart(10)}`
    )
    for (const r of rows) {
      log(
        `${(r.server === "service" ? r.route : "").padEnd(36)}${r.server.padEnd(22)}${fmt(r.reqPerSec).padStart(8)}${
          r.rounds.map((x) => fmt(x)).join(" / ").padStart(16)
        }` +
          `${fmt(r.p50, 1).padStart(8)}${fmt(r.p99, 1).padStart(8)}${String(r.non2xx + r.errors).padStart(8)}${
            fmt(r.cpuMsPerRequest, 2).padStart(11)
          }${fmt(r.busyCores, 2).padStart(7)}` +
          `${`${fmt(r.sequential.p50, 1)} / ${fmt(r.sequential.p95, 1)}`.padStart(16)}${
            fmt(r.sequential.statements, 1).padStart(8)
          }${fmt(r.sequential.sqlMs, 1).padStart(8)}${
            (r.server === "floor" ? "" : ratio(r.route, r.server).toFixed(2)).padStart(10)
          }`
      )
    }
    log(
      "SQL/req, SQL ms: statements per sequential request and their time inside the SQL client (the service's db_client_statement_duration_seconds)"
    )
    log(line)

    const results = {
      startedAt: startedAt.toISOString(),
      contacts: CONTACTS,
      pglite: pgliteVersion,
      node: process.version,
      cpus: availableParallelism(),
      cpuModel,
      nodeFlags: flags,
      loadAverage: loads,
      settings: {
        connections: CONNECTIONS,
        seconds: SECONDS,
        rounds: ROUNDS,
        warmupSeconds: WARMUP,
        probe: PROBE,
        limit: LIMIT
      },
      seed,
      sampleCheck: { compared, identical },
      load: rows
    }
    mkdirSync(join(benchDir, "results"), { recursive: true })
    writeFileSync(join(benchDir, "results", "embedded.json"), JSON.stringify(results, null, 2) + "\n")
    const label = CONTACTS >= 1_000_000 ? `${CONTACTS / 1_000_000}M` : `${CONTACTS / 1000}k`
    const figures: Array<Figure> = routes.map((route) => {
      const s = row(route.name, "service")
      const f = row(route.name, "floor")
      const read = route.method === "GET"
      return {
        figure: `${route.name}, embedded PGlite, ${label} contacts`,
        value: s.reqPerSec,
        unit: "req/s",
        baseline: { label: "bare node:http + PGlite, same SQL", value: f.reqPerSec },
        ratio: s.reqPerSec / f.reqPerSec,
        ...(read
          ? {
            target: `>= ${fmt(READ_TARGET.reqPerSec)} req/s and >= ${READ_TARGET.ratio} of the floor`,
            met: s.reqPerSec >= READ_TARGET.reqPerSec && s.reqPerSec / f.reqPerSec >= READ_TARGET.ratio
          }
          : {})
      }
    })
    writeFigures({
      benchmark: "embedded",
      startedAt: startedAt.toISOString(),
      host: `${availableParallelism()} CPUs, load ${loads.map((l) => l.toFixed(1)).join("/")}`,
      figures
    })
    log("wrote apps/bench/results/embedded.json and figures-embedded.json")
  } finally {
    await cleanups.run()
  }
}

runMain(main)
