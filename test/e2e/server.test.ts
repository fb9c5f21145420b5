/**
 * End to end: the real server process under Node (PGlite and Postgres) and under Deno (PGlite),
 * driven over real sockets with the key it prints at first boot, as a new user would with curl.
 */
import { Effect, Redacted } from "effect"
import { execFile, execFileSync } from "node:child_process"
import { request } from "node:http"
import { resolve } from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, inject, it } from "vitest"
import * as Postgres from "../../adapters/postgres/PgClient.ts"
import * as SqlLedger from "../../adapters/sql/ledger.ts"
import { numberCharge, textingSetupCharge } from "../../core/billing/pricing.ts"
import { LedgerStore } from "../../core/billing/store.ts"
import type { E164 } from "../../core/kernel/phone.ts"
import { freshDatabase } from "../support/postgres.ts"
import { startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const tempDir = tempDirs("e2e")

const contactsJourney = async (baseUrl: string, key: string) => {
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers }
    })
  const ids: Array<string> = []
  for (const [first, phone] of [["Ada", "4155550101"], ["Alan", "4155550102"], ["Grace", "4155550103"]] as const) {
    const res = await call("/v1/api/contacts", { method: "POST", body: JSON.stringify({ firstName: first, phone }) })
    expect(res.status).toBe(201)
    expect(res.headers.get("x-request-id")).toBeTruthy()
    expect(res.headers.get("ratelimit-limit")).toBe("600")
    ids.push(((await res.json()) as { contact: { id: string } }).contact.id)
  }
  const search = (await (await call("/v1/api/contacts?q=a")).json()) as { contacts: Array<{ firstName: string }> }
  expect(search.contacts.map((c) => c.firstName)).toEqual(["Grace", "Alan", "Ada"])
  const byPhone = (await (await call("/v1/api/contacts?q=555-0102")).json()) as {
    contacts: Array<{ firstName: string }>
  }
  expect(byPhone.contacts.map((c) => c.firstName)).toEqual(["Alan"])

  const page1 = (await (await call("/v1/api/contacts?limit=2")).json()) as {
    contacts: Array<{ id: string }>
    nextCursor: string
  }
  expect(page1.contacts.map((c) => c.id)).toEqual([ids[2], ids[1]])
  const page2 =
    (await (await call(`/v1/api/contacts?limit=2&cursor=${encodeURIComponent(page1.nextCursor)}`)).json()) as {
      contacts: Array<{ id: string }>
      nextCursor: string | null
    }
  expect(page2).toMatchObject({ contacts: [{ id: ids[0] }], nextCursor: null })

  const del = await call(`/v1/api/contacts/${ids[0]}`, { method: "DELETE" })
  expect(await del.json()).toEqual({ deleted: true })
  const gone = await call(`/v1/api/contacts/${ids[0]}`)
  expect(gone.status).toBe(404)
  expect(((await gone.json()) as { error: { code: string } }).error.code).toBe("not_found")

  const spec = (await (await fetch(`${baseUrl}/v1/api/openapi.json`)).json()) as { info: { version: string } }
  expect(spec.info.version).toBe("2026-08-17")
}

/** PATCHes of different fields of one contact, all at once: each keeps the others' changes. */
const concurrentPatches = async (baseUrl: string, key: string) => {
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }
    })
  const created = await call("/v1/api/contacts", {
    method: "POST",
    body: JSON.stringify({ firstName: "Lin", phone: "4155550177" })
  })
  const { contact } = (await created.json()) as { contact: { id: string } }
  const patches = Array.from(
    { length: 16 },
    (_, i) => (i % 2 === 0 ? { company: `Company ${i}` } : { notes: [`note ${i}`] })
  )
  const answers = await Promise.all(
    patches.map((p) => call(`/v1/api/contacts/${contact.id}`, { method: "PATCH", body: JSON.stringify(p) }))
  )
  for (const a of answers) expect(a.status).toBe(200)
  const final = ((await (await call(`/v1/api/contacts/${contact.id}`)).json()) as {
    contact: { firstName: string; company: string | null; notes: Array<string> }
  }).contact
  expect(final.firstName).toBe("Lin")
  expect(final.company).toMatch(/^Company \d+$/)
  expect(final.notes).toHaveLength(1)
}

describe.each(["node", "deno"] as const)("server under %s with embedded PGlite", (runtime) => {
  it("prints one key at first boot, serves contacts, drains on SIGTERM, keeps data across restarts", async () => {
    const dataDir = tempDir()
    const server = await startServer(runtime, { DATA_DIR: dataDir })
    expect(server.testKey).toMatch(/^svc_test_/)
    await contactsJourney(server.baseUrl, server.testKey!)
    expect(await server.stop()).toBe(0)

    const again = await startServer(runtime, { DATA_DIR: dataDir })
    expect(again.testKey).toBeNull()
    const res = await fetch(`${again.baseUrl}/v1/api/contacts`, {
      headers: { authorization: `Bearer ${server.testKey}` }
    })
    const body = (await res.json()) as { contacts: Array<{ firstName: string }> }
    expect(body.contacts.map((c) => c.firstName)).toEqual(["Grace", "Alan"])
    expect(await again.stop()).toBe(0)
  }, 120_000)
})

