/**
 * Throwaway Postgres clusters for tests.
 *
 * `startPostgres()` returns `TEST_DATABASE_URL` when it is set; otherwise it runs the
 * machine's `initdb` + `pg_ctl` (as the `postgres` user when we are root, since
 * initdb refuses root) on a private data dir, a private unix-socket dir and a free
 * TCP port on 127.0.0.1, creates a database and returns its URL. Every call gets
 * its own directories and port, so several vitest workers can start clusters at
 * the same time. With no Postgres binaries it returns `null` (callers skip), or
 * throws when `CI=true` (a missing Postgres is then a failure).
 */
import { Effect } from "effect"
import { execFile, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { accessSync, constants as fsConstants, existsSync, readdirSync, realpathSync } from "node:fs"
import { chown, mkdir, mkdtemp, readFile, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import pg from "pg"

export interface PostgresHandle {
  /** `postgres://postgres@127.0.0.1:<port>/<db>` */
  readonly url: string
  /** Stops the cluster and removes its directories (a no-op for `TEST_DATABASE_URL`). */
  readonly stop: () => Promise<void>
  /** A private cluster's server stopped (`pg_ctl stop -m <mode>`) and started again on the same port and data. */
  readonly server?: {
    readonly port: number
    readonly halt: (mode: "fast" | "immediate") => Promise<void>
    readonly resume: () => Promise<void>
    /**
     * A hot standby streaming from this server (pg_basebackup -R), on a port and data dir of its
     * own, started and caught up; `stop` of this handle stops it too.
     */
    readonly standby: () => Promise<Standby>
  }
}

export interface Standby {
  readonly port: number
  /** The same database on the standby. */
  readonly url: string
  /** `pg_ctl promote`: the standby ends recovery and takes writes. */
  readonly promote: () => Promise<void>
}

export interface StartPostgresOptions {
  /** Ignore `TEST_DATABASE_URL` and always start a private cluster. */
  readonly fresh?: boolean | undefined
  /** Name of the database to create (default `switchboard_test`). */
  readonly database?: string | undefined
  /** Extra server settings, `name=value` (benchmarks: `shared_preload_libraries=pg_stat_statements`). */
  readonly settings?: ReadonlyArray<string> | undefined
  /**
   * Keep the cluster in this directory: made on first use, started again on the next, never removed
   * (benchmarks that seed millions of rows once and measure several times).
   */
  readonly keepIn?: string | undefined
}

const isCI = () => process.env["CI"] === "true"

const isExecutable = (path: string) => {
  try {
    accessSync(path, fsConstants.X_OK)
    return true
  } catch {
    return false
  }
}

/** Directory holding `initdb`, `pg_ctl`, `postgres`: PATH first, then Debian's layout. */
export const findPostgresBinDir = (): string | null => {
  const candidates = (process.env["PATH"] ?? "").split(delimiter).filter((d) => d.length > 0)
  const debian = "/usr/lib/postgresql"
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a))
    for (const v of versions) candidates.push(join(debian, v, "bin"))
  }
  for (const dir of candidates) {
    if (["initdb", "pg_ctl", "postgres"].every((b) => isExecutable(join(dir, b)))) return dir
  }
  return null
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })

interface RunResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (file: string, args: ReadonlyArray<string>, asPostgresUser: boolean) =>
  new Promise<RunResult>((resolve) => {
    const [cmd, argv] = asPostgresUser ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, [...args]]
    execFile(
      cmd,
      argv,
      { env: { ...process.env, LC_ALL: "C" }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      }
    )
  })

const runOrThrow = async (file: string, args: ReadonlyArray<string>, asPostgresUser: boolean) => {
  const result = await run(file, args, asPostgresUser)
  if (result.code !== 0) {
    throw new Error(`${file} ${args.join(" ")} failed (${result.code}):\n${result.stdout}\n${result.stderr}`)
  }
  return result
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/** Creates `database` on the server behind `adminUrl` (connected to the `postgres` db). */
export const createDatabase = async (adminUrl: string, database: string): Promise<void> => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${quoteIdent(database)}`)
  } finally {
    await client.end()
  }
}

const withDatabase = (url: string, database: string) => {
  const u = new URL(url)
  u.pathname = `/${encodeURIComponent(database)}`
  return u.toString()
}

/**
 * A fresh, uniquely named database on the server behind `url` (useful to isolate
 * test files that share one cluster). `drop()` removes it.
 */
export const freshDatabase = async (
  url: string,
  prefix = "t"
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`
  const admin = withDatabase(url, "postgres")
  await createDatabase(admin, name)
  return {
    url: withDatabase(url, name),
    drop: async () => {
      const client = new pg.Client({ connectionString: admin })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    }
  }
}

/**
 * Starts a throwaway Postgres (or returns `TEST_DATABASE_URL`). `null` when no
 * Postgres binaries exist and `CI` is not "true".
 */
