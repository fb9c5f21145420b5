/**
 * `npm run bench:broadcasts`: broadcasts beside `POST /messages`, on Postgres with a test key, one
 * service process. Prints and writes (apps/bench/results/figures-broadcasts.json):
 * - creating a 10,000-recipient broadcast: ms per `POST /v1/api/broadcasts` (sendAt an hour ahead,
 *   canceled after), p50 and max over BENCH_CREATES runs;
 * - CPU per text: the service's process group and Postgres's backends, per broadcast recipient sent
 *   (a broadcast of BENCH_RECIPIENTS at the highest pace, 4,500 segments a minute, from creation to
 *   completion) against per direct `POST /v1/api/messages` (the same number of texts, 8 at a time),
 *   in alternating rounds;
 * - pacing accuracy: the broadcast's achieved segments a minute against the 4,500 set.
 * It never asserts.
 *
 * Env: BENCH_CREATES (5), BENCH_RECIPIENTS (2000), BENCH_ROUNDS (2).
 */
import { loadavg } from "node:os"
import { writeFigures } from "./figures.ts"
import {
  call,
  childrenCpuSeconds,
  cleanupStack,
  firstBoot,
  fmt,
  groupCpuSeconds,
  intEnv,
  log,
  percentile,
  runMain,
  sleep
} from "./harness.ts"

const CREATES = intEnv("BENCH_CREATES", 5)
const RECIPIENTS = intEnv("BENCH_RECIPIENTS", 2000)
const ROUNDS = intEnv("BENCH_ROUNDS", 2)
const PACE = 4500
const NUMBER = "+14155550100"
const BODY = "Closed Friday for the holiday. Reply STOP to opt out."

const phones = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `+1415${String(from + i).padStart(7, "0")}`)

