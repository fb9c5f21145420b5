/**
 * End to end, issue 38 item 9: the database goes away under traffic. The real server process on a
 * private Postgres cluster of its own; clients create contacts without pause while the cluster is
 * stopped (`fast`: sessions ended by the server; `immediate`: a crash) and started again on the same
 * port. While it is away every answer is `503 unavailable` with `Retry-After`, never a 500 and never
 * a hang; the service reconnects by itself; every contact it acknowledged is there afterwards; and
 * the webhook worker goes on to deliver every acknowledged contact's event.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type PostgresHandle, startPostgres } from "../support/postgres.ts"
import { type RunningServer, startServer } from "../support/server.ts"

const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined)
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` until it holds, or fails after `ms`. */
const eventually = async (what: string, check: () => boolean | Promise<boolean>, ms = 120_000, seen = () => "") => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms / 1000} s: ${what} ${seen()}`)
    await sleep(200)
  }
}

interface Answer {
  readonly status: number
  readonly retryAfter: string | null
  readonly code: string | null
  readonly contactId: string | null
}

// Commits acknowledged only once in the WAL, as a production server does (the test clusters turn
// that off for speed): an immediate stop is a crash, and must lose nothing acknowledged.
const pg = await startPostgres({ fresh: true, settings: ["synchronous_commit=on"] })
if (pg === null && process.env["CI"] === "true") throw new Error("CI=true but no Postgres to restart")

describe.runIf(pg !== null)("the database goes away under traffic (Postgres stopped and started again)", () => {
  it(
    "answers 503 with Retry-After while it is away, reconnects by itself, and loses no acknowledged write or event",
    async () => {
      const handle = pg as PostgresHandle
      cleanups.push(handle.stop)
      const dataDir = mkdtempSync(join(tmpdir(), "switchboard-e2e-dbrestart-"))
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))

      // A webhook receiver: the contact ids of the events it got.
      const delivered = new Set<string>()
      const receiver = createServer((req, res) => {
        let body = ""
        req.on("data", (c: Buffer) => (body += c.toString()))
        req.on("end", () => {
          const event = JSON.parse(body) as { data?: { contactId?: string } }
          if (event.data?.contactId !== undefined) delivered.add(event.data.contactId)
          res.writeHead(200).end()
        })
      })
      await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
      cleanups.push(() => new Promise((r) => receiver.close(r)))
      const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`

      const server: RunningServer = await startServer("node", {
        DATABASE_URL: handle.url,
        DATA_DIR: dataDir,
        OUTBOUND_ALLOW_PRIVATE: "true",
        RATE_LIMIT_PER_MINUTE: "1000000",
        WEBHOOK_POLL_MS: "500"
      })
      cleanups.push(() => server.stop())
      const headers = { authorization: `Bearer ${server.testKey}`, "content-type": "application/json" }
      const hook = await fetch(`${server.baseUrl}/v1/api/webhooks`, {
        method: "POST",
        headers,
        body: JSON.stringify({ url: receiverUrl, events: ["contact.updated"] })
      })
      expect(hook.status).toBe(201)

      // Writers: four clients creating contacts back to back, each request bounded by 15 s.
      const answers: Array<Answer> = []
      let writing = true
      let n = 0
      const writer = async () => {
        while (writing) {
          const i = n++
          try {
            const res = await fetch(`${server.baseUrl}/v1/api/contacts`, {
              method: "POST",
              headers,
              body: JSON.stringify({ firstName: `Contact ${i}` }),
              signal: AbortSignal.timeout(15_000)
            })
            const text = await res.text()
            const body = (text === "" ? { error: { code: `empty body` } } : JSON.parse(text)) as {
              contact?: { id: string }
              error?: { code: string }
            }
            answers.push({
              status: res.status,
              retryAfter: res.headers.get("retry-after"),
              code: body.error?.code ?? null,
              contactId: body.contact?.id ?? null
            })
            if (res.status !== 201) await sleep(100)
          } catch (error) {
            answers.push({ status: 0, retryAfter: null, code: String(error), contactId: null })
          }
        }
      }
      const writers = Array.from({ length: 4 }, writer)
      const created = () => answers.filter((a) => a.status === 201).length
      /** The answers since `from`, counted by status and code. */
      const tally = (from = 0) => {
        const counts = new Map<string, number>()
        for (const a of answers.slice(from)) {
          counts.set(`${a.status} ${a.code}`, (counts.get(`${a.status} ${a.code}`) ?? 0) + 1)
        }
        return JSON.stringify([...counts])
      }

      for (const mode of ["fast", "immediate"] as const) {
        const before = created()
        await eventually("contacts created before the stop", () => created() >= before + 20)
        const stoppedAt = answers.length
        await handle.server!.halt(mode)
        await eventually(
          `503s while Postgres is stopped (${mode})`,
          () => answers.slice(stoppedAt).filter((a) => a.status === 503).length >= 5,
          60_000,
          () =>
            `${tally(stoppedAt)}\n${
              server.output().split("\n").filter((l) => / 406 |rror/.test(l)).slice(-6).join("\n")
            }`
        )
        const ready = await fetch(`${server.baseUrl}/readyz`)
        expect(ready.status, "/readyz says the database is away").toBe(503)
        await handle.server!.resume()
        const resumedAt = answers.length
        await eventually(
          `writes acknowledged again after the restart (${mode})`,
          () => answers.slice(resumedAt).filter((a) => a.status === 201).length >= 20
        )
        await eventually("/readyz ready again", async () => (await fetch(`${server.baseUrl}/readyz`)).status === 200)
      }
      writing = false
      await Promise.all(writers)

      // Nothing but acknowledgements and 503s with Retry-After: no 500, no hang, no reset.
      const unexpected = answers.filter((a) => a.status !== 201 && a.status !== 503)
      expect(
        unexpected,
        `${JSON.stringify(unexpected.slice(0, 5))}\n${
          server.output().split("\n").filter((l) => / 40[0-9] | 50[0-9] /.test(l)).slice(0, 5).join("\n")
        }`
      ).toEqual([])
      for (const a of answers.filter((a) => a.status === 503)) {
        expect(a.code).toBe("unavailable")
        expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1)
      }
      // Every acknowledged contact is stored, and its event reaches the receiver.
      const acknowledged = answers.flatMap((a) => (a.contactId === null ? [] : [a.contactId]))
      for (const id of acknowledged) {
        const res = await fetch(`${server.baseUrl}/v1/api/contacts/${id}`, { headers })
        expect(res.status, `contact ${id}`).toBe(200)
      }
      await eventually(
        "every acknowledged contact's event delivered",
        () => acknowledged.every((id) => delivered.has(id)),
        180_000
      )
      expect(await server.stop()).toBe(0)
    },
    600_000
  )
})
