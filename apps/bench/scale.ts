/**
 * `npm run bench:scale`: how contact search and message search latencies grow with the data, on
 * Postgres. Prints figures (and writes apps/bench/results/scale.json and figures-scale.json); it
 * never asserts.
 *
 * One database grows through the sizes in BENCH_SCALE: at each size the contacts (seed.ts) and the
 * activities (messagesSeed.ts, one thread per 50 activities) are topped up to that many rows, then
 * BENCH_PROBE sequential single-client searches go to the service (GET /v1/api/contacts?q= and
 * GET /v1/api/messages/search?q=) and the same statements go to Postgres directly (sql.ts,
 * messagesSql.ts): the service's p50/p95/p99 beside the SQL's own, and the index sizes.
 * A size whose seeding would, at the previous size's insert rate, run past BENCH_BUDGET seconds
 * from the start is skipped and reported as such.
 *
 * Env: BENCH_SCALE (100000,1000000), BENCH_PROBE (500), BENCH_BUDGET (1500), BENCH_VOCAB (5000),
 * BENCH_DATABASE_URL.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { join } from "node:path"
import type pg from "pg"
import { type Figure, writeFigures } from "./figures.ts"
import {
  benchDir,
  call,
  cleanupStack,
  firstBoot,
  fmt,
  freePort,
  intEnv,
  log,
  percentile,
  runMain,
  slowestTerms,
  startChild,
  type Target
} from "./harness.ts"
import { seedMessages, vocabulary } from "./messagesSeed.ts"
import { messageSearchFor, messageSearchTerms, searchStatement } from "./messagesSql.ts"
import { seedContacts } from "./seed.ts"
import { explain, listStatement, SEARCH_TERMS, type Statement } from "./sql.ts"

/** The sizes measured when BENCH_SCALE is not set; their figures file is plain `scale`. */
const DEFAULT_SIZES = [100_000, 1_000_000]
const SIZES = (process.env["BENCH_SCALE"] ?? DEFAULT_SIZES.join())
  .split(",")
  .map((s) => Number(s.trim().replace(/_/g, "")))
  .filter((n) => Number.isFinite(n) && n > 0)
  .sort((a, b) => a - b)
