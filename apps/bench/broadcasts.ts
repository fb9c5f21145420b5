/**
 * `npm run bench:broadcasts`: the scheduled-message and broadcast engines beside what a client would
 * do instead, measured in the same run, on Postgres with a test key, one service process. Prints and
 * writes (apps/bench/results/figures-broadcasts.json):
 * - enqueueing 10,000 recipients: `POST /v1/api/broadcasts` (sendAt an hour ahead, canceled after),
 *   p50 over BENCH_CREATES, beside sending the same 10,000 texts through `POST /v1/api/messages`
 *   BENCH_CONCURRENCY at a time, and beside the floor: one INSERT of the same 10,000 queue rows
 *   sent to Postgres directly;
 * - enqueueing a scheduled message: `POST /v1/api/scheduled-messages` (sendAt a day ahead) beside
 *   `POST /v1/api/messages`, sequential and alternating, BENCH_PROBES each;
 * - lateness: BENCH_SCHEDULED scheduled messages (sendAt just over a minute ahead) from sendAt to
 *   sent, and each broadcast from its creation to its first send, beside a direct send's latency
 *   (what a client's own timer calling `POST /v1/api/messages` waits);
 * - CPU per text: the service's process group and Postgres's backends, less the idle background,
 *   per broadcast recipient sent (a broadcast of BENCH_RECIPIENTS at BENCH_PACE, creation to
 *   completion) against per direct `POST /v1/api/messages` (as many texts, the same test key,
 *   BENCH_CONCURRENCY at a time), in BENCH_ROUNDS alternating rounds;
 * - pacing, from the sent texts' timestamps: segments a minute from creation to completion, and
 *   steady (first send to last); each full minute from the first send, and the fullest 60 s window,
 *   all against the pace set.
 * It never asserts.
 *
 * Env: BENCH_CREATES (5), BENCH_CONCURRENCY (8), BENCH_PROBES (100), BENCH_SCHEDULED (10),
 * BENCH_RECIPIENTS (10000), BENCH_ROUNDS (2), BENCH_PACE (4500, the most a workspace may set),
 * BENCH_IDLE (10 s).
 */
import { Agent } from "node:http"
import { loadavg } from "node:os"
import { spacingMs } from "../../core/pacing/pacer.ts"
import { type Figure, writeFigures } from "./figures.ts"
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
const CONCURRENCY = intEnv("BENCH_CONCURRENCY", 8)
const PROBES = intEnv("BENCH_PROBES", 100)
const SCHEDULED = intEnv("BENCH_SCHEDULED", 10)
const RECIPIENTS = intEnv("BENCH_RECIPIENTS", 10_000)
const ROUNDS = intEnv("BENCH_ROUNDS", 2)
const PACE = intEnv("BENCH_PACE", 4500)
const IDLE_SECONDS = intEnv("BENCH_IDLE", 10)
const ENQUEUED = 10_000
const MINUTE = 60_000
const NUMBER = "+14155550100"
// One GSM-7 segment: each text costs one segment of the pace.
const BODY = "Closed Friday for the holiday. Reply STOP to opt out."

const phones = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => `+1415${String(from + i).padStart(7, "0")}`)

const median = (xs: ReadonlyArray<number>) => percentile([...xs].sort((a, b) => a - b), 0.5)

