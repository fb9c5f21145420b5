/**
 * `npm run bench:abuse -- [<other checkout>]`: what two abusive clients cost everyone else. A victim
 * reads `GET /contacts?limit=20` at 10 requests a second, first alone, then while two other keys of
 * the same workspace each send the worst bodies we know (a 200,000-element array, 60,000 keys, a body
 * nested 3,000 deep, one within every bound at its most expensive, a 1 MiB string) as fast as the
 * rate limit lets them (RATE_LIMIT_PER_MINUTE 600: 10 a second each), with at most 2 requests in
 * flight each, as a client that reads its answers does. Prints the victim's latency percentiles and
 * the abusers' answered requests a second. With another
 * checkout (A, e.g. a worktree of an earlier commit, with node_modules), runs it first on the same
 * database, then this one (B). Prints figures; asserts nothing.
 *
 * Env: BENCH_SECONDS (15) per phase, BENCH_CONTACTS (2000).
 */
import { existsSync } from "node:fs"
import { Agent, request } from "node:http"
import { resolve } from "node:path"
import { InputBounds } from "../../core/kernel/input.ts"
import { cleanupStack, firstBoot, fmt, freePort, intEnv, log, percentile, root, sleep, startChild } from "./harness.ts"
import { seedContacts } from "./seed.ts"

const other = process.argv[2]
if (other !== undefined && !existsSync(resolve(other, "apps/server/node.ts"))) {
  console.error("Usage: npm run bench:abuse -- [<path of another checkout, with node_modules>]")
  process.exit(2)
}
const SECONDS = intEnv("BENCH_SECONDS", 15)
const CONTACTS = intEnv("BENCH_CONTACTS", 2_000)
const RATE = 10

/** The worst bodies: refused by a bound now, decoded element by element before. */
const worst: ReadonlyArray<readonly [string, string]> = [
  ["200,000 items", JSON.stringify({ firstName: "a", tags: Array.from({ length: 200_000 }, () => "a") })],
  [
    "60,000 keys",
    JSON.stringify({
      firstName: "a",
      properties: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, "v"]))
    })
  ],
  ["3,000 deep", `{"firstName":"a","properties":{"x":${"[".repeat(3_000)}${"]".repeat(3_000)}}}`],
  // Just within every bound: as many values as allowed, all decoded by the Schema before it refuses the lengths.
  [
    "within bounds",
    JSON.stringify({
      firstName: "a",
      tags: Array.from({ length: InputBounds.arrayItems }, (_, i) => `t${i}`),
      notes: Array.from({ length: InputBounds.arrayItems }, (_, i) => `n${i}`),
      phones: Array.from(
        { length: Math.floor((InputBounds.values - 2 * InputBounds.arrayItems - 10) / 2) },
        () => ({ value: "+14155550100" })
      )
    })
  ],
  ["1 MiB string", JSON.stringify({ firstName: "a".repeat(1024 * 1024 - 100) })],
  ["1 MiB of escapes", JSON.stringify({ firstName: "x" }).replace("x", "\\u0041".repeat(170_000))],
  ["a valid contact", JSON.stringify({ firstName: "Ada", lastName: "Lovelace", phone: "+14155550100", tags: ["vip"] })]
]
const worstBodies = worst.slice(0, -1).map(([, body]) => body)

const agent = new Agent({ keepAlive: true })
const send = (port: number, method: string, path: string, key: string, body?: string) =>
  new Promise<number>((done) => {
    const started = performance.now()
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method,
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) })
        }
      },
      (res) => {
        res.resume()
        res.on("end", () => done(performance.now() - started))
      }
    )
    req.on("error", () => done(performance.now() - started))
    req.end(body)
  })