const PROBE = intEnv("BENCH_PROBE", 500)
const BUDGET = intEnv("BENCH_BUDGET", 1500)
const VOCAB = intEnv("BENCH_VOCAB", 5000)
const MESSAGES_PER_THREAD = 50
const NUMBER = "+14155550100"
const CONTACT_LIMIT = 50
const MESSAGE_LIMIT = 25 // the API default
const TARGET = { contacts: 20, messages: 50 }
/** The cluster sized as docs/operating.md tells operators to size theirs, for a host with 8 GB for Postgres. */
const CLUSTER = [
  "shared_buffers=2GB",
  "effective_cache_size=6GB",
  "random_page_cost=1.1",
  "maintenance_work_mem=512MB",
  "work_mem=64MB"
]
const label = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`)
/** Terms per search and size whose median SQL time is highest, reported with their plans. */
const SLOWEST = 3

interface Latency {
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
  readonly non200: number
}

const summarize = (ms: Array<number>, non200 = 0): Latency => {
  ms.sort((a, b) => a - b)
  return {
    p50: percentile(ms, 0.5),
    p95: percentile(ms, 0.95),
    p99: percentile(ms, 0.99),
    max: ms[ms.length - 1]!,
    non200
  }
}

/** PROBE sequential requests cycling through `terms`, after one unmeasured pass over them. */
const probeService = async (target: Target, terms: ReadonlyArray<string>, path: (term: string) => string) => {
  for (const term of terms) await call(target.port, "GET", path(term), target.headers)
  const ms: Array<number> = []
  let non200 = 0
  for (let i = 0; i < PROBE; i++) {
    const t = performance.now()
    const res = await call(target.port, "GET", path(terms[i % terms.length]!), target.headers)
    ms.push(performance.now() - t)
    if (res.status !== 200) non200++
  }
  return summarize(ms, non200)
}

/**
 * The same probes on pg directly: `statement` may query first (the store's newest-row lookup), and
 * its time counts. Each term's median is kept: the tail's terms get an EXPLAIN.
 */
const probeSql = async (
  db: pg.Client,
  terms: ReadonlyArray<string>,
  statement: (term: string) => Promise<Statement | null>
) => {
  const once = async (term: string) => {
    const st = await statement(term)
    if (st !== null) await db.query(st.text, [...st.values])
  }
  for (const term of terms) await once(term)
  const ms: Array<number> = []
  const byTerm = new Map<string, Array<number>>()
  for (let i = 0; i < PROBE; i++) {
    const term = terms[i % terms.length]!
    const t = performance.now()
    await once(term)
    const took = performance.now() - t
    ms.push(took)
    byTerm.set(term, [...(byTerm.get(term) ?? []), took])
  }
  const explained = []
  for (const { term, median } of slowestTerms(byTerm).slice(0, SLOWEST)) {
    const st = await statement(term)
    explained.push({ term, median, plan: st === null ? [] : await explain(db, st) })
  }
  return { ...summarize(ms), slowest: explained }
}

/** The search indexes of each store, whose sizes the report adds up (migration 0034). */
const SEARCH_INDEXES = {
  contacts: ["contacts_search_text", "contacts_search_digits"],
  messages: ["activities_search", "activities_search_document"]
} as const
const INDEXES = [
  ...SEARCH_INDEXES.contacts,
  "contacts_recent",
  "contacts_pkey",
  ...SEARCH_INDEXES.messages,
  "activities_recent"
]
const ginMegabytes = (sizes: Record<string, number>, what: keyof typeof SEARCH_INDEXES) =>
  SEARCH_INDEXES[what].reduce((sum, name) => sum + (sizes[name] ?? NaN), 0) / 2 ** 20
const TABLES = ["contacts", "activities", "threads"]

const main = async () => {
  const startedAt = new Date()
  const cleanups = cleanupStack()
  try {
    if (SIZES.length === 0) throw new Error("BENCH_SCALE must list row counts, e.g. 100000,1000000")
    const { serviceEnv, adminToken, key, workspaceId, db, boot, reused } = await firstBoot(cleanups, {
      database: "switchboard_bench_scale",
      prefix: "benchscale",
      settings: CLUSTER
    })
    if (!reused) {
      const added = await call(boot.port, "POST", `/v1/admin/workspaces/${workspaceId}/numbers`, {
        authorization: `Bearer ${adminToken}`
      }, JSON.stringify({ e164: NUMBER }))
      if (added.status !== 201) throw new Error(`admin addNumber: ${added.status} ${added.body}`)
    }
    await boot.stop()
    const inboxId =
      (await db.query<{ inbox_id: string }>("SELECT inbox_id FROM numbers WHERE e164 = $1", [NUMBER])).rows[0]!.inbox_id
    const service = await startChild("service", "apps/server/node.ts", serviceEnv, await freePort())
    cleanups.push(service.stop)
    const target: Target = { server: "service", port: service.port, headers: { authorization: `Bearer ${key}` } }
    const messageTerms = messageSearchTerms(vocabulary(VOCAB))
    const pgVersion = (await db.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version
    const select = async (st: Statement) => (await db.query(st.text, [...st.values])).rows

    const steps: Array<Record<string, unknown>> = []
    const skipped: Array<{ size: number; reason: string }> = []
    const figures: Array<Figure> = []
    const count = async (table: string) =>
      Number((await db.query(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = $1`, [workspaceId])).rows[0].n)
    // A kept database (BENCH_KEEP_DIR) is topped up from what an earlier run seeded.
    let seeded = reused ? Math.min(await count("contacts"), await count("activities")) : 0
    let threads = reused ? await count("threads") : 0
    if (reused) log(`kept database: ${fmt(seeded)} contacts and activities, ${fmt(threads)} threads`)
    let rowsPerSecond = NaN
    const loads: Array<number> = [loadavg()[0]!]
    for (const size of SIZES) {
      const spent = (Date.now() - startedAt.getTime()) / 1000
      if (size < seeded) {
        skipped.push({ size, reason: `the kept database already holds ${fmt(seeded)} rows` })
        continue
      }
      const estimate = (2 * (size - seeded)) / rowsPerSecond
      if (spent + estimate > BUDGET) {
        const reason = `seeding ${fmt(size - seeded)} more contacts and activities would take about ${
          fmt(estimate)
        } s at the last size's rate; ${fmt(spent)} s of the ${fmt(BUDGET)} s budget are spent`
        log(`skipping ${fmt(size)}: ${reason}`)
        skipped.push({ size, reason })
        continue
      }
      log(`--- ${fmt(size)} rows: topping up from ${fmt(seeded)}`)
      const t0 = performance.now()
      const adding = size - seeded
      const newThreads = adding === 0 ? 0 : Math.max(1, Math.round(adding / MESSAGES_PER_THREAD))
      const contacts = adding === 0 ? { seconds: 0 } : await seedContacts(db, {
        workspaceId,
        count: adding,
        first: seeded + 1,
        batchSize: 100_000,
        log: (l) => log(`  ${l}`)
      })
      const messages = adding === 0 ? { seconds: 0 } : await seedMessages(db, {
        workspaceId,
        inboxId,
        numberE164: NUMBER,
        messages: adding,
        threads: newThreads,
        threadsBefore: threads,
        batchSize: 20_000,
        vocabSize: VOCAB,
        log: (l) => log(`  ${l}`)
      })
      const seedSeconds = (performance.now() - t0) / 1000
      if (adding > 0) rowsPerSecond = (2 * adding) / seedSeconds
      seeded = size
      threads += newThreads
      const rows = {
        contacts: await count("contacts"),
        activities: await count("activities"),
        threads: await count("threads")
      }
      const sizes = Object.fromEntries(
        (await db.query<{ name: string; bytes: string }>(
          "SELECT relname AS name, pg_relation_size(oid) AS bytes FROM pg_class WHERE relname = ANY($1)",
          [[...INDEXES, ...TABLES]]
        )).rows
          .map((r) => [r.name, Number(r.bytes)])
      ) as Record<string, number>
      log(
        `  seeded in ${seedSeconds.toFixed(1)} s (contacts ${contacts.seconds.toFixed(1)} s, activities ${
          messages.seconds.toFixed(1)
        } s); rows ${JSON.stringify(rows)}`
      )
      log(`  sizes (MB): ${[...TABLES, ...INDEXES].map((n) => `${n} ${fmt((sizes[n] ?? NaN) / 2 ** 20)}`).join(", ")}`)

      const contactPath = (term: string) => `/v1/api/contacts?q=${encodeURIComponent(term)}&limit=${CONTACT_LIMIT}`
      const messagePath = (term: string) => `/v1/api/messages/search?q=${encodeURIComponent(term)}`
      const probes = {
        contactsService: await probeService(target, SEARCH_TERMS, contactPath),
        contactsSql: await probeSql(db, SEARCH_TERMS, async (term) => listStatement(workspaceId, term, CONTACT_LIMIT)),
        messagesService: await probeService(target, messageTerms, messagePath),
        messagesSql: await probeSql(
          db,
          messageTerms,
          (term) => messageSearchFor(select, workspaceId, term, MESSAGE_LIMIT)
        ),
        messagesSqlBefore: await probeSql(
          db,
          messageTerms,
          async (term) => searchStatement(workspaceId, term, MESSAGE_LIMIT)
        )
      }
      loads.push(loadavg()[0]!)
      for (const [name, p] of Object.entries(probes)) {
        log(
          `  ${name.padEnd(16)} p50 ${fmt(p.p50, 1).padStart(6)} ms  p95 ${fmt(p.p95, 1).padStart(6)} ms  p99 ${
            fmt(p.p99, 1).padStart(6)
          } ms  max ${fmt(p.max, 1).padStart(6)} ms  non-200 ${p.non200}`
        )
      }
      for (const [name, p] of [["contacts", probes.contactsSql], ["messages", probes.messagesSql]] as const) {
        log(
          `  slowest ${name} terms on pg (median ms): ${
            p.slowest.map((t) => `"${t.term}" ${fmt(t.median, 1)}`).join(", ")
          }`
        )
        for (const t of p.slowest) {
          log(`    EXPLAIN (ANALYZE, BUFFERS) q="${t.term}"`)
          for (const line of t.plan) log(`      ${line.trim()}`)
        }
      }
      steps.push({ size, rows, seedSeconds, sizes, probes, loadAverage: loadavg()[0]! })

      const sizeLabel = label(size)
      const searchFigure = (what: "contacts" | "messages", service: Latency, sql: Latency): Figure => ({
        figure: what === "contacts"
          ? `contact search p95, ${sizeLabel} contacts (Postgres, sequential; p50 ${fmt(service.p50, 1)}, p99 ${
            fmt(service.p99, 1)
          })`
          : `message search p95, ${sizeLabel} messages (Postgres, sequential; p50 ${fmt(service.p50, 1)}, p99 ${
            fmt(service.p99, 1)
          })`,
        value: service.p95,
        unit: "ms",
        baseline: { label: "the same SQL on pg directly", value: sql.p95 },
        ratio: sql.p95 / service.p95,
        target: `p95 < ${TARGET[what]} ms`,
        met: service.p95 < TARGET[what]
      })
      const before = (what: "contacts" | "messages", now: Latency, then: Latency): Figure => ({
        figure: `${
          what === "contacts" ? "contact" : "message"
        } search SQL p95, ${sizeLabel} rows: the last word a prefix (p50 ${fmt(now.p50, 1)}, p99 ${
          fmt(now.p99, 1)
        }) beside every word a prefix (p50 ${fmt(then.p50, 1)}, p99 ${fmt(then.p99, 1)})`,
        value: now.p95,
        unit: "ms",
        baseline: { label: "every word a prefix, same run", value: then.p95 },
        ratio: then.p95 / now.p95
      })
      figures.push(
        searchFigure("contacts", probes.contactsService, probes.contactsSql),
        searchFigure("messages", probes.messagesService, probes.messagesSql),
        before("messages", probes.messagesSql, probes.messagesSqlBefore),
        {
          figure: `contact search GIN indexes (${SEARCH_INDEXES.contacts.join(" + ")}), ${sizeLabel} contacts`,
          value: ginMegabytes(sizes, "contacts"),
          unit: "MB"
        },
        {
          figure: `message search GIN indexes (${SEARCH_INDEXES.messages.join(" + ")}), ${sizeLabel} messages`,
          value: ginMegabytes(sizes, "messages"),
          unit: "MB"
        }
      )
    }

    const cpuModel = cpus()[0]?.model ?? "unknown"
    const line = "-".repeat(118)
    log()
    log(line)
    log(`Switchboard search cost as data grows  ${startedAt.toISOString()}`)
    log(
      `Postgres ${pgVersion} | Node ${process.version} | ${availableParallelism()} CPUs (${cpuModel}) | ${PROBE} sequential probes per search and size, after one pass over the terms`
    )
    log(`1-min load average: ${loads.map((l) => l.toFixed(1)).join(" -> ")} (start, then after each size's probes)`)
    log(line)
    log(
      `${"rows".padStart(11)}${"search".padStart(10)}${"service p50 / p95 / p99 ms".padStart(30)}${
        "SQL p50 / p95 / p99 ms".padStart(28)
      }${"SQL before".padStart(24)}${"GIN MB".padStart(9)}${"target".padStart(12)}${"seeded s".padStart(10)}`
    )
    for (const s of steps) {
      const p = s["probes"] as Record<string, Latency>
      const sizes = s["sizes"] as Record<string, number>
      const triple = (l: Latency) => `${fmt(l.p50, 1)} / ${fmt(l.p95, 1)} / ${fmt(l.p99, 1)}`
      for (const what of ["contacts", "messages"] as const) {
        const svc = p[`${what}Service`]!
        log(
          `${fmt(s["size"] as number).padStart(11)}${what.padStart(10)}${triple(svc).padStart(30)}${
            triple(p[`${what}Sql`]!).padStart(28)
          }${(what === "messages" ? triple(p["messagesSqlBefore"]!) : "").padStart(24)}${
            fmt(ginMegabytes(sizes, what), 1).padStart(9)
          }` +
            `${`${svc.p95 < TARGET[what] ? "met" : "MISSED"} <${TARGET[what]}`.padStart(12)}${
              (what === "contacts" ? fmt(s["seedSeconds"] as number) : "").padStart(10)
            }`
        )
      }
    }
    for (const s of skipped) log(`not run: ${fmt(s.size)} rows (${s.reason})`)
    log(line)

    const results = {
      startedAt: startedAt.toISOString(),
      postgres: pgVersion,
      node: process.version,
      cpus: availableParallelism(),
      cpuModel,
      loadAverage: loads,
      settings: {
        sizes: SIZES,
        probe: PROBE,
        budgetSeconds: BUDGET,
        vocabulary: VOCAB,
        messagesPerThread: MESSAGES_PER_THREAD
      },
      steps,
      skipped,
      contactTerms: SEARCH_TERMS,
      messageTerms
    }
    mkdirSync(join(benchDir, "results"), { recursive: true })
    writeFileSync(join(benchDir, "results", "scale.json"), JSON.stringify(results, null, 2) + "\n")
    // One figures file per set of sizes, so a 10M run kept apart (BENCH_KEEP_DIR) does not push the
    // default sizes' last run out of the table.
    const benchmark = SIZES.join() === DEFAULT_SIZES.join() ? "scale" : `scale-${SIZES.map(label).join("-")}`
    writeFigures({
      benchmark,
      startedAt: startedAt.toISOString(),
      host: `${availableParallelism()} CPUs, load ${loads.map((l) => l.toFixed(1)).join("/")}`,
      figures
    })
    log(`wrote apps/bench/results/scale.json and figures-${benchmark}.json`)
  } finally {
    await cleanups.run()
  }
}

runMain(main)
