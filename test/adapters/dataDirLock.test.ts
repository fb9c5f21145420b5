/** The DATA_DIR lock (adapters/pglite/dataDirLock.ts) in one process; the two-process story is test/e2e/storage.test.ts. */
import { Effect, Either } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { describe, expect, it } from "vitest"
import * as DataDirLock from "../../adapters/pglite/dataDirLock.ts"
import { tempDirs } from "../support/tempDirs.ts"

const fresh = tempDirs("lock")

const holderFile = (dir: string, holder: object) => writeFileSync(DataDirLock.lockPath(dir), JSON.stringify(holder))
const acquire = (dir: string) => Effect.runPromise(Effect.either(DataDirLock.acquire(dir)))
/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!

describe("DATA_DIR lock", () => {
  it("is created with our pid, host and start time, and released only by its holder", async () => {
    const dir = fresh()
    const me = Either.getOrThrow(await acquire(dir))
    expect(me).toMatchObject({ pid: process.pid, host: hostname() })
    expect(JSON.parse(readFileSync(DataDirLock.lockPath(dir), "utf8"))).toEqual(me)
    // A holder that took over after us keeps its lock when we release ours.
    const other = { pid: process.ppid, host: hostname(), since: "2026-01-01T00:00:00.000Z" }
    holderFile(dir, other)
    await Effect.runPromise(DataDirLock.release(dir, me))
    expect(JSON.parse(readFileSync(DataDirLock.lockPath(dir), "utf8"))).toEqual(other)
    holderFile(dir, me)
    await Effect.runPromise(DataDirLock.release(dir, me))
    expect(existsSync(DataDirLock.lockPath(dir))).toBe(false)
  })

  it("refuses while a live process on this host holds it, naming it and the DATA_DIR", async () => {
    const dir = fresh()
    const holder = { pid: process.ppid, host: hostname(), since: "2026-01-01T00:00:00.000Z" }
    holderFile(dir, holder)
    const refused = await acquire(dir)
    if (Either.isRight(refused)) throw new Error("took a live process's lock")
    const error = refused.left
    expect(error).toBeInstanceOf(DataDirLock.DataDirLocked)
    expect(error.message).toBe(
      `DATA_DIR ${dir} is in use by process ${process.ppid} on ${hostname()} since 2026-01-01T00:00:00.000Z: one process per embedded database (stop it, or set DATABASE_URL to share a Postgres)`
    )
    expect(JSON.parse(readFileSync(DataDirLock.lockPath(dir), "utf8"))).toEqual(holder)
  })

  it("takes over a lock whose process is gone, or one left half-written long ago", async () => {
    const dir = fresh()
    holderFile(dir, { pid: deadPid(), host: hostname(), since: "2026-01-01T00:00:00.000Z" })
    expect(Either.getOrThrow(await acquire(dir)).pid).toBe(process.pid)
    writeFileSync(DataDirLock.lockPath(dir), "")
    utimesSync(DataDirLock.lockPath(dir), new Date(0), new Date(0))
    expect(Either.getOrThrow(await acquire(dir)).pid).toBe(process.pid)
    expect(existsSync(`${DataDirLock.lockPath(dir)}.takeover`)).toBe(false)
  })

  it("never takes over a lock written on another host: its process cannot be checked from here", async () => {
    const dir = fresh()
    holderFile(dir, { pid: deadPid(), host: `not-${hostname()}`, since: "2026-01-01T00:00:00.000Z" })
    expect(Either.isLeft(await acquire(dir))).toBe(true)
  })
})
