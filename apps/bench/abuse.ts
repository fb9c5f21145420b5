/**
 * `npm run bench:abuse`: what one abusive key costs another workspace. A victim workspace reads
 * `GET /contacts/{id}` at 10 requests a second, first alone, then while one key of another workspace
 * does the worst valid thing it can at its rate limit (the default, 600 a minute: 10 a second), not
 * waiting for answers (as many in parallel as the server lets pile up):
 *
 * - big lists: `GET /contacts?limit=200` while its 200 newest contacts carry about 1 MB of notes each;
 * - big reads: `GET /contacts/{id}` of those;
 * - big writes: 1 MiB contacts (100 notes of 10,000 characters);
 * - contact searches and message searches whose terms match much or little of a large workspace;
 * - all of these in turn, and the worst invalid bodies the input bounds refuse.
 *
 * Runs on the embedded database (PGlite) and on Postgres (BENCH_DATABASES, default both). Prints
 * the victim's latency percentiles per phase with p50 against the quiet p50, and what the abuser's
 * requests were answered; writes apps/bench/results/abuse.json. Asserts nothing.
 *
 * Env: BENCH_SECONDS (15) per phase, BENCH_CONTACTS (20000) and BENCH_MESSAGES (50000) seeded into
 * the abuser's workspace, BENCH_DATABASES (embedded,postgres), BENCH_PHASES (all; names as printed,
 * comma-separated: the quiet phase always runs).
 */
import { PGlite } from "@electric-sql/pglite"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { pgliteOptions } from "../../adapters/pglite/PgliteClient.ts"
import { InputBounds } from "../../core/kernel/input.ts"
import { startPostgres } from "../../test/support/postgres.ts"
import {
  benchDir,
  call,
  cleanupStack,
  fmt,
  freePort,
  intEnv,
  log,
  percentile,
  runMain,
  sleep,
  startChild,
  startFlags
} from "./harness.ts"
import { seedMessages } from "./messagesSeed.ts"
import { seedContacts } from "./seed.ts"

const SECONDS = intEnv("BENCH_SECONDS", 15)
const CONTACTS = intEnv("BENCH_CONTACTS", 20_000)
const MESSAGES = intEnv("BENCH_MESSAGES", 50_000)
const DATABASES = (process.env["BENCH_DATABASES"] ?? "embedded,postgres").split(",").map((d) => d.trim())
/** Requests a second: the victim's reads, and the abuser's (the default rate limit, 600 a minute). */
const RATE = 10
const NUMBER = "+14155550100"
const BIG_CONTACTS = 200
const VICTIM_CONTACTS = 50

const note = (i: number) => `${i} `.padEnd(10_000, "lorem ipsum dolor sit amet ")
/** About 1 MB of notes: within every bound (100 notes of 10,000 characters), under the 1 MiB body limit. */
const bigContact = (i: number) => JSON.stringify({ firstName: `Big ${i}`, notes: Array.from({ length: 100 }, note) })

/** Refused by a bound: the worst invalid bodies. */
const worstBodies = [
  JSON.stringify({ firstName: "a", tags: Array.from({ length: 200_000 }, () => "a") }),
  JSON.stringify({
    firstName: "a",
    properties: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, "v"]))
  }),
  `{"firstName":"a","properties":{"x":${"[".repeat(3_000)}${"]".repeat(3_000)}}}`,
  JSON.stringify({
    firstName: "a",
    tags: Array.from({ length: InputBounds.arrayItems }, (_, i) => `t${i}`),
    notes: Array.from({ length: InputBounds.arrayItems }, (_, i) => `n${i}`)
  }),
  JSON.stringify({ firstName: "x" }).replace("x", "\\u0041".repeat(170_000))
]

interface Req {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body?: string
}

/** Terms matching much, some or nothing of the seeded names and texts (each its own cost). */
const contactTerms = ["a", "an", "mar", "son", "zzq", "555", "qx"]
const messageTerms = ["a", "t", "the", "table ready", "zzzq", "re"]
let turn = 0
/** The abuser's contacts of 1 MB, filled in by the setup. */
const bigIds: Array<string> = []
const next = <A>(items: ReadonlyArray<A>) => items[turn++ % items.length]!

const attacks: ReadonlyArray<readonly [string, (() => Req) | null]> = [
  ["quiet", null],
  ["big lists", () => ({ method: "GET", path: "/v1/api/contacts?limit=200" })],
  ["big reads", () => ({ method: "GET", path: `/v1/api/contacts/${next(bigIds)}` })],
  ["big writes", () => ({ method: "POST", path: "/v1/api/contacts", body: bigContact(turn++) })],
  ["contact search", () => ({ method: "GET", path: `/v1/api/contacts?limit=200&q=${next(contactTerms)}` })],
  [
    "message search",
    () => ({ method: "GET", path: `/v1/api/messages/search?limit=100&q=${encodeURIComponent(next(messageTerms))}` })
  ],
  ["invalid bodies", () => ({ method: "POST", path: "/v1/api/contacts", body: next(worstBodies) })]
]
const mixed = attacks.slice(1, 6).map(([, make]) => make!)
const PHASES = process.env["BENCH_PHASES"]?.split(",").map((p) => p.trim())
const all = [...attacks, ["all of them", () => next(mixed)()] as const].filter(([name, make]) =>
  make === null || PHASES === undefined || PHASES.includes(name)
)

