/**
 * One process per embedded database. PGlite has no postmaster to refuse a second backend on the
 * same files, so two processes on one DATA_DIR would both write them and corrupt them. The holder
 * keeps `DATA_DIR/pglite.lock` (its pid, host and start time), created atomically (`wx`); a second
 * process refuses while the holder lives. A lock left by a process that died (kill -9, a crash) is
 * taken over with a warning: on the same host its pid is gone (or is our own, as after a container
 * restart), or, where this runtime cannot probe pids (Deno without --allow-run), the holder has
 * not refreshed the file's mtime (its heartbeat) for 30 s. A lock from another host is never
 * taken over: its process cannot be checked from here.
 *
 * node:fs and node:os only, which Deno provides too (the server also runs under Deno).
 */
import { Clock, Console, Data, Effect, Layer, Schedule } from "effect"
import * as fs from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"

export interface LockHolder {
  readonly pid: number
  readonly host: string
  /** ISO time the holder took the lock. */
  readonly since: string
}

/** The embedded database is held by another live process; `message` is the one line to print. */
export class DataDirLocked
  extends Data.TaggedError("DataDirLocked")<{ readonly dataDir: string; readonly holder: LockHolder }>
{
  get message() {
    const { pid, host, since } = this.holder
    return `DATA_DIR ${this.dataDir} is in use by process ${pid} on ${host} since ${since}: one process per embedded database (stop it, or set DATABASE_URL to share a Postgres)`
  }
}

export const lockPath = (dataDir: string) => join(dataDir, "pglite.lock")

/** The holder named in the file; undefined when it is gone or unreadable. */
const readHolder = (path: string): LockHolder | undefined => {
  try {
    const holder = JSON.parse(fs.readFileSync(path, "utf8"))
    return typeof holder?.pid === "number" && typeof holder?.host === "string" ? holder : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether the process exists: undefined when this runtime cannot tell (Deno without --allow-run
 * refuses the signal-0 probe, and /proc). Only a definite "no such process" counts as dead.
 */
const alive = (pid: number): boolean | undefined => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "ESRCH") return false
    if (code === "EPERM") return true
    try {
      return fs.existsSync("/proc/1") ? fs.existsSync(`/proc/${pid}`) : undefined
    } catch {
      return undefined
    }
  }
}

/** The holder touches the lock this often, so a process that cannot probe pids can still tell a dead holder. */
const HEARTBEAT_MS = 5_000
const HEARTBEAT_LOST_MS = 30_000

const untouchedFor = (path: string, now: number) => {
  try {
    return now - fs.statSync(path).mtimeMs
  } catch {
    return Infinity
  }
}

const isStale = (path: string, now: number) => {
  const holder = readHolder(path)
  // An unreadable file is being written right now (between `wx` and the write), or was left half-written by a process killed then.
  if (holder === undefined) return untouchedFor(path, now) > 2_000
  if (holder.host !== hostname()) return false
  if (holder.pid === process.pid) return true
  const living = alive(holder.pid)
  return living === undefined ? untouchedFor(path, now) > HEARTBEAT_LOST_MS : !living
}

/** Creates the lock file with our holder; false when it already exists. */
const create = (path: string, holder: LockHolder) => {
  let fd: number
  try {
    fd = fs.openSync(path, "wx")
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false
    throw e
  }
  try {
    fs.writeFileSync(fd, JSON.stringify(holder))
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  return true
}

/**
 * Takes the lock or fails with `DataDirLocked`. A stale lock is removed under a short-lived
 * `pglite.lock.takeover` file (also `wx`), so two processes starting after a crash cannot both
 * remove it and each think they created the new one.
 */
export const acquire = (dataDir: string): Effect.Effect<LockHolder, DataDirLocked> =>
  Effect.gen(function*() {
    const path = lockPath(dataDir)
    const me: LockHolder = {
      pid: process.pid,
      host: hostname(),
      since: new Date(yield* Clock.currentTimeMillis).toISOString()
    }
    for (let attempt = 0; attempt < 50; attempt++) {
      fs.mkdirSync(dataDir, { recursive: true })
      if (create(path, me)) return me
      const now = yield* Clock.currentTimeMillis
      const holder = readHolder(path)
      if (!isStale(path, now)) {
        if (holder !== undefined) return yield* new DataDirLocked({ dataDir, holder })
        yield* Effect.sleep("100 millis")
        continue
      }
      const takeover = `${path}.takeover`
      if (create(takeover, me)) {
        try {
          // Still the same stale lock (no one took it over between our read and our guard)?
          if (isStale(path, now)) {
            fs.rmSync(path, { force: true })
            yield* Console.warn(
              holder
                ? `Taking over the stale lock on ${dataDir} left by process ${holder.pid} (since ${holder.since}), which is no longer running`
                : `Taking over an unreadable lock file on ${dataDir}`
            )
          }
        } finally {
          fs.rmSync(takeover, { force: true })
        }
      } else if (isStale(takeover, now)) {
        // The process taking it over died mid-way.
        fs.rmSync(takeover, { force: true })
      } else {
        yield* Effect.sleep("50 millis")
      }
    }
    return yield* new DataDirLocked({ dataDir, holder: readHolder(path) ?? me })
  })

const heartbeat = (dataDir: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.sync(() => {
      try {
        fs.utimesSync(lockPath(dataDir), new Date(now), new Date(now))
      } catch {
        // Removed by hand: nothing to keep fresh.
      }
    }))

/** Removes the lock if it is still ours (a takeover after we were presumed dead leaves it alone). */
export const release = (dataDir: string, me: LockHolder) =>
  Effect.sync(() => {
    const path = lockPath(dataDir)
    const holder = readHolder(path)
    if (holder?.pid === me.pid && holder.host === me.host && holder.since === me.since) fs.rmSync(path, { force: true })
  })

/** Holds the lock for the layer's lifetime: build this before PGlite opens, release it after PGlite closes. */
export const layer = (dataDir: string): Layer.Layer<never, DataDirLocked> =>
  Layer.scopedDiscard(
    Effect.acquireRelease(acquire(dataDir), (me) => release(dataDir, me)).pipe(
      Effect.zipRight(Effect.forkScoped(Effect.repeat(heartbeat(dataDir), Schedule.spaced(HEARTBEAT_MS))))
    )
  )