const main = async () => {
  const startedAt = new Date()
  const cleanups = cleanupStack()
  try {
    const { adminToken, boot: service, db, key, workspaceId } = await firstBoot(cleanups, {
      database: "switchboard_bench_broadcasts",
      prefix: "benchbroadcasts"
    })
    const admin = { authorization: `Bearer ${adminToken}` }
    const auth = { authorization: `Bearer ${key}` }
    const ok = async (r: Promise<{ status: number; body: string }>, what: string) => {
      const res = await r
      if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.body}`)
      return JSON.parse(res.body) as any
    }
    await ok(
      call(
        service.port,
        "POST",
        `/v1/admin/workspaces/${workspaceId}/numbers`,
        admin,
        JSON.stringify({ e164: NUMBER })
      ),
      "add number"
    )
    await ok(
      call(
        service.port,
        "PATCH",
        `/v1/admin/workspaces/${workspaceId}`,
        admin,
        JSON.stringify({ textingSegmentsPerMinute: PACE, quietHours: null })
      ),
      "set the pace"
    )
    const backendPid = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid
    const stat = await import("node:fs").then((fs) => fs.readFileSync(`/proc/${backendPid}/stat`, "utf8"))
    const postmaster = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    const cpu = () => ({ server: groupCpuSeconds(service.pid!), postgres: childrenCpuSeconds(postmaster) })
    const loadBefore = loadavg()[0]!

    // 1. Creating 10,000-recipient broadcasts.
    const creates: Array<number> = []
    for (let i = 0; i < CREATES; i++) {
      const body = JSON.stringify({
        body: BODY,
        recipients: { phones: phones(2_000_000 + i * 10_000, 10_000) },
        sendAt: new Date(Date.now() + 3_600_000).toISOString()
      })
      const t0 = performance.now()
      const { broadcast } = await ok(call(service.port, "POST", "/v1/api/broadcasts", auth, body), "create")
      creates.push(performance.now() - t0)
      await ok(call(service.port, "DELETE", `/v1/api/broadcasts/${broadcast.id}`, auth), "cancel")
    }
    const sorted = [...creates].sort((a, b) => a - b)
    log(
      `create 10,000 recipients: p50 ${fmt(percentile(sorted, 0.5))} ms, max ${
        fmt(sorted.at(-1)!)
      } ms (${CREATES} runs)`
    )

    // 2. CPU per text: direct sends, then a broadcast, in alternating rounds.
    const acc = {
      direct: { server: 0, postgres: 0, texts: 0 },
      broadcast: { server: 0, postgres: 0, texts: 0, wallMs: 0 }
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const offset = 4_000_000 + round * 100_000
      let before = cpu()
      const targets = phones(offset, RECIPIENTS)
      let next = 0
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (next < targets.length) {
          const to = targets[next++]!
          await ok(call(service.port, "POST", "/v1/api/messages", auth, JSON.stringify({ to, body: BODY })), "send")
        }
      }))
      let after = cpu()
      acc.direct.server += after.server - before.server
      acc.direct.postgres += after.postgres - before.postgres
      acc.direct.texts += RECIPIENTS

      before = cpu()
      const t0 = performance.now()
      const { broadcast } = await ok(
        call(
          service.port,
          "POST",
          "/v1/api/broadcasts",
          auth,
          JSON.stringify({ body: BODY, recipients: { phones: phones(offset + 50_000, RECIPIENTS) } })
        ),
        "broadcast"
      )
      let state = broadcast
      while (state.status !== "completed") {
        await sleep(200)
        state = (await ok(call(service.port, "GET", `/v1/api/broadcasts/${broadcast.id}`, auth), "poll")).broadcast
      }
      const wallMs = performance.now() - t0
      after = cpu()
      if (state.counts.sent !== RECIPIENTS) throw new Error(`broadcast counts: ${JSON.stringify(state.counts)}`)
      acc.broadcast.server += after.server - before.server
      acc.broadcast.postgres += after.postgres - before.postgres
      acc.broadcast.texts += RECIPIENTS
      acc.broadcast.wallMs += wallMs
      log(`round ${round}: broadcast of ${RECIPIENTS} in ${fmt(wallMs / 1000, 1)} s`)
    }
    const loadAfter = loadavg()[0]!
    const perText = (a: { server: number; postgres: number; texts: number }) => ({
      server: (1000 * a.server) / a.texts,
      postgres: (1000 * a.postgres) / a.texts
    })
    const direct = perText(acc.direct)
    const broadcast = perText(acc.broadcast)
    const total = (c: { server: number; postgres: number }) => c.server + c.postgres
    // One segment each: RECIPIENTS segments per broadcast, less the first text's (the span is N-1 spacings).
    const achieved = (RECIPIENTS * ROUNDS) / (acc.broadcast.wallMs / 60_000)
    log(`load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}`)
    log(
      `CPU ms per text: broadcast ${fmt(broadcast.server, 2)} server + ${fmt(broadcast.postgres, 2)} Postgres; direct ${
        fmt(direct.server, 2)
      } + ${fmt(direct.postgres, 2)}; broadcast/direct ${fmt(total(broadcast) / total(direct), 2)}`
    )
    log(`pace: ${fmt(achieved)} segments a minute achieved, ${PACE} set (${fmt(achieved / PACE, 3)})`)
    writeFigures({
      benchmark: "broadcasts",
      startedAt: startedAt.toISOString(),
      host: `load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}`,
      figures: [
        {
          figure: "POST /v1/api/broadcasts with 10,000 phones, p50",
          value: percentile(sorted, 0.5),
          unit: "ms",
          baseline: { label: "max of the runs", value: sorted.at(-1)! }
        },
        {
          figure: "service + Postgres CPU per broadcast recipient sent",
          value: total(broadcast),
          unit: "ms",
          baseline: { label: "per direct POST /v1/api/messages, same run", value: total(direct) },
          ratio: total(broadcast) / total(direct)
        },
        {
          figure: "broadcast pace achieved (creation to completion)",
          value: achieved,
          unit: "segments/min",
          baseline: { label: "textingSegmentsPerMinute set", value: PACE },
          ratio: achieved / PACE
        }
      ]
    })
  } finally {
    await cleanups.run()
  }
}

runMain(main)