describe("server under node with DATABASE_URL (Postgres)", () => {
  const url = inject("postgresUrl")
  it.runIf(url !== null || process.env.CI === "true")("serves contacts from Postgres", async () => {
    if (url === null) throw new Error("CI needs Postgres")
    const db = await freshDatabase(url, "e2e")
    try {
      const server = await startServer("node", { DATABASE_URL: db.url, DATA_DIR: tempDir() })
      expect(server.testKey).toMatch(/^svc_test_/)
      await contactsJourney(server.baseUrl, server.testKey!)
      await concurrentPatches(server.baseUrl, server.testKey!)
      expect(await server.stop()).toBe(0)
    } finally {
      await db.drop()
    }
  }, 120_000)
})

describe("admin CLI", () => {
  const run = promisify(execFile)
  const root = resolve(import.meta.dirname, "../..")
  // `npm run admin`'s launcher, which builds the bundle when it is out of date (once, in beforeAll).
  beforeAll(() => execFileSync(process.execPath, ["apps/server/build.mjs", "cli"], { cwd: root, stdio: "inherit" }))
  const admin = (env: Record<string, string>, ...args: Array<string>) =>
    run(process.execPath, ["apps/cli/admin.mjs", ...args], { cwd: root, env: { ...process.env, ...env } })

  it("creates a workspace and a scoped live key that the public API accepts, then revokes it", async () => {
    const server = await startServer("node", { DATA_DIR: tempDir(), ADMIN_TOKEN: "cli-admin-token" })
    const env = { SWITCHBOARD_URL: server.baseUrl, ADMIN_TOKEN: "cli-admin-token" }
    try {
      const ws = JSON.parse((await admin(env, "workspace", "create", "Acme", "--billing", "{\"plan\":null}")).stdout)
      expect(ws.workspace).toMatchObject({ name: "Acme", billing: { plan: null, trial: true } })
      const key = JSON.parse(
        (await admin(env, "key", "create", ws.workspace.id, "--kind", "live", "--scopes", "contacts:read")).stdout
      ).key
      expect(key.token).toMatch(/^svc_live_/)
      const list = await fetch(`${server.baseUrl}/v1/api/contacts`, {
        headers: { authorization: `Bearer ${key.token}` }
      })
      expect(list.status).toBe(200)
      const write = await fetch(`${server.baseUrl}/v1/api/contacts`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
        body: JSON.stringify({ firstName: "x" })
      })
      expect(write.status).toBe(403)
      expect(JSON.parse((await admin(env, "key", "revoke", key.id)).stdout)).toEqual({ revoked: true })
      const after = await fetch(`${server.baseUrl}/v1/api/contacts`, {
        headers: { authorization: `Bearer ${key.token}` }
      })
      expect(after.status).toBe(401)
      await expect(admin({ ...env, ADMIN_TOKEN: "wrong" }, "workspace", "get", ws.workspace.id)).rejects.toMatchObject({
        stderr: expect.stringContaining("unauthenticated")
      })
    } finally {
      expect(await server.stop()).toBe(0)
    }
  }, 300_000)

  it("runs every other command, prints JSON, and exits 1 with the envelope on a refused request", async () => {
    const help = await admin({}, "--help")
    for (
      const command of [
        "workspace create",
        "workspace get",
        "workspace update",
        "key create",
        "key revoke",
        "number add",
        "ledger",
        "audit-log",
        "mail"
      ]
    ) {
      expect(help.stdout).toContain(`  ${command} <`)
    }
    const server = await startServer("node", { DATA_DIR: tempDir(), ADMIN_TOKEN: "cli-admin-token" })
    const env = { SWITCHBOARD_URL: server.baseUrl, ADMIN_TOKEN: "cli-admin-token" }
    const out = async (...args: Array<string>) => JSON.parse((await admin(env, ...args)).stdout)
    try {
      const { workspace } = await out("workspace", "create", "Acme")
      expect(await out("workspace", "get", workspace.id)).toEqual({ workspace })
      const updated = await out(
        "workspace",
        "update",
        workspace.id,
        "--name",
        "Acme Dental",
        "--billing",
        "{\"trial\":false}"
      )
      expect(updated.workspace).toEqual({
        ...workspace,
        name: "Acme Dental",
        billing: { ...workspace.billing, trial: false }
      })
      const key = (await out("key", "create", workspace.id, "--kind", "test", "--name", "ci")).key
      expect(key).toMatchObject({ kind: "test", name: "ci", token: expect.stringMatching(/^svc_test_/) })
      expect(await out("number", "add", workspace.id, "+14155550142")).toEqual({
        number: {
          e164: "+14155550142",
          type: "local",
          voiceMode: "app",
          agentId: null,
          forwardTo: null,
          assignedUserId: null,
          status: "active"
        }
      })
      expect(await out("ledger", workspace.id)).toEqual({ charges: [] })
      expect(await out("audit-log", workspace.id)).toEqual({ entries: [] })
      expect(await out("mail", workspace.id)).toEqual({ mail: [] })
      // Refused by the server: its envelope, exit 1.
      const taken = await admin(env, "number", "add", workspace.id, "+14155550142").then(() => null, (e) => e)
      expect(taken.code).toBe(1)
      expect(JSON.parse(taken.stderr).error).toMatchObject({
        code: "failed_precondition",
        requestId: expect.any(String)
      })
      const missing = await admin(env, "workspace", "get", crypto.randomUUID()).then(() => null, (e) => e)
      expect(missing.code).toBe(1)
      expect(JSON.parse(missing.stderr).error).toMatchObject({ code: "not_found" })
      // An id is one path segment: `?`, `#` or `/` in it cannot reach another route or drop the rest.
      for (const odd of [`${workspace.id}?x=1`, `${workspace.id}#x`, `x/../${workspace.id}`]) {
        const refused = await admin(env, "workspace", "get", odd).then(() => null, (e) => e)
        expect(refused?.code, odd).toBe(1)
        expect(JSON.parse(refused.stderr).error, odd).toMatchObject({ code: "not_found" })
      }
      // Refused by the admin API's schema before sending: the same code and message, exit 1.
      const bad = await admin(env, "key", "create", workspace.id, "--kind", "bogus").then(() => null, (e) => e)
      expect(bad.code).toBe(1)
      expect(JSON.parse(bad.stderr)).toEqual({
        error: { code: "invalid_argument", message: "kind: expected \"live\" or \"test\", got \"bogus\"" }
      })
      const usage = await admin(env, "ledger").then(() => null, (e) => e)
      expect(usage.code).toBe(1)
      expect(usage.stderr).toContain("Usage: npm run admin")
    } finally {
      expect(await server.stop()).toBe(0)
    }
  }, 600_000)
  const url = inject("postgresUrl")
  it.runIf(url !== null || process.env.CI === "true")(
    "ledger prints the charges another process wrote through the ledger port (shared Postgres)",
    async () => {
      if (url === null) throw new Error("CI needs Postgres")
      const db = await freshDatabase(url, "e2e_ledger")
      const server = await startServer("node", {
        DATABASE_URL: db.url,
        DATA_DIR: tempDir(),
        ADMIN_TOKEN: "cli-admin-token"
      }).catch(async (e) => {
        await db.drop()
        throw e
      })
      const env = { SWITCHBOARD_URL: server.baseUrl, ADMIN_TOKEN: "cli-admin-token" }
      const out = async (...args: Array<string>) => JSON.parse((await admin(env, ...args)).stdout)
      try {
        const { workspace } = await out("workspace", "create", "Acme")
        const e164 = "+14155550142" as E164
        const rows = await Effect.runPromise(
          Effect.flatMap(LedgerStore, (ledger) =>
            ledger.append(workspace.id, [
              numberCharge({ e164, type: "local", localNumbers: 1 }, new Date("2024-02-29T12:00:00Z")),
              textingSetupCharge(e164)
            ], new Date().toISOString())).pipe(
              Effect.provide(SqlLedger.layer),
              Effect.provide(Postgres.layer({ url: Redacted.make(db.url) }))
            )
        )
        expect(await out("ledger", workspace.id)).toEqual({
          charges: [
            {
              id: rows[1]!.id,
              kind: "texting_setup",
              description: "Texting setup for +14155550142",
              amountCents: 2000,
              currency: "USD",
              numberE164: e164,
              createdAt: rows[1]!.createdAt
            },
            {
              id: rows[0]!.id,
              kind: "local_number",
              description: "Local number +14155550142, prorated 1/29 days",
              amountCents: 17,
              currency: "USD",
              numberE164: e164,
              createdAt: rows[0]!.createdAt
            }
          ]
        })
      } finally {
        expect(await server.stop()).toBe(0)
        await db.drop()
      }
    },
    120_000
  )
})

