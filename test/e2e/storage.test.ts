/**
 * Storage safety with the real server process (issue 20): one process per embedded database (a
 * second `npm start` on the DATA_DIR refuses, naming the holder; a lock left by a kill -9 is taken
 * over), no acknowledged write lost to a kill -9, and backup and restore for both stores (PGlite
 * through `npm run admin -- db dump|load`, Postgres through pg_dump/pg_restore).
 */
import { execFile, execFileSync, spawn } from "node:child_process"
import { copyFileSync, existsSync, readdirSync, readFileSync, realpathSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { findPostgresBinDir, freshDatabase } from "../support/postgres.ts"
import { startServer } from "../support/server.ts"
import { tempDirs } from "../support/tempDirs.ts"

const root = resolve(import.meta.dirname, "../..")
const run = promisify(execFile)
const tempDir = tempDirs("storage")

const api = (baseUrl: string, key: string) => (path: string, init: RequestInit = {}) =>
  fetch(`${baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }
  })

const createContact = async (baseUrl: string, key: string, firstName: string) => {
  const res = await api(baseUrl, key)("/v1/api/contacts", { method: "POST", body: JSON.stringify({ firstName }) })
  expect(res.status).toBe(201)
  return ((await res.json()) as { contact: { id: string } }).contact.id
}

const contactNames = async (baseUrl: string, key: string) => {
  const res = await api(baseUrl, key)("/v1/api/contacts?limit=200")
  expect(res.status).toBe(200)
  return ((await res.json()) as { contacts: Array<{ firstName: string }> }).contacts.map((c) => c.firstName).sort()
}

/** A server start as an operator types it (`npm start` by default); resolves with its exit code and output once it exits. */
const start = (env: Record<string, string>, command = ["npm", "start", "--silent"]) =>
  new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: root,
      env: { ...process.env, PORT: "0", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      done({ code, output })
    })
  })

// `npm run admin`'s launcher, which builds the bundle when it is out of date (once, in beforeAll).
beforeAll(() => execFileSync(process.execPath, ["apps/server/build.mjs", "cli"], { cwd: root, stdio: "inherit" }))
const admin = (env: Record<string, string>, ...args: Array<string>) =>
  run(process.execPath, ["apps/cli/admin.mjs", ...args], { cwd: root, env: { ...process.env, ...env } })

const failure = (p: Promise<unknown>) =>
  p.then(() => ({ code: 0, stderr: "" }), (e: { code: number; stderr: string }) => e)

describe("the embedded database (PGlite in DATA_DIR)", () => {
  it(
    "is held by one process: a second npm start refuses naming the holder; a kill -9 loses no acknowledged write and its lock is taken over; dump and load restore it",
    async () => {
      const dataDir = tempDir()
      const first = await startServer("node", { DATA_DIR: dataDir })
      const key = first.testKey!
      const holder = JSON.parse(readFileSync(join(dataDir, "pglite.lock"), "utf8"))
      expect(holder).toMatchObject({ pid: expect.any(Number), host: expect.any(String), since: expect.any(String) })

      // A second server on the same DATA_DIR: one line naming the holder, exit non-zero.
      const deno = ["npm", "run", "start:deno", "--silent"]
      for (const second of [await start({ DATA_DIR: dataDir }), await start({ DATA_DIR: dataDir }, deno)]) {
        expect(second.code).not.toBe(0)
        expect(second.output).toContain(
          `DATA_DIR ${dataDir} is in use by process ${holder.pid} on ${holder.host} since ${holder.since}`
        )
        expect(second.output).not.toMatch(/\n\s+at /)
      }
      // So do the admin CLI's commands that open the files.
      const dumpWhileHeld = await failure(admin({ DATA_DIR: dataDir }, "db", "dump", join(dataDir, "x.tar.gz")))
      expect(dumpWhileHeld.code).toBe(1)
      expect(dumpWhileHeld.stderr).toContain(`is in use by process ${holder.pid}`)

      // Writes in flight when the process is killed: every acknowledged one survives.
      const acknowledged: Array<string> = []
      const writer = async (w: number) => {
        for (let i = 0;; i++) {
          const name = `w${w}-${i}`
          const res = await api(first.baseUrl, key)("/v1/api/contacts", {
            method: "POST",
            body: JSON.stringify({ firstName: name })
          }).catch(() => null)
          if (res === null) return
          if (res.status === 201) acknowledged.push(name)
        }
      }
      const writers = [0, 1, 2, 3].map(writer)
      while (acknowledged.length < 30) await new Promise((r) => setTimeout(r, 10))
      expect(await first.kill()).toBe("SIGKILL")
      await Promise.all(writers)
      expect(existsSync(join(dataDir, "pglite.lock"))).toBe(true)

      const next = await startServer("node", { DATA_DIR: dataDir })
      expect(next.output()).toContain(`Taking over the stale lock on ${dataDir} left by process ${holder.pid}`)
      const names = await contactNames(next.baseUrl, key)
      for (const name of acknowledged) expect(names).toContain(name)
      expect(await next.stop()).toBe(0)
      // A clean shutdown releases the lock.
      expect(existsSync(join(dataDir, "pglite.lock"))).toBe(false)

      // Backup with the server stopped, restore into a fresh DATA_DIR with the secrets key.
      const backup = join(tempDir(), "switchboard.tar.gz")
      const dumped = JSON.parse((await admin({ DATA_DIR: dataDir }, "db", "dump", backup)).stdout)
      expect(dumped).toMatchObject({ dumped: backup, bytes: expect.any(Number) })
      expect(existsSync(join(dataDir, "pglite.lock"))).toBe(false)
      const restored = tempDir()
      copyFileSync(join(dataDir, "secrets.key"), join(restored, "secrets.key"))
      expect(JSON.parse((await admin({ DATA_DIR: restored }, "db", "load", backup)).stdout)).toEqual({
        loaded: backup,
        into: join(restored, "pglite")
      })
      const again = await failure(admin({ DATA_DIR: restored }, "db", "load", backup))
      expect(again.code).toBe(1)
      expect(again.stderr).toContain("already holds a database")
      const third = await startServer("node", { DATA_DIR: restored })
      try {
        // No first-boot key: the restored database has its workspace and keys.
        expect(third.testKey).toBeNull()
        expect(await contactNames(third.baseUrl, key)).toEqual(names)
      } finally {
        expect(await third.stop()).toBe(0)
      }
    },
    300_000
  )
})

describe("Postgres backup and restore", () => {
  const url = inject("postgresUrl")
  // pg_dump and pg_restore sit with the server binaries, which PATH may only link (initdb, pg_ctl, postgres).
  const server = findPostgresBinDir()
  const bin = [
    server && realpathSync(join(server, "postgres")),
    ...(existsSync("/usr/lib/postgresql")
      ? readdirSync("/usr/lib/postgresql").map((v) => `/usr/lib/postgresql/${v}/bin/postgres`)
      : [])
  ]
    .map((p) => p && dirname(p))
    .find((dir) => dir && existsSync(join(dir, "pg_dump")) && existsSync(join(dir, "pg_restore"))) ?? null
  it.runIf((url !== null && bin !== null) || process.env.CI === "true")(
    "pg_dump -Fc of a live server's database, pg_restore into an empty one, a server there reads it all",
    async () => {
      if (url === null || bin === null) throw new Error("CI needs Postgres")
      const [source, target] = [await freshDatabase(url, "backup"), await freshDatabase(url, "restore")]
      const env = { SECRETS_KEY: "ab".repeat(32) }
      try {
        const live = await startServer("node", { ...env, DATABASE_URL: source.url, DATA_DIR: tempDir() })
        const key = live.testKey!
        for (const name of ["Ada", "Alan", "Grace"]) await createContact(live.baseUrl, key, name)
        const file = join(tempDir(), "switchboard.dump")
        // Taken while the server runs: pg_dump reads one consistent snapshot.
        await run(join(bin, "pg_dump"), ["-Fc", "-f", file, "-d", source.url])
        expect(await live.stop()).toBe(0)
        await run(join(bin, "pg_restore"), ["--no-owner", "--exit-on-error", "-d", target.url, file])
        const restored = await startServer("node", { ...env, DATABASE_URL: target.url, DATA_DIR: tempDir() })
        try {
          expect(restored.testKey).toBeNull()
          expect(await contactNames(restored.baseUrl, key)).toEqual(["Ada", "Alan", "Grace"])
        } finally {
          expect(await restored.stop()).toBe(0)
        }
      } finally {
        await source.drop()
        await target.drop()
      }
    },
    180_000
  )
})
