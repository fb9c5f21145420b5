/**
 * `npm run bench`: read-path benchmark of the service against a bare node:http + pg baseline.
 * Prints figures (and writes apps/bench/results/latest.json and figures-reads.json); it never asserts.
 *
 * 1. Postgres: BENCH_DATABASE_URL (a fresh database is created on that server and dropped at the
 *    end) or a throwaway cluster from test/support/postgres.ts.
 * 2. First boot of the service migrates and prints the test key; then BENCH_CONTACTS contacts are
 *    bulk-inserted for that workspace (seed.ts) and the search columns are checked against
 *    core/contacts/rules.ts on a sample.
 * 3. The service (apps/server/node.ts) and the baseline (baseline.ts) run as child processes and are
 *    loaded with autocannon, alternating rounds, then probed with sequential single-client searches.
 *    `GET /contacts/{id}` also loads the library floors (floors.ts: an Effect runtime on
 *    `@effect/sql-pg`, the service's Node server with one hand-written route, one HttpApi endpoint),
 *    which bound what the service can reach while it is built on them.
 *
 * Env: BENCH_CONTACTS (1000000), BENCH_SECONDS (10), BENCH_WARMUP (10), BENCH_ROUNDS (2),
 * BENCH_CONNECTIONS (50), BENCH_PROBE (500), BENCH_BATCH (100000), BENCH_DATABASE_URL.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { join } from "node:path"
import { searchDigits, searchText } from "../../core/contacts/rules.ts"
import { type Figure, writeFigures } from "./figures.ts"
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
  percentile,
  type RoundFigures,
  type Route,
  runMain,
  slowestTerms,
  startChild,
  type Target,
  WARMUP_SECONDS
} from "./harness.ts"
import { seedContacts, type SeedResult } from "./seed.ts"
import { explain, listStatement, SEARCH_TERMS } from "./sql.ts"

const CONTACTS = intEnv("BENCH_CONTACTS", 1_000_000)
const SECONDS = intEnv("BENCH_SECONDS", 10)
const WARMUP = intEnv("BENCH_WARMUP", WARMUP_SECONDS)
const ROUNDS = intEnv("BENCH_ROUNDS", 2)
const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50)
const PROBE = intEnv("BENCH_PROBE", 500)
const BATCH = intEnv("BENCH_BATCH", 100_000)
const LIMIT = 50
/**
 * The floors of floors.ts, cheapest first: three library floors (what each adds to the one below it,
 * none doing the contract's work), and the contract with the HTTP model taken out.
 */
const FLOORS = ["effect", "platform", "httpapi", "contract"] as const
const FLOOR_LABELS: Record<(typeof FLOORS)[number], string> = {
  effect: "an Effect runtime on @effect/sql-pg under node:http, no contract work",
  platform: "the service's Node server, one hand-written route with its schemas, no contract work",
  httpapi: "one HttpApi endpoint (router, group, handler) on that server, no contract work",
  contract:
    "the contract's work in plain functions and the use case on the core services under node:http, no HTTP model"
}

// ---------------------------------------------------------------------------------------------