/** The victim's reads at RATE a second for SECONDS; latencies in ms. */
const victim = async (port: number, key: string) => {
  const latencies: Array<number> = []
  const pending: Array<Promise<void>> = []
  const end = Date.now() + SECONDS * 1000
  for (let next = Date.now(); next < end; next += 1000 / RATE) {
    await sleep(Math.max(0, next - Date.now()))
    pending.push(send(port, "GET", "/v1/api/contacts?limit=20", key).then((ms) => void latencies.push(ms)))
  }
  await Promise.all(pending)
  return latencies.sort((a, b) => a - b)
}

/** An abuser: the worst bodies in turn, up to RATE a second with at most 2 in flight, until stopped; returns how many were answered. */
const abuser = (port: number, key: string) => {
  let i = 0
  let inFlight = 0
  let answered = 0
  const timer = setInterval(() => {
    if (inFlight >= 2) return
    inFlight++
    void send(port, "POST", "/v1/api/contacts", key, worstBodies[i++ % worstBodies.length]).then(() => {
      inFlight--
      answered++
    })
  }, 1000 / RATE)
  return () => {
    clearInterval(timer)
    return answered
  }
}

const main = async () => {
  const cleanups = cleanupStack()
  try {
    const { serviceEnv, adminToken, workspaceId, db, boot } = await firstBoot(cleanups, {
      database: "switchboard_abuse",
      prefix: "abuse"
    })
    const keys: Array<string> = []
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`http://127.0.0.1:${boot.port}/v1/admin/workspaces/${workspaceId}/keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ kind: "test" })
      })
      keys.push(((await res.json()) as { key: { token: string } }).key.token)
    }
    await boot.stop()
    await seedContacts(db, { workspaceId, count: CONTACTS, batchSize: CONTACTS, log: () => {} })
    const [victimKey, abuserA, abuserB, prober] = keys as [string, string, string, string]
    log(
      `${
        fmt(CONTACTS)
      } contacts; victim GET /contacts?limit=20 at ${RATE}/s; abusers POST /contacts at ${RATE}/s each; ${SECONDS} s per phase`
    )
    log("side   phase          reads    p50 ms    p95 ms    p99 ms    max ms")
    for (
      const [label, cwd] of [...(other === undefined ? [] : [["A", resolve(other)] as const]), ["B", root] as const]
    ) {
      const child = await startChild(
        label,
        "apps/server/node.ts",
        { ...serviceEnv, RATE_LIMIT_PER_MINUTE: String(RATE * 60) },
        await freePort(),
        cwd
      )
      cleanups.push(child.stop)
      for (let i = 0; i < 50; i++) await send(child.port, "GET", "/v1/api/contacts?limit=20", victimKey)
      const report = (phase: string, l: ReadonlyArray<number>) =>
        log(
          `${label.padEnd(6)} ${phase.padEnd(14)} ${String(l.length).padStart(5)} ${
            [0.5, 0.95, 0.99].map((p) => fmt(percentile(l, p), 1).padStart(9)).join(" ")
          } ${fmt(l[l.length - 1] ?? NaN, 1).padStart(9)}`
        )
      for (const [name, body] of worst) {
        const times: Array<number> = []
        for (let i = 0; i < 10; i++) times.push(await send(child.port, "POST", "/v1/api/contacts", prober, body))
        log(
          `${label.padEnd(6)} one request, ${name.padEnd(18)} ${
            fmt(times.sort((a, b) => a - b)[5]!, 1).padStart(8)
          } ms (median of 10)`
        )
      }
      report("alone", await victim(child.port, victimKey))
      const stops = [abuser(child.port, abuserA), abuser(child.port, abuserB)]
      report("two abusers", await victim(child.port, victimKey))
      const answered = stops.reduce((sum, stop) => sum + stop(), 0)
      log(`${label.padEnd(6)} abusers' requests answered: ${fmt(answered / SECONDS, 1)}/s`)
      await sleep(3000)
      await child.stop()
    }
    log(`A = ${other === undefined ? "-" : resolve(other)}, B = ${root}`)
  } finally {
    await cleanups.run()
  }
}

await main()