const agent = new Agent({ keepAlive: true })
/** One request; answers its status (0: no answer) and milliseconds. */
const send = (port: number, key: string, { body, method, path }: Req) =>
  new Promise<{ status: number; ms: number }>((done) => {
    const started = performance.now()
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method,
        agent,
        timeout: 60_000,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) })
        }
      },
      (res) => {
        res.resume()
        res.on("end", () => done({ status: res.statusCode ?? 0, ms: performance.now() - started }))
      }
    )
    req.on("timeout", () => req.destroy())
    req.on("error", () => done({ status: 0, ms: performance.now() - started }))
    req.end(body)
  })

/** Starts `make` at RATE a second without waiting for answers; the stop answers the statuses counted. */
const abuser = (port: number, key: string, make: () => Req) => {
  const statuses = new Map<number, number>()
  const pending: Array<Promise<void>> = []
  const timer = setInterval(() => {
    pending.push(
      send(port, key, make()).then(({ status }) => void statuses.set(status, (statuses.get(status) ?? 0) + 1))
    )
  }, 1000 / RATE)
  return async () => {
    clearInterval(timer)
    await Promise.all(pending)
    return [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${n}x${s}`).join(" ")
  }
}

/** The victim's reads at RATE a second for SECONDS; latencies in ms, sorted. */
const victim = async (port: number, key: string, ids: ReadonlyArray<string>) => {
  const latencies: Array<number> = []
  const failed: Array<number> = []
  const pending: Array<Promise<void>> = []
  const end = Date.now() + SECONDS * 1000
  for (let next = Date.now(), i = 0; next < end; next += 1000 / RATE, i++) {
    await sleep(Math.max(0, next - Date.now()))
    pending.push(
      send(port, key, { method: "GET", path: `/v1/api/contacts/${ids[i % ids.length]}` }).then(({ ms, status }) => {
        latencies.push(ms)
        if (status !== 200) failed.push(status)
      })
    )
  }
  await Promise.all(pending)
  return { latencies: latencies.sort((a, b) => a - b), failed }
}

const expect = async (what: string, answer: Promise<{ status: number; body: string }>, status: number) => {
  const { body, status: got } = await answer
  if (got !== status) throw new Error(`${what}: ${got} ${body.slice(0, 300)}`)
  return JSON.parse(body) as Record<string, unknown>
}

interface Row {
  readonly database: string
  readonly phase: string
  readonly reads: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
  readonly ratio: number
  readonly failed: number
  readonly abuser: string
}

const run = async (database: string, cleanups: ReturnType<typeof cleanupStack>): Promise<Array<Row>> => {
  const dataDir = mkdtempSync(join(tmpdir(), "switchboard-abuse-"))
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  const adminToken = randomBytes(24).toString("hex")
  const env: Record<string, string> = { ADMIN_TOKEN: adminToken, DATA_DIR: join(dataDir, "service") }
  mkdirSync(env["DATA_DIR"]!)
  let seedClient: { query: pg.Client["query"]; end: () => Promise<unknown> }
  if (database === "postgres") {
    const handle = await startPostgres({ fresh: true, database: "switchboard_abuse" })
    if (handle === null) throw new Error("no Postgres binaries found")
    cleanups.push(handle.stop)
    env["DATABASE_URL"] = handle.url
  } else if (database !== "embedded") throw new Error(`BENCH_DATABASES: unknown database ${database}`)
  const flags = startFlags(database === "postgres" ? "postgres" : "embedded")

  // 1. First boot with no rate limit: workspaces, keys, a number, the victim's contacts and the abuser's big ones.
  const boot = await startChild(
    `${database} (setup)`,
    "apps/server/node.ts",
    {
      ...env,
      RATE_LIMIT_PER_MINUTE: "100000000"
    },
    await freePort(),
    undefined,
    flags
  )
  cleanups.push(boot.stop)
  const abuserKey = /svc_test_[0-9A-Za-z]{40}/.exec(boot.output())?.[0]
  if (abuserKey === undefined) throw new Error(`no first-boot key:\n${boot.output()}`)
  const admin = { authorization: `Bearer ${adminToken}` }
  const listed = await expect("list workspaces", call(boot.port, "GET", "/v1/admin/workspaces", admin), 200)
  const abuserWorkspace = (listed["workspaces"] as Array<{ id: string }>)[0]!.id
  await expect(
    "add number",
    call(boot.port, "POST", `/v1/admin/workspaces/${abuserWorkspace}/numbers`, admin, JSON.stringify({ e164: NUMBER })),
    201
  )
  const created = await expect(
    "create workspace",
    call(boot.port, "POST", "/v1/admin/workspaces", admin, JSON.stringify({ name: "Victim" })),
    201
  )
  const victimWorkspace = (created["workspace"] as { id: string }).id
  const minted = await expect(
    "create key",
    call(boot.port, "POST", `/v1/admin/workspaces/${victimWorkspace}/keys`, admin, JSON.stringify({ kind: "test" })),
    201
  )
  const victimKey = (minted["key"] as { token: string }).token
  const victimIds: Array<string> = []
  bigIds.length = 0
  for (let i = 0; i < VICTIM_CONTACTS; i++) {
    const body = JSON.stringify({ firstName: `Victim ${i}`, phone: `+1415555${String(1000 + i)}`, tags: ["vip"] })
    const c = await expect(
      "victim contact",
      call(boot.port, "POST", "/v1/api/contacts", { authorization: `Bearer ${victimKey}` }, body),
      201
    )
    victimIds.push((c["contact"] as { id: string }).id)
  }
  for (let i = 0; i < BIG_CONTACTS; i++) {
    const made = await expect(
      "big contact",
      call(boot.port, "POST", "/v1/api/contacts", { authorization: `Bearer ${abuserKey}` }, bigContact(i)),
      201
    )
    bigIds.push((made["contact"] as { id: string }).id)
  }
  await boot.stop()

  // 2. The abuser's large workspace, seeded in bulk (older than what the API writes next).
  if (database === "postgres") {
    const client = new pg.Client({ connectionString: env["DATABASE_URL"] })
    await client.connect()
    seedClient = client
  } else {
    const db = await PGlite.create(pgliteOptions(join(env["DATA_DIR"]!, "pglite")))
    // PGlite answers `query(text, values)` with `{ rows }`, all the seeders read from pg
    seedClient = { query: db.query.bind(db) as unknown as pg.Client["query"], end: () => db.close() }
  }
  const started = performance.now()
  await seedContacts(seedClient as pg.Client, {
    workspaceId: abuserWorkspace,
    count: CONTACTS,
    batchSize: 10_000,
    log: () => {}
  })
  const inbox = await seedClient.query<{ inbox_id: string }>("SELECT inbox_id FROM numbers WHERE e164 = $1", [NUMBER])
  await seedMessages(seedClient as pg.Client, {
    workspaceId: abuserWorkspace,
    inboxId: inbox.rows[0]!.inbox_id,
    numberE164: NUMBER,
    messages: MESSAGES,
    threads: Math.ceil(MESSAGES / 20),
    batchSize: 10_000,
    vocabSize: 5_000,
    log: () => {}
  })
  await seedClient.end()

  // 3. The service as users run it (the default rate limit).
  const service = await startChild(database, "apps/server/node.ts", env, await freePort(), undefined, flags)
  cleanups.push(service.stop)
  log(
    `${database}: seeded ${fmt(CONTACTS)} contacts, ${fmt(MESSAGES)} messages in bulk in ${
      fmt((performance.now() - started) / 1000)
    } s`
  )
  for (let i = 0; i < 50; i++) {
    await send(service.port, victimKey, { method: "GET", path: `/v1/api/contacts/${victimIds[0]}` })
  }

  const rows: Array<Row> = []
  let quiet = NaN
  for (const [phase, make] of all) {
    const stop = make === null ? null : abuser(service.port, abuserKey, make)
    const { failed, latencies } = await victim(service.port, victimKey, victimIds)
    const answered = stop === null ? "" : await stop()
    const p50 = percentile(latencies, 0.5)
    if (make === null) quiet = p50
    const row: Row = {
      database,
      phase,
      reads: latencies.length,
      p50,
      p95: percentile(latencies, 0.95),
      p99: percentile(latencies, 0.99),
      max: latencies[latencies.length - 1] ?? NaN,
      ratio: p50 / quiet,
      failed: failed.length,
      abuser: answered
    }
    rows.push(row)
    log(
      `${database.padEnd(9)} ${phase.padEnd(15)} ${String(row.reads).padStart(5)} ${
        [row.p50, row.p95, row.p99, row.max].map((n) => fmt(n, 1).padStart(8)).join(" ")
      } ${fmt(row.ratio, 2).padStart(6)}x ${String(row.failed).padStart(6)}  ${answered}`
    )
    // The abuser's bucket refills and its last requests drain before the next phase.
    await sleep(make === null ? 0 : 5_000)
  }
  await service.stop()
  return rows
}

const main = async () => {
  const cleanups = cleanupStack()
  const startedAt = new Date()
  try {
    log(
      `victim GET /contacts/{id} at ${RATE}/s in its own workspace; one abuser key at ${RATE}/s (its rate limit), not waiting for answers; ${SECONDS} s per phase; load average ${
        loadavg().map((l) => l.toFixed(1)).join(" ")
      }`
    )
    log("database  phase           reads   p50 ms   p95 ms   p99 ms   max ms  p50/quiet  failed  abuser's answers")
    const rows: Array<Row> = []
    for (const database of DATABASES) rows.push(...(await run(database, cleanups)))
    writeFileSync(
      join(benchDir, "results", "abuse.json"),
      JSON.stringify({ startedAt, seconds: SECONDS, contacts: CONTACTS, messages: MESSAGES, rows }, null, 2) + "\n"
    )
  } finally {
    await cleanups.run()
  }
}

runMain(main)