const stripCursor = (body: string) => {
  const parsed = JSON.parse(body) as Record<string, unknown>
  delete parsed["nextCursor"]
  return JSON.stringify(parsed)
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const startedAt = new Date()
  const cleanups = cleanupStack()

  try {
    // 1. Postgres and the first boot (migrations, workspace, test key)
    const { databaseUrl, serviceEnv, key, workspaceId, db, boot } = await firstBoot(cleanups, {
      database: "switchboard_bench",
      prefix: "bench"
    })
    await boot.stop()
    log(`workspace ${workspaceId}, key ${key.slice(0, 13)}…`)

    log(`seeding ${fmt(CONTACTS)} contacts in batches of ${fmt(BATCH)}`)
    const seed: SeedResult = await seedContacts(db, {
      workspaceId,
      count: CONTACTS,
      batchSize: BATCH,
      log: (l) => log(`  ${l}`)
    })
    const counted = Number(
      (await db.query<{ n: string }>("SELECT count(*) AS n FROM contacts WHERE workspace_id = $1", [workspaceId]))
        .rows[0]!.n
    )
    log(
      `seeded in ${seed.seconds.toFixed(1)} s (insert ${seed.insertSeconds.toFixed(1)} s, GIN indexes ${
        seed.indexSeconds.toFixed(1)
      } s, vacuum/analyze ${seed.analyzeSeconds.toFixed(1)} s)`
    )

    // search columns must be exactly what core/contacts/rules.ts computes
    const sample = await db.query(
      "SELECT id, first_name, last_name, company, phones, emails, search_text, search_digits FROM contacts WHERE workspace_id = $1 ORDER BY random() LIMIT 1000",
      [workspaceId]
    )
    const mismatches = sample.rows.filter(
      (r) =>
        searchText({ firstName: r.first_name, lastName: r.last_name, company: r.company, emails: r.emails }) !==
          r.search_text ||
        searchDigits({ phones: r.phones }) !== r.search_digits
    )
    log(
      `search columns checked against core/contacts/rules.ts: ${
        sample.rows.length - mismatches.length
      }/${sample.rows.length} match`
    )
    if (mismatches[0]) log(`  first mismatch: ${JSON.stringify(mismatches[0])}`)
    const ids: Array<string> = sample.rows.map((r) => String(r.id))

    const sizes = (await db.query<{ name: string; size: string }>(
      `SELECT relname AS name, pg_size_pretty(pg_relation_size(oid)) AS size FROM pg_class
       WHERE relname IN ('contacts', 'contacts_search_text', 'contacts_search_digits', 'contacts_phones', 'contacts_recent', 'contacts_pkey') ORDER BY relname`
    )).rows
    log(`sizes: ${sizes.map((s) => `${s.name} ${s.size}`).join(", ")}`)

    // 3. Servers
    const service = await startChild("service", "apps/server/node.ts", serviceEnv, await freePort())
    cleanups.push(service.stop)
    const baseline = await startChild("baseline", "apps/bench/baseline.ts", {
      DATABASE_URL: databaseUrl,
      WORKSPACE_ID: workspaceId
    }, await freePort())
    cleanups.push(baseline.stop)
    const targets: ReadonlyArray<Target> = [
      { server: "service", port: service.port, headers: { authorization: `Bearer ${key}` } },
      { server: "baseline", port: baseline.port, headers: {} }
    ]
    const floors: Array<Target<string>> = []
    for (const floor of FLOORS) {
      // The contract floor is the service without its HTTP model: its configuration, its key.
      const contract = floor === "contract"
      const env = {
        ...(contract ? serviceEnv : { DATABASE_URL: databaseUrl }),
        WORKSPACE_ID: workspaceId,
        FLOOR: floor
      }
      const child = await startChild(`${floor} floor`, "apps/bench/floors.ts", env, await freePort())
      cleanups.push(child.stop)
      floors.push({ server: floor, port: child.port, headers: contract ? { authorization: `Bearer ${key}` } : {} })
    }

    const searchPath = (term: string) => `/v1/api/contacts?q=${encodeURIComponent(term)}&limit=${LIMIT}`
    const routes: ReadonlyArray<Route> = [
      (() => {
        let i = 0
        return {
          name: "GET /v1/api/contacts/:id",
          method: "GET",
          next: () => ({ path: `/v1/api/contacts/${ids[i++ % ids.length]}` })
        }
      })(),
      (() => {
        let i = 0
        return {
          name: `GET /v1/api/contacts?q=&limit=${LIMIT}`,
          method: "GET",
          next: () => ({ path: searchPath(SEARCH_TERMS[i++ % SEARCH_TERMS.length]!) })
        }
      })()
    ]

    // sample run: both servers answer 200 with the same body (cursor aside)
    let identical = 0
    let compared = 0
    for (
      const path of [
        ...ids.slice(0, 5).map((id) => `/v1/api/contacts/${id}`),
        ...SEARCH_TERMS.slice(0, 50).map(searchPath)
      ]
    ) {
      const [a, b] = await Promise.all(targets.map((t) => call(t.port, "GET", path, t.headers)))
      if (a!.status !== 200 || b!.status !== 200) {
        throw new Error(
          `sample request ${path}: service ${a!.status} ${a!.body.slice(0, 200)} / baseline ${b!.status} ${
            b!.body.slice(0, 200)
          }`
        )
      }
      compared++
      if (stripCursor(a!.body) === stripCursor(b!.body)) identical++
    }
    log(
      `sample run: ${compared} requests answered 200 by both servers; identical bodies (cursor aside): ${identical}/${compared}`
    )
    // The floors answer the baseline's body, or they measure something else.
    for (const path of ids.slice(0, 5).map((id) => `/v1/api/contacts/${id}`)) {
      const want = await call(targets[1]!.port, "GET", path, {})
      for (const floor of floors) {
        const got = await call(floor.port, "GET", path, floor.headers)
        if (got.status !== 200 || got.body !== want.body) {
          throw new Error(`${floor.server} floor ${path}: ${got.status} ${got.body.slice(0, 200)}`)
        }
      }
    }

    // 4. Load: warm-up, then alternating rounds
    const loadBefore = loadavg()[0]!
    const figures = new Map<string, Array<RoundFigures>>()
    for (const route of routes) {
      const loaded = route === routes[0] ? [...targets, ...floors] : targets
      for (const target of loaded) {
        const w = await load(target, route, WARMUP, CONNECTIONS)
        log(`warm-up ${target.server.padEnd(8)} ${route.name}: ${fmt(w.reqPerSec)} req/s, non-2xx ${w.non2xx}`)
      }
      for (let round = 1; round <= ROUNDS; round++) {
        for (const target of loaded) {
          const r = await load(target, route, SECONDS, CONNECTIONS)
          const k = `${route.name}|${target.server}`
          figures.set(k, [...(figures.get(k) ?? []), r])
          log(
            `round ${round} ${target.server.padEnd(8)} ${route.name}: ${
              fmt(r.reqPerSec)
            } req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`
          )
        }
      }
    }

    // 5. Latency probe: sequential single-client searches
    const probe = async (target: Target) => {
      const all: Array<number> = []
      const byTerm = new Map<string, Array<number>>()
      let non200 = 0
      for (let i = 0; i < PROBE; i++) {
        const term = SEARCH_TERMS[i % SEARCH_TERMS.length]!
        const t = performance.now()
        const res = await call(target.port, "GET", searchPath(term), target.headers)
        const ms = performance.now() - t
        if (res.status !== 200) non200++
        all.push(ms)
        byTerm.set(term, [...(byTerm.get(term) ?? []), ms])
      }
      all.sort((a, b) => a - b)
      return {
        p50: percentile(all, 0.5),
        p95: percentile(all, 0.95),
        p99: percentile(all, 0.99),
        max: all[all.length - 1]!,
        non200,
        byTerm: slowestTerms(byTerm)
      }
    }
    const probes = { service: await probe(targets[0]!), baseline: await probe(targets[1]!) }
    const loadAfter = loadavg()[0]!

    // 6. EXPLAIN ANALYZE of the slowest terms
    const slow = probes.service.byTerm.slice(0, 4)
    const explains: Array<{ term: string; medianMs: number; plan: Array<string> }> = []
    for (const { term, median } of slow) {
      const st = listStatement(workspaceId, term, LIMIT)
      const plan = await explain(db, st)
      explains.push({ term, medianMs: median, plan })
    }

    const pgVersion = (await db.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version

    // 7. Report
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    const rows = routes.flatMap((route) =>
      (route === routes[0] ? [...targets, ...floors] : targets).map((t) => {
        const rs = figures.get(`${route.name}|${t.server}`) ?? []
        return {
          route: route.name,
          server: t.server,
          reqPerSec: mean(rs.map((r) => r.reqPerSec)),
          rounds: rs.map((r) => r.reqPerSec),
          p50: mean(rs.map((r) => r.p50)),
          p99: mean(rs.map((r) => r.p99)),
          non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
          errors: rs.reduce((a, r) => a + r.errors + r.timeouts, 0)
        }
      })
    )
    const ratio = (route: string, server = "service") => {
      const s = rows.find((r) => r.route === route && r.server === server)!
      const b = rows.find((r) => r.route === route && r.server === "baseline")!
      return s.reqPerSec / b.reqPerSec
    }

    const cpuModel = cpus()[0]?.model ?? "unknown"
    const line = "-".repeat(112)
    log()
    log(line)
    log(`Switchboard read benchmark  ${startedAt.toISOString()}`)
    log(
      `contacts ${
        fmt(counted)
      } | Postgres ${pgVersion} | Node ${process.version} | ${availableParallelism()} CPUs (${cpuModel})`
    )
    log(
      `1-min load average: ${loadBefore.toFixed(1)} before load, ${
        loadAfter.toFixed(1)
      } after probe (anything else running on these cores skews the figures)`
    )
    log(
      `seeding ${
        seed.seconds.toFixed(1)
      } s | autocannon ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds per server, alternating, ${WARMUP} s warm-up | pool 20 | limit ${LIMIT}`
    )
    log(line)
    log(
      `${"route".padEnd(34)}${"server".padEnd(10)}${"req/s mean".padStart(12)}${"rounds".padStart(20)}${
        "p50 ms".padStart(9)
      }${"p99 ms".padStart(9)}${"non2xx".padStart(8)}${"errors".padStart(8)}${"x baseline".padStart(11)}`
    )
    for (const r of rows) {
      log(
        `${(r.server === "service" ? r.route : "").padEnd(34)}${r.server.padEnd(10)}${fmt(r.reqPerSec).padStart(12)}${
          r.rounds.map((x) => fmt(x)).join(" / ").padStart(20)
        }` +
          `${fmt(r.p50, 1).padStart(9)}${fmt(r.p99, 1).padStart(9)}${String(r.non2xx).padStart(8)}${
            String(r.errors).padStart(8)
          }` +
          `${(r.server === "baseline" ? "" : ratio(r.route, r.server).toFixed(2)).padStart(11)}`
      )
    }
    log(line)
    log(
      `search latency probe: ${PROBE} sequential single-client GET /v1/api/contacts?q=<term>&limit=${LIMIT}, ${SEARCH_TERMS.length} terms`
    )
    log(
      `${"server".padEnd(10)}${"p50 ms".padStart(9)}${"p95 ms".padStart(9)}${"p99 ms".padStart(9)}${
        "max ms".padStart(9)
      }${"non200".padStart(8)}   slowest terms (median ms)`
    )
    for (const [name, p] of Object.entries(probes)) {
      log(
        `${name.padEnd(10)}${fmt(p.p50, 1).padStart(9)}${fmt(p.p95, 1).padStart(9)}${fmt(p.p99, 1).padStart(9)}${
          fmt(p.max, 1).padStart(9)
        }${String(p.non200).padStart(8)}   ` +
          p.byTerm.slice(0, 4).map((t) => `"${t.term}" ${fmt(t.median, 1)}`).join(", ")
      )
    }
    log(
      `search p95 at ${fmt(counted)} contacts (service): ${fmt(probes.service.p95, 1)} ms (target < 20 ms: ${
        probes.service.p95 < 20 ? "met" : "missed"
      })`
    )
    log(line)
    log("EXPLAIN (ANALYZE, BUFFERS) of the slowest probe terms:")
    for (const e of explains) {
      const nodes = e.plan.filter((l) =>
        /->|^Limit|Execution Time|Rows Removed|Index Cond|Filter:|Recheck Cond/.test(l.trim())
      ).slice(0, 12)
      log(`  q="${e.term}" (probe median ${fmt(e.medianMs, 1)} ms)`)
      for (const n of nodes) log(`    ${n.trim().slice(0, 150)}`)
    }
    log(line)

    const results = {
      startedAt: startedAt.toISOString(),
      contacts: counted,
      postgres: pgVersion,
      node: process.version,
      cpus: availableParallelism(),
      cpuModel,
      loadAverage: { beforeLoad: loadBefore, afterProbe: loadAfter },
      settings: {
        connections: CONNECTIONS,
        seconds: SECONDS,
        rounds: ROUNDS,
        warmupSeconds: WARMUP,
        probeRequests: PROBE,
        limit: LIMIT,
        poolSize: 20
      },
      seed: { ...seed, sizes },
      load: rows.map((r) => ({
        ...r,
        ratioServiceToBaseline: r.server === "service" ? ratio(r.route) : null,
        ratioToBaseline: r.server === "baseline" ? null : ratio(r.route, r.server)
      })),
      probe: probes,
      searchTerms: SEARCH_TERMS,
      explain: explains
    }
    const outDir = join(benchDir, "results")
    mkdirSync(outDir, { recursive: true })
    writeFileSync(join(outDir, "latest.json"), JSON.stringify(results, null, 2) + "\n")
    log(`wrote ${join("apps", "bench", "results", "latest.json")}`)
    const label = counted >= 1_000_000
      ? `${Number((counted / 1_000_000).toFixed(1))}M`
      : `${Math.round(counted / 1000)}k`
    const bare = { label: "bare node:http + pg, same SQL" }
    const loadFigure = (route: string, target?: { readonly text: string; readonly ratio: number }): Figure => {
      const s = rows.find((r) => r.route === route && r.server === "service")!
      const b = rows.find((r) => r.route === route && r.server === "baseline")!
      return {
        figure: `${route}, ${label} contacts (Postgres)`,
        value: s.reqPerSec,
        unit: "req/s",
        baseline: { ...bare, value: b.reqPerSec },
        ratio: ratio(route),
        ...(target ? { target: target.text, met: ratio(route) >= target.ratio } : {})
      }
    }
    writeFigures({
      benchmark: "reads",
      startedAt: startedAt.toISOString(),
      host: `${availableParallelism()} CPUs, load ${loadBefore.toFixed(1)}/${loadAfter.toFixed(1)}`,
      figures: [
        loadFigure(routes[0]!.name, { text: ">= 0.7 of the bare server", ratio: 0.7 }),
        ...FLOORS.map((floor): Figure => ({
          figure: `${routes[0]!.name} floor: ${FLOOR_LABELS[floor]}, ${label} contacts (Postgres)`,
          value: rows.find((r) => r.route === routes[0]!.name && r.server === floor)!.reqPerSec,
          unit: "req/s",
          baseline: {
            ...bare,
            value: rows.find((r) => r.route === routes[0]!.name && r.server === "baseline")!.reqPerSec
          },
          ratio: ratio(routes[0]!.name, floor)
        })),
        loadFigure(routes[1]!.name),
        {
          figure: `contact search p95, sequential probe, ${label} contacts (Postgres; p50 ${
            fmt(probes.service.p50, 1)
          }, p99 ${fmt(probes.service.p99, 1)})`,
          value: probes.service.p95,
          unit: "ms",
          baseline: { ...bare, value: probes.baseline.p95 },
          ratio: probes.baseline.p95 / probes.service.p95,
          target: "p95 < 20 ms",
          met: probes.service.p95 < 20
        }
      ]
    })
  } finally {
    await cleanups.run()
  }
}

runMain(main)