/** How a broadcast's sends were spread in time, from their messages' timestamps (ms, sorted). */
const paceOf = (sent: ReadonlyArray<number>) => {
  const first = sent[0]!
  const last = sent.at(-1)!
  // N sends span N-1 spacings.
  const steady = ((sent.length - 1) * MINUTE) / (last - first)
  const minutes: Array<number> = []
  for (let start = first; start + MINUTE <= last; start += MINUTE) {
    minutes.push(sent.filter((t) => t >= start && t < start + MINUTE).length)
  }
  let fullest = 0
  for (let i = 0, j = 0; i < sent.length; i++) {
    while (sent[j]! <= sent[i]! - MINUTE) j++
    fullest = Math.max(fullest, i - j + 1)
  }
  return { first, last, steady, minutes, fullest }
}

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
    const api = (method: string, path: string, body?: unknown) =>
      ok(call(service.port, method, path, auth, body === undefined ? undefined : JSON.stringify(body)), path)
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
    const loadBefore = loadavg()

    const concurrent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
    /** Sends one text to each phone with POST /v1/api/messages, CONCURRENCY at a time; answers the ms it took. */
    const sendDirect = async (targets: ReadonlyArray<string>) => {
      const t0 = performance.now()
      let next = 0
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < targets.length) {
          const to = targets[next++]!
          await ok(
            call(service.port, "POST", "/v1/api/messages", auth, JSON.stringify({ to, body: BODY }), concurrent),
            "send"
          )
        }
      }))
      return performance.now() - t0
    }
    /** The sent texts' times (ms) of a source, from the messages they made. */
    const sentTimes = async (sourceId: string) =>
      (await db.query<{ at: Date }>(
        `SELECT a.created_at AS at FROM text_sends s
          JOIN activities a ON a.workspace_id = s.workspace_id AND a.id = s.message_id
          WHERE s.source_id = $1 ORDER BY a.created_at`,
        [sourceId]
      )).rows.map((r) => r.at.getTime())

    // Scheduled just over a minute ahead (the least allowed), to fall due while the enqueue phases run.
    const scheduledAt = Date.now() + 65_000
    const lateIds: Array<{ id: string; sendAt: number }> = []
    for (const [i, to] of phones(1_000_000, SCHEDULED).entries()) {
      const sendAt = scheduledAt + i * 2_000
      const { scheduledMessage } = await api("POST", "/v1/api/scheduled-messages", {
        to,
        body: BODY,
        sendAt: new Date(sendAt).toISOString()
      })
      lateIds.push({ id: scheduledMessage.id, sendAt })
    }

    // 1. Enqueueing 10,000 recipients: a broadcast, and the floor of one INSERT of its rows, alternating.
    const creates: Array<number> = []
    const inserts: Array<number> = []
    for (let i = 0; i < CREATES; i++) {
      const recipients = phones(2_000_000 + i * ENQUEUED, ENQUEUED)
      const sendAt = new Date(Date.now() + 3_600_000).toISOString()
      let t0 = performance.now()
      const { broadcast } = await api("POST", "/v1/api/broadcasts", {
        body: BODY,
        recipients: { phones: recipients },
        sendAt
      })
      creates.push(performance.now() - t0)
      await api("DELETE", `/v1/api/broadcasts/${broadcast.id}`)
      const sourceId = crypto.randomUUID()
      t0 = performance.now()
      await db.query(
        `INSERT INTO text_sends (workspace_id, id, source, source_id, seq, "to", segments, due_at, state, updated_at)
          SELECT $1, gen_random_uuid(), 'broadcast', $2, r.seq - 1, r.phone, 1, $3, 'pending', now()
          FROM unnest($4::text[]) WITH ORDINALITY AS r(phone, seq)`,
        [workspaceId, sourceId, sendAt, recipients]
      )
      inserts.push(performance.now() - t0)
      await db.query("DELETE FROM text_sends WHERE source_id = $1", [sourceId])
    }
    const directEnqueue = await sendDirect(phones(3_000_000, ENQUEUED))
    log(
      `enqueue 10,000 recipients: POST /v1/api/broadcasts p50 ${fmt(median(creates))} ms; one INSERT on pg p50 ${
        fmt(median(inserts))
      } ms; 10,000 POST /v1/api/messages ${CONCURRENCY} at a time ${fmt(directEnqueue)} ms`
    )

    // 2. Enqueueing one scheduled message, beside a direct send, alternating.
    const scheduling: Array<number> = []
    const direct: Array<number> = []
    const dayAhead = new Date(Date.now() + 86_400_000).toISOString()
    for (const [i, to] of phones(3_500_000, PROBES).entries()) {
      let t0 = performance.now()
      await api("POST", "/v1/api/scheduled-messages", { to, body: BODY, sendAt: dayAhead })
      scheduling.push(performance.now() - t0)
      t0 = performance.now()
      await api("POST", "/v1/api/messages", { to: phones(3_600_000 + i, 1)[0], body: BODY })
      direct.push(performance.now() - t0)
    }
    const directLatency = median(direct)
    log(
      `one text: POST /v1/api/scheduled-messages p50 ${fmt(median(scheduling), 1)} ms; POST /v1/api/messages p50 ${
        fmt(directLatency, 1)
      } ms`
    )

    // 3. The scheduled messages' lateness: from sendAt to the message recorded.
    const late: Array<number> = []
    for (const { id, sendAt } of lateIds) {
      for (;;) {
        const { scheduledMessage } = await api("GET", `/v1/api/scheduled-messages/${id}`)
        if (scheduledMessage.status === "sent") {
          late.push((await sentTimes(id))[0]! - sendAt)
          break
        }
        if (scheduledMessage.status !== "scheduled") throw new Error(`scheduled message ${scheduledMessage.status}`)
        await sleep(500)
      }
    }
    log(`scheduled messages, sendAt to sent: p50 ${fmt(median(late))} ms, max ${fmt(Math.max(...late))} ms`)

    // 4. The idle background, taken off both sides of the CPU comparison.
    const idleBefore = cpu()
    await sleep(IDLE_SECONDS * 1000)
    const idleAfter = cpu()
    const idlePerSecond = (idleAfter.server - idleBefore.server + idleAfter.postgres - idleBefore.postgres) /
      IDLE_SECONDS

    // 5. CPU per text and pacing: direct sends, then a broadcast, in alternating rounds.
    const acc = { direct: { cpu: 0, texts: 0 }, broadcast: { cpu: 0, texts: 0, wallMs: 0 } }
    const paces: Array<ReturnType<typeof paceOf>> = []
    const firstSends: Array<number> = []
    const used = (before: ReturnType<typeof cpu>, after: ReturnType<typeof cpu>, ms: number) =>
      after.server - before.server + after.postgres - before.postgres - (idlePerSecond * ms) / 1000
    for (let round = 1; round <= ROUNDS; round++) {
      const offset = 4_000_000 + round * 100_000
      let before = cpu()
      const directMs = await sendDirect(phones(offset, RECIPIENTS))
      acc.direct.cpu += used(before, cpu(), directMs)
      acc.direct.texts += RECIPIENTS

      before = cpu()
      const t0 = performance.now()
      const createdAt = Date.now()
      const { broadcast } = await api("POST", "/v1/api/broadcasts", {
        body: BODY,
        recipients: { phones: phones(offset + 50_000, RECIPIENTS) }
      })
      const created = Date.now()
      // Polled on Postgres, not through the service, so the service's CPU is the broadcast's alone.
      for (;;) {
        const { rows } = await db.query<{ state: string }>("SELECT state FROM broadcasts WHERE id = $1", [broadcast.id])
        if (rows[0]!.state === "completed") break
        await sleep(500)
      }
      const wallMs = performance.now() - t0
      acc.broadcast.cpu += used(before, cpu(), wallMs)
      const { broadcast: done } = await api("GET", `/v1/api/broadcasts/${broadcast.id}`)
      if (done.counts.sent !== RECIPIENTS) throw new Error(`broadcast counts: ${JSON.stringify(done.counts)}`)
      acc.broadcast.texts += RECIPIENTS
      acc.broadcast.wallMs += wallMs
      const pace = paceOf(await sentTimes(broadcast.id))
      paces.push(pace)
      firstSends.push(pace.first - created)
      log(
        `round ${round}: ${RECIPIENTS} direct sends in ${fmt(directMs / 1000, 1)} s; broadcast created in ${
          fmt(created - createdAt)
        } ms, first send ${fmt(pace.first - created)} ms later, last ${
          fmt((pace.last - pace.first) / 1000, 1)
        } s after it; ${fmt(pace.steady)} segments a minute steady; full minutes ${
          pace.minutes.join(", ")
        }; fullest 60 s ${pace.fullest}`
      )
    }
    const loadAfter = loadavg()
    const directCpu = (1000 * acc.direct.cpu) / acc.direct.texts
    const broadcastCpu = (1000 * acc.broadcast.cpu) / acc.broadcast.texts
    const achieved = acc.broadcast.texts / (acc.broadcast.wallMs / MINUTE)
    const steady = (paces.length * (RECIPIENTS - 1) * MINUTE) / paces.reduce((ms, p) => ms + p.last - p.first, 0)
    const minutes = paces.flatMap((p) => p.minutes)
    const worstMinute = minutes.reduce((w, m) => (Math.abs(m - PACE) > Math.abs(w - PACE) ? m : w), minutes[0] ?? NaN)
    const fullest = Math.max(...paces.map((p) => p.fullest))
    const load = (l: ReadonlyArray<number>) => l.map((x) => x.toFixed(2)).join("/")
    const host = `load average ${load(loadBefore)} -> ${load(loadAfter)}`
    log(host)
    log(
      `CPU ms per text, net of ${fmt(idlePerSecond * 1000)} ms/s idle: broadcast ${fmt(broadcastCpu, 2)}; direct ${
        fmt(directCpu, 2)
      }`
    )
    log(
      `pace (set ${PACE}; whole-millisecond spacing allows ${fmt(MINUTE / spacingMs(1, PACE))}): ${
        fmt(achieved)
      } creation to completion, ${fmt(steady)} steady; worst minute ${worstMinute}; fullest 60 s ${fullest}`
    )
    const lowerIsBetter = (
      figure: string,
      value: number,
      unit: string,
      baseline: { label: string; value: number }
    ): Figure => ({ figure, value, unit, baseline, ratio: baseline.value / value })
    const ofPace = (figure: string, value: number): Figure => ({
      figure,
      value,
      unit: "segments/min",
      baseline: { label: "textingSegmentsPerMinute set", value: PACE },
      ratio: value / PACE
    })
    writeFigures({
      benchmark: "broadcasts",
      startedAt: startedAt.toISOString(),
      host,
      figures: [
        lowerIsBetter(
          "POST /v1/api/broadcasts with 10,000 phones (enqueue), p50, beside direct sends",
          median(creates),
          "ms",
          {
            label: `the same 10,000 texts by POST /v1/api/messages, ${CONCURRENCY} at a time`,
            value: directEnqueue
          }
        ),
        lowerIsBetter(
          "POST /v1/api/broadcasts with 10,000 phones (enqueue), p50, beside the floor",
          median(creates),
          "ms",
          {
            label: "one INSERT of the 10,000 queue rows on pg directly, p50",
            value: median(inserts)
          }
        ),
        lowerIsBetter("POST /v1/api/scheduled-messages, p50 (sequential)", median(scheduling), "ms", {
          label: "POST /v1/api/messages p50, alternating",
          value: directLatency
        }),
        lowerIsBetter(`scheduled message sendAt to sent, p50 of ${SCHEDULED}`, median(late), "ms", {
          label: "POST /v1/api/messages p50 (a client's own timer)",
          value: directLatency
        }),
        lowerIsBetter(
          `broadcast of ${fmt(RECIPIENTS)}: creation to first send, p50 of ${ROUNDS} rounds`,
          median(firstSends),
          "ms",
          { label: "POST /v1/api/messages p50", value: directLatency }
        ),
        lowerIsBetter("service + Postgres CPU per broadcast recipient sent", broadcastCpu, "ms", {
          label: `per direct POST /v1/api/messages (${CONCURRENCY} at a time), same run`,
          value: directCpu
        }),
        ofPace(`broadcast pace, creation to completion (${fmt(RECIPIENTS)} recipients)`, achieved),
        ofPace("broadcast pace, steady (first send to last)", steady),
        ofPace(`broadcast minute furthest from the pace (of ${minutes.length} full minutes)`, worstMinute),
        ofPace("broadcast's fullest 60 s window", fullest)
      ]
    })
  } finally {
    await cleanups.run()
  }
}

runMain(main)
