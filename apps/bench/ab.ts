/**
 * `npm run bench:ab -- <other checkout>`: the service of another checkout (A, e.g. a git worktree of
 * an earlier commit, with node_modules) against this one (B), on one seeded Postgres database. Each
 * side runs in BENCH_AB_PROCESSES processes; rounds alternate A and B, and each round reports
 * req/s and the CPU the service's processes spent per request, which the host's speed drifts move
 * far less than throughput. Prints figures; asserts nothing. Both checkouts must share migrations.
 *
 * Env: BENCH_CONTACTS (100000), BENCH_SECONDS (8), BENCH_WARMUP (10), BENCH_ROUNDS (4),
 * BENCH_CONNECTIONS (50), BENCH_AB_PROCESSES (2), BENCH_DATABASE_URL.
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import {
  type Child,
  cleanupStack,
  firstBoot,
  fmt,
  freePort,
  groupCpuSeconds,
  intEnv,
  load,
  log,
  root,
  type Route,
  startChild,
  type Target,
  WARMUP_SECONDS
} from "./harness.ts"
import { seedContacts } from "./seed.ts"

const other = process.argv[2]
if (other === undefined || !existsSync(resolve(other, "apps/server/node.ts"))) {
  console.error("Usage: npm run bench:ab -- <path of another checkout, with node_modules>")
  process.exit(2)
}
const CONTACTS = intEnv("BENCH_CONTACTS", 100_000)
const SECONDS = intEnv("BENCH_SECONDS", 8)
const WARMUP = intEnv("BENCH_WARMUP", WARMUP_SECONDS)
const ROUNDS = intEnv("BENCH_ROUNDS", 4)
const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50)
const PROCESSES = intEnv("BENCH_AB_PROCESSES", 2)

interface Side {
  readonly label: string
  readonly children: ReadonlyArray<Child>
  readonly figures: Map<string, Array<{ reqPerSec: number; cpuUsPerRequest: number }>>
}

const main = async () => {
  const cleanups = cleanupStack()
  try {
    const { serviceEnv, key, workspaceId, db, boot } = await firstBoot(cleanups, {
      database: "switchboard_ab",
      prefix: "ab"
    })
    await boot.stop()
    await seedContacts(db, { workspaceId, count: CONTACTS, batchSize: 50_000, log: (l) => log(`  ${l}`) })
    const ids =
      (await db.query<{ id: string }>("SELECT id FROM contacts WHERE workspace_id = $1 ORDER BY random() LIMIT 1000", [
        workspaceId
      ])).rows.map((r) => r.id)

    const start = async (label: string, cwd: string): Promise<Side> => {
      const children: Array<Child> = []
      for (let i = 0; i < PROCESSES; i++) {
        const child = await startChild(`${label}${i + 1}`, "apps/server/node.ts", serviceEnv, await freePort(), cwd)
        cleanups.push(child.stop)
        children.push(child)
      }
      return { label, children, figures: new Map() }
    }
    const sides = [await start("A", resolve(other)), await start("B", root)]
    log(`A = ${resolve(other)}, B = ${root}; ${PROCESSES} processes each, ${fmt(CONTACTS)} contacts`)

    const routes: ReadonlyArray<Route> = [
      (() => {
        let i = 0
        return {
          name: "GET /v1/api/contacts/:id",
          method: "GET",
          next: () => ({ path: `/v1/api/contacts/${ids[i++ % ids.length]}` })
        }
      })(),
      { name: "GET /v1/api/contacts?limit=50", method: "GET", next: () => ({ path: "/v1/api/contacts?limit=50" }) }
    ]
    const target = (child: Child): Target => ({
      server: "service",
      port: child.port,
      headers: { authorization: `Bearer ${key}` }
    })

    for (const route of routes) {
      for (const side of sides) for (const child of side.children) await load(target(child), route, WARMUP, CONNECTIONS)
      for (let round = 1; round <= ROUNDS; round++) {
        // Alternate which side goes first, so a drift of the host within a round pair hits both.
        for (const side of round % 2 === 1 ? sides : [...sides].reverse()) {
          for (const child of side.children) {
            const cpuBefore = groupCpuSeconds(child.pid!)
            const r = await load(target(child), route, SECONDS, CONNECTIONS)
            const cpuUsPerRequest = ((groupCpuSeconds(child.pid!) - cpuBefore) * 1e6) / Math.max(1, r.total)
            const list = side.figures.get(route.name) ?? []
            side.figures.set(route.name, [...list, { reqPerSec: r.reqPerSec, cpuUsPerRequest }])
            log(
              `round ${round} ${child.name.padEnd(3)} ${route.name}: ${fmt(r.reqPerSec)} req/s, ${
                fmt(cpuUsPerRequest)
              } us CPU/request`
            )
          }
        }
      }
    }

    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    log()
    log("route                           side   req/s mean   CPU us/request mean   B/A req/s   B/A CPU")
    for (const route of routes) {
      const [a, b] = sides.map((s) => s.figures.get(route.name) ?? []) as [
        Array<{ reqPerSec: number; cpuUsPerRequest: number }>,
        Array<{ reqPerSec: number; cpuUsPerRequest: number }>
      ]
      const [ra, rb, ca, cb] = [
        mean(a.map((f) => f.reqPerSec)),
        mean(b.map((f) => f.reqPerSec)),
        mean(a.map((f) => f.cpuUsPerRequest)),
        mean(b.map((f) => f.cpuUsPerRequest))
      ]
      log(`${route.name.padEnd(32)}A   ${fmt(ra).padStart(10)}   ${fmt(ca).padStart(19)}`)
      log(
        `${"".padEnd(32)}B   ${fmt(rb).padStart(10)}   ${fmt(cb).padStart(19)}   ${
          (rb / ra).toFixed(3).padStart(9)
        }   ${(cb / ca).toFixed(3).padStart(7)}`
      )
    }
  } finally {
    await cleanups.run()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
