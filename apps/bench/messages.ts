/**
 * `npm run bench:messages`: messaging benchmark of the service on Postgres. Prints figures (and
 * writes apps/bench/results/messages.json); it never asserts.
 *
 * 1. Postgres: BENCH_DATABASE_URL (a fresh database on it, dropped at the end) or a throwaway
 *    cluster from test/support/postgres.ts. First boot of the service migrates and prints the test
 *    key; a sending number is seeded through the admin API.
 * 2. BENCH_MESSAGES activities (SMS, calls and voicemails with transcripts) over BENCH_THREADS
 *    threads, 70% with a contact, are bulk-inserted (messagesSeed.ts); the stored tsvectors are
 *    checked against what the app computes on a sample.
 * 3. The service (apps/server/node.ts) and a bare node:http + pg baseline (messagesBaseline.ts) are
 *    loaded with autocannon, alternating rounds: POST /v1/api/messages (test key: simulated, varied
 *    `to` over 1,000 numbers and varied bodies), GET /v1/api/conversations?limit=50 (first page) and
 *    a page with a cursor (pre-fetched from each server's own listing).
 * 4. Search latency: BENCH_PROBE sequential single-client GET /v1/api/messages/search?q=<term>
 *    (default limit 25) over ~50 terms. Then EXPLAIN (ANALYZE, BUFFERS) of the slowest terms, and
 *    the current SQL vs a two-step shape (newest window first, GIN fallback) timed directly on pg.
 *
 * Env: BENCH_MESSAGES (1000000), BENCH_THREADS (20000), BENCH_SECONDS (10), BENCH_WARMUP (10),
 * BENCH_ROUNDS (2), BENCH_CONNECTIONS (50), BENCH_PROBE (500), BENCH_BATCH (20000),
 * BENCH_VOCAB (5000), BENCH_WINDOW (2000) and BENCH_WINDOW_WIDE (20000): the two-step windows measured,
 * BENCH_DATABASE_URL.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { join } from "node:path"
import { searchableText } from "../../core/conversations/model.ts"
import { type Figure, writeFigures } from "./figures.ts"
import {
  benchDir,
  call,
  childrenCpuSeconds,
  cleanupStack,
  firstBoot,
  fmt,
  freePort,
  groupCpuSeconds,
  intEnv,
  load,
  log,
  percentile,
  type RoundFigures,
  type Route,
  sleep,
  startChild,
  type Target,
  WARMUP_SECONDS
} from "./harness.ts"
import { type MessageSeedResult, participant, seedMessages, textGen } from "./messagesSeed.ts"
import { messageSearchTerms, prefixQuery, searchStatement, searchWords, twoStepStatements } from "./messagesSql.ts"
import { explain } from "./sql.ts"

const MESSAGES = intEnv("BENCH_MESSAGES", 1_000_000)
const THREADS = Math.min(intEnv("BENCH_THREADS", 20_000), MESSAGES)
const SECONDS = intEnv("BENCH_SECONDS", 10)
const WARMUP = intEnv("BENCH_WARMUP", WARMUP_SECONDS)
const ROUNDS = intEnv("BENCH_ROUNDS", 2)
const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50)
const PROBE = intEnv("BENCH_PROBE", 500)
const BATCH = intEnv("BENCH_BATCH", 20_000)
const VOCAB = intEnv("BENCH_VOCAB", 5000)
const WINDOW = intEnv("BENCH_WINDOW", 2000)
const WINDOW_WIDE = intEnv("BENCH_WINDOW_WIDE", 20_000)
const RECIPIENTS = 1000
const LIST_LIMIT = 50
const SEARCH_LIMIT = 25 // the API default: the probe sends no `limit`
const NUMBER = "+14155550100"
const P95_TARGET_MS = 50

interface LoadRow {
  readonly route: string
  readonly server: "service" | "baseline"
  readonly reqPerSec: number
  readonly rounds: ReadonlyArray<number>
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
}

const main = async () => {
  const startedAt = new Date()
  const cleanups = cleanupStack()

  try {
    // 1. Postgres, first boot, a sending number
    const { databaseUrl, serviceEnv, adminToken, key, workspaceId, db, boot } = await firstBoot(cleanups, {
      database: "switchboard_bench_messages",
      prefix: "benchmsg"
    })
    const added = await call(boot.port, "POST", `/v1/admin/workspaces/${workspaceId}/numbers`, {
      authorization: `Bearer ${adminToken}`
    }, JSON.stringify({ e164: NUMBER }))
    await boot.stop()
    if (added.status !== 201) throw new Error(`admin addNumber: ${added.status} ${added.body}`)
    const inboxId =
      (await db.query<{ inbox_id: string }>("SELECT inbox_id FROM numbers WHERE e164 = $1", [NUMBER])).rows[0]!.inbox_id
    log(`workspace ${workspaceId}, number ${NUMBER} (inbox ${inboxId}), key ${key.slice(0, 13)}…`)

    // 2. Bulk load
    log(`seeding ${fmt(MESSAGES)} activities over ${fmt(THREADS)} threads in batches of ${fmt(BATCH)}`)
    const seed: MessageSeedResult = await seedMessages(db, {
      workspaceId,
      inboxId,
      numberE164: NUMBER,
      messages: MESSAGES,
      threads: THREADS,
      batchSize: BATCH,
      vocabSize: VOCAB,
      log: (l) => log(`  ${l}`)
    })
    log(
      `seeded in ${seed.seconds.toFixed(1)} s (insert ${seed.insertSeconds.toFixed(1)} s, GIN ${
        seed.indexSeconds.toFixed(1)
      } s, vacuum/analyze ${seed.analyzeSeconds.toFixed(1)} s)`
    )

    // the stored tsvector must be to_tsvector('simple', searchableText(activity)), as the app writes it
    const sample = await db.query<
      { body: string | null; call_transcript: Array<{ text: string }> | null; search: string }
    >(
      "SELECT body, call_transcript, search::text AS search FROM activities WHERE workspace_id = $1 ORDER BY random() LIMIT 1000",
      [workspaceId]
    )
    const expected = await db.query<{ v: string }>(
      "SELECT to_tsvector('simple', s)::text AS v FROM unnest($1::text[]) WITH ORDINALITY AS u(s, o) ORDER BY o",
      [sample.rows.map((r) => searchableText({ body: r.body, callTranscript: r.call_transcript as never }))]
    )
    const tsvMatches = sample.rows.filter((r, i) => r.search === expected.rows[i]!.v).length
    const sampledCalls = sample.rows.filter((r) => r.call_transcript !== null).length
    log(
      `search tsvector checked against searchableText (core/conversations/model.ts): ${tsvMatches}/${sample.rows.length} match (${sampledCalls} with transcripts)`
    )

    const sizes = (await db.query<{ name: string; size: string }>(
      `SELECT relname AS name, pg_size_pretty(pg_relation_size(oid)) AS size FROM pg_class
       WHERE relname IN ('activities', 'activities_search', 'activities_recent', 'threads', 'contacts') ORDER BY relname`
    )).rows
    log(`sizes: ${sizes.map((s) => `${s.name} ${s.size}`).join(", ")}`)

    // 3. Servers
    const service = await startChild("service", "apps/server/node.ts", serviceEnv, await freePort())
    cleanups.push(service.stop)
    const baseline = await startChild(
      "baseline",
      "apps/bench/messagesBaseline.ts",
      { DATABASE_URL: databaseUrl, WORKSPACE_ID: workspaceId, INBOX_ID: inboxId, NUMBER_E164: NUMBER },
      await freePort()
    )
    cleanups.push(baseline.stop)
    const targets: ReadonlyArray<Target> = [
      { server: "service", port: service.port, headers: { authorization: `Bearer ${key}` } },
      { server: "baseline", port: baseline.port, headers: {} }
    ]

    // POST bodies: pre-generated, varied texts to 1,000 recipients
    const gen = textGen(VOCAB, 4242)
    const posts = Array.from(
      { length: 20_000 },
      (_, i) =>
        JSON.stringify({
          to: participant(Math.floor(gen.rnd() * RECIPIENTS)),
          body: gen.body().slice(0, 1600) || `message ${i}`
        })
    )
    let postIndex = 0
    const sendRoute: Route = {
      name: "POST /v1/api/messages",
      method: "POST",
      next: () => ({ path: "/v1/api/messages", body: posts[postIndex++ % posts.length]! })
    }

    // sample run: both servers accept a send with the same response shape
    for (const t of targets) {
      const r = await call(t.port, "POST", "/v1/api/messages", t.headers, posts[0]!)
      if (r.status !== 201) throw new Error(`sample send to ${t.server}: ${r.status} ${r.body.slice(0, 300)}`)
      const shape = Object.keys(JSON.parse(r.body).message).sort().join(",")
      log(`sample send ${t.server}: 201, message fields ${shape}`)
    }

    // autocannon stops at its deadline with sends still queued in the server: wait until writes
    // stop, so a round never overlaps the next one and listings compare a settled state
    const settle = async () => {
      let last = ""
      for (let i = 0; i < 120; i++) {
        const now = String(
          (await db.query("SELECT max(created_at) AS m FROM activities WHERE workspace_id = $1", [workspaceId])).rows[0]
            .m
        )
        if (now === last) return
        last = now
        await sleep(500)
      }
    }
    // CPU per request: the server's process group and the Postgres backends (children of the postmaster)
    const backendPid = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid
    let postmaster = NaN
    try {
      const stat = readFileSync(`/proc/${backendPid}/stat`, "utf8")
      postmaster = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    } catch {
      // Postgres on another machine: no figures
    }
    const pidOf = { service: service.pid, baseline: baseline.pid }
    const activityCount = async () =>
      Number((await db.query("SELECT count(*) AS n FROM activities WHERE workspace_id = $1", [workspaceId])).rows[0].n)
    const cpu = new Map<string, { server: number; postgres: number; requests: number }>()
    const figures = new Map<string, Array<RoundFigures>>()
    const runRoute = async (route: Route) => {
      for (const target of targets) {
        const w = await load(target, route, WARMUP, CONNECTIONS)
        if (route.method === "POST") await settle()
        log(`warm-up ${target.server.padEnd(8)} ${route.name}: ${fmt(w.reqPerSec)} req/s, non-2xx ${w.non2xx}`)
      }
      for (let round = 1; round <= ROUNDS; round++) {
        for (const target of targets) {
          const pid = pidOf[target.server]
          const before = {
            server: pid === undefined ? NaN : groupCpuSeconds(pid),
            postgres: childrenCpuSeconds(postmaster),
            stored: route.method === "POST" ? await activityCount() : 0
          }
          const r = await load(target, route, SECONDS, CONNECTIONS)
          if (route.method === "POST") await settle()
          const served = route.method === "POST" ? (await activityCount()) - before.stored : r.total
          const k0 = `${route.name}|${target.server}`
          const acc = cpu.get(k0) ?? { server: 0, postgres: 0, requests: 0 }
          cpu.set(k0, {
            server: acc.server + (pid === undefined ? NaN : groupCpuSeconds(pid)) - before.server,
            postgres: acc.postgres + childrenCpuSeconds(postmaster) - before.postgres,
            requests: acc.requests + served
          })
          const k = `${route.name}|${target.server}`
          figures.set(k, [...(figures.get(k) ?? []), r])
          log(
            `round ${round} ${target.server.padEnd(8)} ${route.name}: ${
              fmt(r.reqPerSec)
            } req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors + r.timeouts}`
          )
        }
      }
    }
    const loadBefore = loadavg()[0]!
    const activitiesBefore = Number((await db.query("SELECT count(*) AS n FROM activities")).rows[0].n)
    await runRoute(sendRoute)
    const activitiesAfter = Number((await db.query("SELECT count(*) AS n FROM activities")).rows[0].n)
    const outboxRows = Number((await db.query("SELECT count(*) AS n FROM outbox_events")).rows[0].n)
    log(`sends stored: ${fmt(activitiesAfter - activitiesBefore)} activities, ${fmt(outboxRows)} outbox events`)
    // unloaded latency: sequential single-client sends
    const sendLatency: Record<string, { p50: number; p95: number }> = {}
    for (const t of targets) {
      const ms: Array<number> = []
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now()
        const r = await call(t.port, "POST", "/v1/api/messages", t.headers, posts[postIndex++ % posts.length]!)
        ms.push(performance.now() - t0)
        if (r.status !== 201) throw new Error(`sequential send ${t.server}: ${r.status} ${r.body.slice(0, 200)}`)
      }
      ms.sort((a, b) => a - b)
      sendLatency[t.server] = { p50: percentile(ms, 0.5), p95: percentile(ms, 0.95) }
    }
    log(
      `sequential single-client sends: ${
        targets.map((t) =>
          `${t.server} p50 ${fmt(sendLatency[t.server]!.p50, 1)} ms / p95 ${fmt(sendLatency[t.server]!.p95, 1)} ms`
        ).join(", ")
      }`
    )

    // GET /conversations: first page, and cursor pages pre-fetched from each server's own listing
    const listPath = (cursor?: string) =>
      `/v1/api/conversations?limit=${LIST_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`
    const cursors = new Map<string, Array<string>>()
    let identical = 0
    let compared = 0
    const pagesOf = new Map<string, Array<string>>()
    for (const t of targets) {
      const list: Array<string> = []
      const pages: Array<string> = []
      let cursor: string | undefined
      for (let page = 0; page < 41; page++) {
        const r = await call(t.port, "GET", listPath(cursor), t.headers)
        if (r.status !== 200) throw new Error(`list ${t.server}: ${r.status} ${r.body.slice(0, 300)}`)
        const parsed = JSON.parse(r.body) as { conversations: unknown; nextCursor: string | null }
        pages.push(JSON.stringify(parsed.conversations))
        if (parsed.nextCursor === null) break
        cursor = parsed.nextCursor
        list.push(cursor)
      }
      cursors.set(t.server, list)
      pagesOf.set(t.server, pages)
    }
    const sp = pagesOf.get("service")!
    const bp = pagesOf.get("baseline")!
    for (let i = 0; i < Math.min(sp.length, bp.length); i++) {
      compared++
      if (sp[i] === bp[i]) identical++
    }
    log(
      `sample listing: ${compared} pages from each server; identical conversations (cursor aside): ${identical}/${compared}`
    )
    const firstDiff = sp.findIndex((s, i) => s !== bp[i])
    if (firstDiff >= 0 && bp[firstDiff] !== undefined) {
      const a = JSON.parse(sp[firstDiff]!) as Array<unknown>
      const b = JSON.parse(bp[firstDiff]!) as Array<unknown>
      const j = a.findIndex((x, k) => JSON.stringify(x) !== JSON.stringify(b[k]))
      log(
        `  first difference, page ${firstDiff + 1} item ${j}:\n    service  ${JSON.stringify(a[j])}\n    baseline ${
          JSON.stringify(b[j])
        }`
      )
    }
    const firstPage: Route = {
      name: `GET /v1/api/conversations?limit=${LIST_LIMIT}`,
      method: "GET",
      next: () => ({ path: listPath() })
    }
    let cursorIndex = 0
    const cursorPage: Route = {
      name: `  ... &cursor= (pages 2-${(cursors.get("service")?.length ?? 0) + 1})`,
      method: "GET",
      next: (t) => {
        const list = cursors.get(t.server)!
        return { path: listPath(list[cursorIndex++ % list.length]) }
      }
    }
    await runRoute(firstPage)
    if ((cursors.get("service")?.length ?? 0) > 0 && (cursors.get("baseline")?.length ?? 0) > 0) {
      await runRoute(cursorPage)
    }

    // 4. Search latency probe (service), sequential single client
    const terms = messageSearchTerms(gen.vocab)
    const searchPath = (term: string) => `/v1/api/messages/search?q=${encodeURIComponent(term)}`
    const svc = targets[0]!
    for (const term of terms.slice(0, 10)) await call(svc.port, "GET", searchPath(term), svc.headers) // warm-up
    const runProbe = async () => {
      const all: Array<number> = []
      const byTerm = new Map<string, { ms: Array<number>; results: number }>()
      let non200 = 0
      for (let i = 0; i < PROBE; i++) {
        const term = terms[i % terms.length]!
        const t0 = performance.now()
        const res = await call(svc.port, "GET", searchPath(term), svc.headers)
        const ms = performance.now() - t0
        if (res.status !== 200) non200++
        all.push(ms)
        const entry = byTerm.get(term) ??
          { ms: [], results: res.status === 200 ? (JSON.parse(res.body).results as Array<unknown>).length : -1 }
        entry.ms.push(ms)
        byTerm.set(term, entry)
      }
      all.sort((a, b) => a - b)
      return {
        requests: PROBE,
        p50: percentile(all, 0.5),
        p95: percentile(all, 0.95),
        p99: percentile(all, 0.99),
        max: all[all.length - 1]!,
        non200,
        byTerm: [...byTerm]
          .map(([term, e]) => ({
            term,
            median: percentile([...e.ms].sort((a, b) => a - b), 0.5),
            max: Math.max(...e.ms),
            results: e.results
          }))
          .sort((a, b) => b.median - a.median)
      }
    }
    // The sends went into the GIN index's pending list (fastupdate), which the planner costs in and
    // every bitmap scan reads: probe as the write rounds left it, then with the list merged.
    const ginPending = async () => {
      try {
        await db.query("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        const r = (await db.query<{ pending_pages: number; pending_tuples: string }>(
          "SELECT pending_pages, pending_tuples FROM pgstatginindex('activities_search')"
        )).rows[0]!
        return { pages: Number(r.pending_pages), tuples: Number(r.pending_tuples) }
      } catch {
        return { pages: NaN, tuples: NaN }
      }
    }
    const rareTerm = terms.find((t) => t === "xylophonist")!
    const rarePlan = async () => {
      const st = searchStatement(workspaceId, rareTerm, SEARCH_LIMIT)
      const plan = await explain(db, st, "COSTS")
      return plan.find((l) => /Scan on activities|Scan using activities/.test(l))?.trim().replace(/\s+\(cost.*$/, "") ??
        "?"
    }
    const explainSlowest = async (byTerm: ReadonlyArray<{ term: string; median: number }>) => {
      const out: Array<{ term: string; medianMs: number; plan: Array<string> }> = []
      for (const { term, median } of byTerm.slice(0, 3)) {
        const st = searchStatement(workspaceId, term, SEARCH_LIMIT)
        const plan = await explain(db, st)
        out.push({ term, medianMs: median, plan })
      }
      return out
    }
    const timed = async (f: () => Promise<number>) => {
      const runs: Array<{ ms: number; rows: number }> = []
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now()
        const rows = await f()
        runs.push({ ms: performance.now() - t0, rows })
      }
      runs.sort((a, b) => a.ms - b.ms)
      return runs[1]!
    }
    const current = (term: string) => async () => {
      const st = searchStatement(workspaceId, term, SEARCH_LIMIT)
      return (await db.query(st.text, [...st.values])).rows.length
    }
    const twoStep = (term: string, gin: boolean, window: number) => async () => {
      const s = twoStepStatements(workspaceId, term, SEARCH_LIMIT, window)
      const recent = (await db.query(s.recent.text, [...s.recent.values])).rows
      if (recent.length === SEARCH_LIMIT) return recent.length
      const edge = (await db.query<{ created_at: Date; id: string }>(s.edge.text, [...s.edge.values])).rows[0]
      if (edge === undefined) return recent.length
      const older = (gin ? s.olderGin : s.older)(edge, SEARCH_LIMIT - recent.length)
      return recent.length + (await db.query(older.text, [...older.values])).rows.length
    }
    const estimate = async (term: string) =>
      Number(
        (await db.query("EXPLAIN (FORMAT JSON) SELECT 1 FROM activities WHERE search @@ to_tsquery('simple', $1)", [
          prefixQuery(searchWords(term))
        ])).rows[0]["QUERY PLAN"][0].Plan["Plan Rows"]
      )
    type Variant = "current" | "twoStep" | "twoStepGin" | "twoStepGinWide" | "currentStats1000"
    const variants: ReadonlyArray<{ key: Variant; label: string }> = [
      { key: "current", label: "current SQL (adapters/sql/conversations.ts)" },
      { key: "twoStep", label: `two-step as contacts (newest ${fmt(WINDOW)}, then the same query on older rows)` },
      { key: "twoStepGin", label: `two-step, newest ${fmt(WINDOW)}, then GIN-only (MATERIALIZED CTE + sort)` },
      { key: "twoStepGinWide", label: `two-step, newest ${fmt(WINDOW_WIDE)}, then GIN-only (MATERIALIZED CTE + sort)` },
      { key: "currentStats1000", label: "current SQL after SET STATISTICS 1000 on search + ANALYZE" }
    ]

    // State A: as the write rounds left the GIN index (new entries in its pending list)
    const pendingAfterWrites = await ginPending()
    const planAfterWrites = await rarePlan()
    const probeAfterWrites = await runProbe()
    const explainsAfterWrites = await explainSlowest(probeAfterWrites.byTerm)
    // the same terms timed directly on pg in this state, for the current SQL and candidate fixes
    const direct: Array<
      {
        term: string
        matches: number
        estimated: number
        estimatedStats1000: number
        ms: Record<Variant, number>
        rows: Record<Variant, number>
      }
    > = []
    for (const term of terms) {
      const matches = Number(
        (await db.query(
          "SELECT count(*) AS n FROM activities WHERE workspace_id = $1 AND search @@ to_tsquery('simple', $2)",
          [workspaceId, prefixQuery(searchWords(term))]
        )).rows[0].n
      )
      const a = await timed(current(term))
      const b = await timed(twoStep(term, false, WINDOW))
      const c = await timed(twoStep(term, true, WINDOW))
      const d = await timed(twoStep(term, true, WINDOW_WIDE))
      direct.push({
        term,
        matches,
        estimated: await estimate(term),
        estimatedStats1000: NaN,
        ms: { current: a.ms, twoStep: b.ms, twoStepGin: c.ms, twoStepGinWide: d.ms, currentStats1000: NaN },
        rows: { current: a.rows, twoStep: b.rows, twoStepGin: c.rows, twoStepGinWide: d.rows, currentStats1000: NaN }
      })
    }
    // a larger statistics sample for the tsvector column (ANALYZE leaves the pending list alone), then back
    await db.query("ALTER TABLE activities ALTER COLUMN search SET STATISTICS 1000")
    await db.query("ANALYZE activities")
    const pendingStats1000 = await ginPending()
    const planStats1000 = await rarePlan()
    for (const d of direct) {
      const r = await timed(current(d.term))
      d.ms.currentStats1000 = r.ms
      d.rows.currentStats1000 = r.rows
      d.estimatedStats1000 = await estimate(d.term)
    }
    await db.query("ALTER TABLE activities ALTER COLUMN search SET STATISTICS -1")
    await db.query("ANALYZE activities")

    // State B: pending list merged into the GIN tree
    await db.query("SELECT gin_clean_pending_list('activities_search'::regclass)")
    const pendingClean = await ginPending()
    const planClean = await rarePlan()
    const probe = await runProbe()
    const loadAfter = loadavg()[0]!
    const probes = [
      {
        state: `after the write rounds (GIN pending list ${fmt(pendingAfterWrites.pages)} pages, ${
          fmt(pendingAfterWrites.tuples)
        } entries)`,
        rarePlan: planAfterWrites,
        pending: pendingAfterWrites,
        ...probeAfterWrites
      },
      {
        state: `pending list merged (gin_clean_pending_list: ${fmt(pendingClean.pages)} pages)`,
        rarePlan: planClean,
        pending: pendingClean,
        ...probe
      }
    ]
    const stored = Number(
      (await db.query("SELECT count(*) AS n FROM activities WHERE workspace_id = $1", [workspaceId])).rows[0].n
    )

    const sortedMs = (xs: Array<number>) => [...xs].sort((a, b) => a - b)
    const directSummary = Object.fromEntries(
      variants.map(({ key }) => {
        const xs = sortedMs(direct.map((d) => d.ms[key]))
        return [key, {
          p50: percentile(xs, 0.5),
          p95: percentile(xs, 0.95),
          max: xs[xs.length - 1]!,
          sameResults: direct.filter((d) => d.rows[key] === d.rows.current).length
        }]
      })
    ) as Record<Variant, { p50: number; p95: number; max: number; sameResults: number }>
    const explains = [
      ...explainsAfterWrites.map((e) => ({ ...e, state: "after writes" })),
      ...(await explainSlowest(probe.byTerm)).map((e) => ({ ...e, state: "merged" }))
    ]
    const pgVersion = (await db.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version

    // 5. Report
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    const routes = [sendRoute, firstPage, cursorPage].filter((r) => figures.has(`${r.name}|service`))
    const rows: Array<LoadRow> = routes.flatMap((route) =>
      targets.map((t) => {
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
    const ratio = (route: string) =>
      rows.find((r) => r.route === route && r.server === "service")!.reqPerSec /
      rows.find((r) => r.route === route && r.server === "baseline")!.reqPerSec

    const cpuText = (r: LoadRow) => {
      const c = cpu.get(`${r.route}|${r.server}`)
      return c ? `${fmt((c.server * 1000) / c.requests, 2)} + ${fmt((c.postgres * 1000) / c.requests, 2)}` : ""
    }
    const cpuModel = cpus()[0]?.model ?? "unknown"
    const line = "-".repeat(136)
    log()
    log(line)
    log(`Switchboard messaging benchmark  ${startedAt.toISOString()}`)
    log(
      `activities ${fmt(stored)} (${fmt(seed.calls)} calls/voicemails seeded) | threads ${
        fmt(THREADS)
      }+ | Postgres ${pgVersion} | Node ${process.version} | ${availableParallelism()} CPUs (${cpuModel})`
    )
    log(
      `1-min load average: ${loadBefore.toFixed(1)} before load, ${
        loadAfter.toFixed(1)
      } after probe (anything else running on these cores skews the figures)`
    )
    log(
      `seeding ${
        seed.seconds.toFixed(1)
      } s | autocannon ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds per server, alternating, ${WARMUP} s warm-up | pool 20`
    )
    log(line)
    log(
      `${"route".padEnd(40)}${"server".padEnd(10)}${"req/s mean".padStart(12)}${"rounds".padStart(20)}${
        "p50 ms".padStart(9)
      }${"p99 ms".padStart(9)}${"non2xx".padStart(8)}${"errors".padStart(8)}${"svc/base".padStart(10)}${
        "CPU ms/req node+pg".padStart(20)
      }`
    )
    for (const r of rows) {
      log(
        `${(r.server === "service" ? r.route : "").padEnd(40)}${r.server.padEnd(10)}${fmt(r.reqPerSec).padStart(12)}${
          r.rounds.map((x) => fmt(x)).join(" / ").padStart(20)
        }` +
          `${fmt(r.p50, 1).padStart(9)}${fmt(r.p99, 1).padStart(9)}${String(r.non2xx).padStart(8)}${
            String(r.errors).padStart(8)
          }` +
          `${(r.server === "service" ? ratio(r.route).toFixed(2) : "").padStart(10)}${cpuText(r).padStart(20)}`
      )
    }
    log(
      `sequential single-client POST: ${
        targets.map((t) =>
          `${t.server} p50 ${fmt(sendLatency[t.server]!.p50, 1)} ms, p95 ${fmt(sendLatency[t.server]!.p95, 1)} ms`
        ).join("; ")
      }`
    )
    log(line)
    log(
      `search probe: ${PROBE} sequential GET /v1/api/messages/search?q=<term> (limit ${SEARCH_LIMIT}) against the service, ${terms.length} terms, ${
        fmt(stored)
      } activities`
    )
    for (const p of probes) {
      log(`  ${p.state}:`)
      log(
        `    p50 ${fmt(p.p50, 1)} ms | p95 ${fmt(p.p95, 1)} ms | p99 ${fmt(p.p99, 1)} ms | max ${
          fmt(p.max, 1)
        } ms | non-200 ${p.non200} | target p95 < ${P95_TARGET_MS} ms: ${p.p95 < P95_TARGET_MS ? "met" : "MISSED"}`
      )
      log(`    plan for a word in no message ("${rareTerm}"): ${p.rarePlan}`)
      log(
        `    slowest (median ms / matching rows): ${
          p.byTerm.slice(0, 5).map((t) =>
            `"${t.term}" ${fmt(t.median, 1)} / ${fmt(direct.find((d) => d.term === t.term)?.matches ?? NaN)}`
          ).join(", ")
        }`
      )
    }
    log(line)
    log(
      `the same ${terms.length} terms timed directly on pg (median of 3 runs each), GIN pending list as the writes left it:`
    )
    log(`${"  variant".padEnd(80)}${"p50 ms".padStart(9)}${"p95 ms".padStart(9)}${"max ms".padStart(9)}  same results`)
    for (const { key, label } of variants) {
      const v = directSummary[key]
      log(
        `${`  ${label}`.padEnd(80)}${fmt(v.p50, 1).padStart(9)}${fmt(v.p95, 1).padStart(9)}${
          fmt(v.max, 1).padStart(9)
        }  ${v.sameResults}/${direct.length}`
      )
    }
    log(
      `  with STATISTICS 1000 (pending list ${
        fmt(pendingStats1000.pages)
      } pages) the "${rareTerm}" plan is: ${planStats1000}`
    )
    log(
      `  ${"slowest terms (current SQL)".padEnd(26)}${"matches".padStart(9)}${"est.".padStart(7)}${
        "est.1000".padStart(9)
      }${"current".padStart(9)}${"2-step".padStart(9)}${"GIN 2k".padStart(9)}${"GIN 20k".padStart(9)}${
        "stats1000".padStart(10)
      }`
    )
    for (const d of [...direct].sort((a, b) => b.ms.current - a.ms.current).slice(0, 8)) {
      log(
        `  ${`"${d.term}"`.padEnd(26)}${fmt(d.matches).padStart(9)}${fmt(d.estimated).padStart(7)}${
          fmt(d.estimatedStats1000).padStart(9)
        }` +
          `${fmt(d.ms.current, 1).padStart(9)}${fmt(d.ms.twoStep, 1).padStart(9)}${
            fmt(d.ms.twoStepGin, 1).padStart(9)
          }${fmt(d.ms.twoStepGinWide, 1).padStart(9)}${fmt(d.ms.currentStats1000, 1).padStart(10)}`
      )
    }
    for (const key of ["twoStepGin", "twoStepGinWide"] as const) {
      const worst = [...direct].sort((a, b) => b.ms[key] - a.ms[key]).slice(0, 3)
      log(
        `  slowest with ${key === "twoStepGin" ? `GIN ${fmt(WINDOW)}` : `GIN ${fmt(WINDOW_WIDE)}`}: ${
          worst.map((d) => `"${d.term}" ${fmt(d.ms[key], 1)} ms (${fmt(d.matches)} matches)`).join(", ")
        }`
      )
    }
    log(line)
    log(
      `EXPLAIN (ANALYZE, BUFFERS) of the slowest probe terms${
        probes.every((p) => p.p95 < P95_TARGET_MS)
          ? " (p95 met; for reference)"
          : ""
      }:`
    )
    for (const e of explains) {
      const nodes = e.plan.filter((l) =>
        /->|^Limit|Execution Time|Rows Removed|Index Cond|Filter:|Recheck Cond|Heap Blocks|Buffers: shared/.test(
          l.trim()
        )
      ).slice(0, 9)
      log(`  q="${e.term}" (${e.state}; probe median ${fmt(e.medianMs, 1)} ms)`)
      for (const n of nodes) log(`    ${n.trim().slice(0, 150)}`)
    }
    log(line)

    const results = {
      startedAt: startedAt.toISOString(),
      activities: stored,
      threads: THREADS,
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
        listLimit: LIST_LIMIT,
        searchLimit: SEARCH_LIMIT,
        vocabulary: VOCAB,
        window: WINDOW,
        windowWide: WINDOW_WIDE,
        recipients: RECIPIENTS,
        poolSize: 20
      },
      seed: { ...seed, sizes, tsvectorCheck: { sampled: sample.rows.length, matching: tsvMatches } },
      listingCheck: { pages: compared, identical },
      load: rows.map((r) => {
        const c = cpu.get(`${r.route}|${r.server}`)
        return {
          ...r,
          ratioServiceToBaseline: r.server === "service" ? ratio(r.route) : null,
          cpuMsPerRequest: c
            ? {
              server: (c.server * 1000) / c.requests,
              postgres: (c.postgres * 1000) / c.requests,
              requests: c.requests
            }
            : null
        }
      }),
      sequentialSendLatency: sendLatency,
      searchProbes: probes,
      searchDirect: {
        state: "GIN pending list as the writes left it",
        pending: pendingAfterWrites,
        variants,
        summary: directSummary,
        stats1000RarePlan: planStats1000,
        terms: direct
      },
      searchTerms: terms,
      explain: explains
    }
    const outDir = join(benchDir, "results")
    mkdirSync(outDir, { recursive: true })
    writeFileSync(join(outDir, "messages.json"), JSON.stringify(results, null, 2) + "\n")
    log(`wrote ${join("apps", "bench", "results", "messages.json")}`)

    // the headline figures, in the shape every benchmark shares (figures.ts)
    const loadFigure = (route: string, label: string, target?: number): Array<Figure> => {
      const service = rows.find((r) => r.route === route && r.server === "service")
      const floor = rows.find((r) => r.route === route && r.server === "baseline")
      if (service === undefined || floor === undefined) return []
      const r = service.reqPerSec / floor.reqPerSec
      return [{
        figure: label,
        value: service.reqPerSec,
        unit: "req/s",
        baseline: { label: "bare node:http + pg, same SQL", value: floor.reqPerSec },
        ratio: r,
        ...(target === undefined ? {} : { target: `>= ${target} of the floor`, met: r >= target })
      }]
    }
    const merged = probes[probes.length - 1]!
    const written = writeFigures({
      benchmark: "messages",
      startedAt: startedAt.toISOString(),
      host: `${availableParallelism()} CPUs (${cpuModel}), load average ${
        loadBefore.toFixed(2)
      } before the send rounds`,
      figures: [
        ...loadFigure(sendRoute.name, `POST /v1/api/messages (Postgres, test key, ${fmt(stored)} activities)`, 0.5),
        {
          figure: "POST /v1/api/messages, single client, p50",
          value: sendLatency["service"]!.p50,
          unit: "ms",
          baseline: { label: "bare node:http + pg, same transaction", value: sendLatency["baseline"]!.p50 },
          ratio: sendLatency["baseline"]!.p50 / sendLatency["service"]!.p50
        },
        ...loadFigure(firstPage.name, `GET /v1/api/conversations?limit=${LIST_LIMIT}, first page`),
        ...loadFigure(cursorPage.name, `GET /v1/api/conversations?limit=${LIST_LIMIT}, cursor pages`),
        ...(["p50", "p95", "p99"] as const).map((p): Figure => ({
          figure: `GET /v1/api/messages/search ${p} (${fmt(stored)} activities, GIN pending list merged)`,
          value: merged[p],
          unit: "ms",
          ...(p === "p95" ? { target: `p95 < ${P95_TARGET_MS} ms`, met: merged.p95 < P95_TARGET_MS } : {})
        }))
      ]
    })
    log(`wrote ${written}`)
  } finally {
    await cleanups.run()
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
