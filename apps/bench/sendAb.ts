/**
 * `npx tsx apps/bench/sendAb.ts <other checkout>`: `POST /v1/api/messages` (test key) of another
 * checkout's service (A, e.g. the commit before a change, with `node_modules` linked in), this
 * checkout's (B) and the bare floor (messagesBaseline.ts), side by side on one database, in
 * alternating rounds, so the machine's drift moves all three alike. Prints req/s and CPU
 * milliseconds per send (the server's process group, and Postgres's backends) for each, with B/A and
 * each against the floor; writes apps/bench/results/send-ab.json. It never asserts.
 *
 * Env: BENCH_SECONDS (10), BENCH_WARMUP (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { join, resolve } from "node:path"
import { writeFigures } from "./figures.ts"
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
  root,
  type Route,
  runMain,
  sleep,
  startChild,
  type Target,
  WARMUP_SECONDS
} from "./harness.ts"

const SECONDS = intEnv("BENCH_SECONDS", 10)
const WARMUP = intEnv("BENCH_WARMUP", WARMUP_SECONDS)
const ROUNDS = intEnv("BENCH_ROUNDS", 3)
const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 50)
const NUMBER = "+14155550100"

const main = async () => {
  const other = process.argv[2]
  if (other === undefined) throw new Error("usage: sendAb.ts <other checkout>")
  const startedAt = new Date()
  const cleanups = cleanupStack()
  try {
    const { databaseUrl, serviceEnv, adminToken, key, workspaceId, db, boot } = await firstBoot(cleanups, {
      database: "switchboard_bench_send_ab",
      prefix: "benchsendab"
    })
    const added = await call(boot.port, "POST", `/v1/admin/workspaces/${workspaceId}/numbers`, {
      authorization: `Bearer ${adminToken}`
    }, JSON.stringify({ e164: NUMBER }))
    await boot.stop()
    if (added.status !== 201) throw new Error(`admin addNumber: ${added.status} ${added.body}`)
    const inboxId =
      (await db.query<{ inbox_id: string }>("SELECT inbox_id FROM numbers WHERE e164 = $1", [NUMBER])).rows[0]!.inbox_id
    const backendPid = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid
    const stat = readFileSync(`/proc/${backendPid}/stat`, "utf8")
    const postmaster = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])

    const servers = [
      {
        name: "A",
        child: await startChild("service A", "apps/server/node.ts", serviceEnv, await freePort(), resolve(other)),
        headers: { authorization: `Bearer ${key}` }
      },
      {
        name: "B",
        child: await startChild("service B", "apps/server/node.ts", serviceEnv, await freePort(), root),
        headers: { authorization: `Bearer ${key}` }
      },
      {
        name: "floor",
        child: await startChild("baseline", "apps/bench/messagesBaseline.ts", {
          DATABASE_URL: databaseUrl,
          WORKSPACE_ID: workspaceId,
          INBOX_ID: inboxId,
          NUMBER_E164: NUMBER
        }, await freePort()),
        headers: {}
      }
    ]
    for (const s of servers) cleanups.push(s.child.stop)

    let n = 0
    const route: Route = {
      name: "POST /v1/api/messages",
      method: "POST",
      next: () => {
        const i = n++
        return {
          path: "/v1/api/messages",
          body: JSON.stringify({
            to: `+1415555${String(2000 + (i % 1000)).padStart(4, "0")}`,
            body: `Your appointment is confirmed for tomorrow, ticket ${i}`
          })
        }
      }
    }
    const count = async () => Number((await db.query("SELECT count(*) AS n FROM activities")).rows[0].n)
    // autocannon stops with sends still queued in the server: wait until the writes stop
    const settle = async () => {
      let last = -1
      for (let i = 0; i < 120; i++) {
        const now = await count()
        if (now === last) return
        last = now
        await sleep(300)
      }
    }
    const target = (s: (typeof servers)[number]): Target => ({
      server: s.name === "floor" ? "baseline" : "service",
      port: s.child.port,
      headers: s.headers
    })
    for (const s of servers) {
      const w = await load(target(s), route, WARMUP, CONNECTIONS)
      await settle()
      log(`warm-up ${s.name.padEnd(5)} ${fmt(w.reqPerSec)} req/s, non-2xx ${w.non2xx}`)
    }
    const loadBefore = loadavg()[0]!
    const acc = new Map(servers.map((s) => [s.name, { rounds: [] as Array<number>, server: 0, postgres: 0, sends: 0 }]))
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of servers) {
        const before = {
          server: groupCpuSeconds(s.child.pid!),
          postgres: childrenCpuSeconds(postmaster),
          sends: await count()
        }
        const r = await load(target(s), route, SECONDS, CONNECTIONS)
        await settle()
        const a = acc.get(s.name)!
        a.rounds.push(r.reqPerSec)
        a.server += groupCpuSeconds(s.child.pid!) - before.server
        a.postgres += childrenCpuSeconds(postmaster) - before.postgres
        a.sends += (await count()) - before.sends
        log(
          `round ${round} ${s.name.padEnd(5)} ${
            fmt(r.reqPerSec)
          } req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors + r.timeouts}`
        )
      }
    }
    const loadAfter = loadavg()[0]!
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((x, y) => x + y, 0) / xs.length
    const summary = Object.fromEntries(
      [...acc].map((
        [name, a]
      ) => [name, {
        reqPerSec: mean(a.rounds),
        rounds: a.rounds,
        cpuMsPerSend: { server: (1000 * a.server) / a.sends, postgres: (1000 * a.postgres) / a.sends }
      }])
    )
    const floor = summary["floor"]!.reqPerSec
    log(`load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}`)
    for (const [name, s] of Object.entries(summary)) {
      log(
        `${name.padEnd(5)} ${fmt(s.reqPerSec).padStart(6)} req/s (rounds ${s.rounds.map((r) => fmt(r)).join(" / ")}), ${
          fmt(s.reqPerSec / floor, 2)
        } of the floor, ` +
          `CPU ms/send ${fmt(s.cpuMsPerSend.server, 2)} server + ${fmt(s.cpuMsPerSend.postgres, 2)} Postgres`
      )
    }
    log(
      `B/A: req/s ${fmt(summary["B"]!.reqPerSec / summary["A"]!.reqPerSec, 3)}, server CPU per send ${
        fmt(summary["B"]!.cpuMsPerSend.server / summary["A"]!.cpuMsPerSend.server, 3)
      }, Postgres CPU per send ${fmt(summary["B"]!.cpuMsPerSend.postgres / summary["A"]!.cpuMsPerSend.postgres, 3)}`
    )
    const b = summary["B"]!
    const a = summary["A"]!
    writeFigures({
      benchmark: "send-ab",
      startedAt: startedAt.toISOString(),
      host: `load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}`,
      figures: [
        {
          figure: "POST /v1/api/messages (Postgres, test key), this checkout",
          value: b.reqPerSec,
          unit: "req/s",
          baseline: { label: "bare node:http + pg, same transaction", value: floor },
          ratio: b.reqPerSec / floor,
          target: ">= 0.5 of the floor",
          met: b.reqPerSec / floor >= 0.5
        },
        {
          figure: "POST /v1/api/messages, this checkout against the other",
          value: b.reqPerSec,
          unit: "req/s",
          baseline: { label: resolve(other), value: a.reqPerSec },
          ratio: b.reqPerSec / a.reqPerSec
        },
        {
          figure: "POST /v1/api/messages, server CPU per send",
          value: b.cpuMsPerSend.server,
          unit: "ms",
          baseline: { label: resolve(other), value: a.cpuMsPerSend.server },
          ratio: a.cpuMsPerSend.server / b.cpuMsPerSend.server
        }
      ]
    })
    mkdirSync(join(benchDir, "results"), { recursive: true })
    writeFileSync(
      join(benchDir, "results", "send-ab.json"),
      JSON.stringify(
        {
          startedAt: new Date().toISOString(),
          other: resolve(other),
          loadAverage: { before: loadBefore, after: loadAfter },
          settings: { seconds: SECONDS, warmup: WARMUP, rounds: ROUNDS, connections: CONNECTIONS },
          summary
        },
        null,
        2
      ) + "\n"
    )
  } finally {
    await cleanups.run()
  }
}

runMain(main)