export const startPostgres = async (options: StartPostgresOptions = {}): Promise<PostgresHandle | null> => {
  const envUrl = process.env["TEST_DATABASE_URL"]
  if (!options.fresh && envUrl !== undefined && envUrl !== "") {
    return { url: envUrl, stop: async () => {} }
  }
  const bin = findPostgresBinDir()
  if (bin === null) {
    if (isCI()) throw new Error("CI=true but no Postgres binaries (initdb, pg_ctl, postgres) were found")
    return null
  }

  const asRoot = process.getuid?.() === 0
  const kept = options.keepIn !== undefined
  const base = kept ? options.keepIn! : await mkdtemp(join(tmpdir(), "switchboard-pg-"))
  if (kept) await mkdir(base, { recursive: true })
  const dataDir = join(base, "data")
  const remove = () => (kept ? Promise.resolve() : rm(base, { recursive: true, force: true }))
  const socketDir = base
  const database = options.database ?? "switchboard_test"
  if (asRoot) {
    const info = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" })
    const gidInfo = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" })
    const uid = Number(info.stdout.trim())
    const gid = Number(gidInfo.stdout.trim())
    if (info.status !== 0 || !Number.isInteger(uid)) {
      await remove()
      throw new Error("running as root but there is no `postgres` user to run initdb as")
    }
    await chown(base, uid, gid)
  }

  const pgCtl = join(bin, "pg_ctl")
  // The data dirs of the servers running (the cluster's own, and a standby's).
  const running = new Set<string>()
  const stopSync = () => {
    for (const dir of running) {
      spawnSync(asRoot ? "runuser" : pgCtl, [
        ...(asRoot ? ["-u", "postgres", "--", pgCtl] : []),
        "stop",
        "-D",
        dir,
        "-m",
        "immediate",
        "-s"
      ])
    }
    running.clear()
  }
  // last resort if the process exits without calling stop()
  process.once("exit", stopSync)

  const stopServer = async (dir: string, mode: "fast" | "immediate") => {
    const result = await run(pgCtl, ["stop", "-D", dir, "-m", mode, "-w", "-s"], asRoot)
    running.delete(dir)
    return result
  }

  /**
   * Starts the server of `dir` on a free port. The port is free when we probe it; another process
   * may take it before postgres binds, so a failed start is retried on a new port. `again` starts it
   * once more as it was started.
   */
  const serve = async (dir: string) => {
    const logFile = `${dir}.log`
    let settings = ""
    const start = async () => {
      const result = await run(
        pgCtl,
        ["start", "-D", dir, "-l", logFile, "-w", "-t", "60", "-s", "-o", settings],
        asRoot
      )
      if (result.code === 0) running.add(dir)
      return result
    }
    let lastError = ""
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort()
      settings = [
        `-p ${port}`,
        "-c listen_addresses=127.0.0.1",
        `-c unix_socket_directories=${socketDir}`,
        "-c fsync=off",
        "-c synchronous_commit=off",
        "-c full_page_writes=off",
        "-c max_connections=100",
        "-c shared_buffers=64MB",
        ...(options.settings ?? []).map((setting) => `-c ${setting}`)
      ].join(" ")
      const result = await start()
      if (result.code === 0) {
        const again = async () => {
          const result = await start()
          if (result.code !== 0) throw new Error(`pg_ctl start failed:\n${result.stdout}\n${result.stderr}`)
        }
        return { port, again }
      }
      lastError = `${result.stdout}\n${result.stderr}\n${await readFile(logFile, "utf8").catch(() => "")}`
      // make sure a half-started server is gone before retrying
      await stopServer(dir, "immediate")
    }
    throw new Error(`pg_ctl start failed:\n${lastError}`)
  }

  try {
    const reused = kept && existsSync(join(dataDir, "PG_VERSION"))
    if (!reused) {
      await runOrThrow(
        join(bin, "initdb"),
        ["-D", dataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"],
        asRoot
      )
    }
    const { port, again } = await serve(dataDir)
    const root = `postgres://postgres@127.0.0.1:${port}`
    if (!reused) await createDatabase(`${root}/postgres`, database)

    let standbys = 0
    const standby = async (): Promise<Standby> => {
      const standbyDir = join(base, `standby-${++standbys}`)
      // pg_basebackup sits beside the real pg_ctl (PATH may hold only links to initdb, pg_ctl, postgres).
      const tools = dirname(realpathSync(pgCtl))
      await runOrThrow(
        join(tools, "pg_basebackup"),
        ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-D", standbyDir, "-R", "-X", "stream", "-c", "fast"],
        asRoot
      )
      const { port: standbyPort } = await serve(standbyDir)
      const primary = new pg.Client({ connectionString: `${root}/postgres` })
      await primary.connect()
      try {
        const deadline = Date.now() + 60_000
        while ((await primary.query("SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).rowCount === 0) {
          if (Date.now() > deadline) throw new Error("the standby did not start streaming within 60 s")
          await new Promise((r) => setTimeout(r, 100))
        }
      } finally {
        await primary.end()
      }
      return {
        port: standbyPort,
        url: `postgres://postgres@127.0.0.1:${standbyPort}/${database}`,
        promote: async () => void await runOrThrow(pgCtl, ["promote", "-D", standbyDir, "-w", "-t", "60", "-s"], asRoot)
      }
    }

    let stopped = false
    return {
      url: `${root}/${database}`,
      server: {
        port,
        halt: async (mode) => {
          const result = await stopServer(dataDir, mode)
          if (result.code !== 0) throw new Error(`pg_ctl stop failed:\n${result.stdout}\n${result.stderr}`)
        },
        resume: again,
        standby
      },
      stop: async () => {
        if (stopped) return
        stopped = true
        process.removeListener("exit", stopSync)
        for (const dir of [...running]) await stopServer(dir, kept ? "fast" : "immediate")
        await remove()
      }
    }
  } catch (error) {
    stopSync()
    process.removeListener("exit", stopSync)
    await remove()
    throw error
  }
}

/**
 * Scoped variant: the cluster is stopped when the scope closes. `null` as for
 * `startPostgres`.
 */
export const postgresScoped = (options: StartPostgresOptions = {}) =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: () => startPostgres(options), catch: (cause) => cause }),
    (handle) => (handle === null ? Effect.void : Effect.promise(() => handle.stop()))
  ).pipe(Effect.map((handle) => (handle === null ? null : handle.url)))