describe.each(["node", "deno"] as const)("graceful shutdown under %s", (runtime) => {
  it("answers a request that is still uploading when SIGTERM arrives, then exits 0", async () => {
    const server = await startServer(runtime, { DATA_DIR: tempDir() })
    const body = JSON.stringify({ firstName: "Drained", notes: Array.from({ length: 10 }, () => "x".repeat(5_000)) })
    const answer = new Promise<{ status: number; text: string }>((done, fail) => {
      const req = request(
        `${server.baseUrl}/v1/api/contacts`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${server.testKey}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body)
          }
        },
        (res) => {
          let text = ""
          res.on("data", (d) => (text += d))
          res.on("end", () => done({ status: res.statusCode ?? 0, text }))
        }
      )
      req.on("error", fail)
      // Half the body now, SIGTERM, the rest later: the request is in flight during shutdown.
      req.write(body.slice(0, 1000))
      setTimeout(() => {
        const stopped = server.stop()
        setTimeout(() => req.end(body.slice(1000)), 500)
        stopped.then((code) => expect(code).toBe(0), fail)
      }, 300)
    })
    const { status, text } = await answer
    expect({ status, text: status === 201 ? "" : text + server.output() }).toEqual({ status: 201, text: "" })
    expect(JSON.parse(text).contact.firstName).toBe("Drained")
  }, 120_000)
})
