/** Starts the real server as a child process (Node or Deno) on a free port and stops it with SIGTERM. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createServer } from "node:net"
import { resolve } from "node:path"

const root = resolve(import.meta.dirname, "../..")

const built = new Set<"node" | "deno">()
/**
 * The server as `npm start` and `npm run start:deno` run it: the runtime's bundle
 * (apps/server/build.mjs, a no-op when it is up to date), not the TypeScript, so the tests exercise
 * what ships. Not the tsx CLI either, whose signal relay SIGKILLs a server that does not acknowledge
 * SIGTERM within 30 ms.
 */
const serverCommand = (runtime: "node" | "deno") => {
  if (!built.has(runtime)) {
    execFileSync(process.execPath, ["apps/server/build.mjs", runtime === "node" ? "server" : "deno", "console"], {
      cwd: root,
      stdio: "inherit"
    })
    built.add(runtime)
  }
  return runtime === "node"
    ? [process.execPath, "dist/server.mjs"]
    : [
      resolve(root, "node_modules/deno/deno"),
      "run",
      "--no-prompt",
      "--allow-env",
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-sys",
      "dist/server.deno.mjs"
    ]
}

export const freePort = () =>
  new Promise<number>((done, fail) => {
    const srv = createServer()
    srv.once("error", fail)
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => done(port))
    })
  })

/** Whether process `pid` exists (signal 0 checks without sending). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export interface RunningServer {
  readonly baseUrl: string
  /** The test key printed at first boot, if this boot printed one. */
  readonly testKey: string | null
  /** The owner's console sign-in link printed at first boot, if this boot printed one. */
  readonly signInLink: string | null
  readonly output: () => string
  /** SIGTERM, then the exit code. */
  readonly stop: () => Promise<number | null>
  /** SIGKILL (a crash: nothing is drained), then the exit signal. */
  readonly kill: () => Promise<NodeJS.Signals | null>
}

/** `env.PORT` picks the port (a caller that must know the address beforehand, for `PUBLIC_BASE_URL`); else a free one. */
export const startServer = async (
  runtime: "node" | "deno",
  env: Record<string, string>,
  timeoutMs = 60_000
): Promise<RunningServer> => {
  const port = env["PORT"] === undefined ? await freePort() : Number(env["PORT"])
  const command = serverCommand(runtime)
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    cwd: root,
    env: { ...process.env, HOST: "127.0.0.1", NO_COLOR: "1", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so kill() reaches every process it starts.
    detached: true
  })
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  child.stderr!.on("data", (d) => (out += d))
  let signal: NodeJS.Signals | null = null
  const exited = new Promise<number | null>((done) =>
    child.once("exit", (code, sig) => {
      signal = sig
      done(code)
    })
  )
  const started = Date.now()
  while (!/Listening on/.test(out)) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`)
    if (Date.now() - started > timeoutMs) {
      child.kill("SIGKILL")
      throw new Error(`server did not start in time:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    testKey: /(svc_test_[0-9A-Za-z]{40})/.exec(out)?.[1] ?? null,
    signInLink: /(https?:\/\/\S+\/app\/sign-in\/[A-Za-z0-9_-]{43})/.exec(out)?.[1] ?? null,
    output: () => out,
    stop: async () => {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
      const code = await exited
      clearTimeout(timer)
      return code
    },
    kill: async () => {
      process.kill(-child.pid!, "SIGKILL")
      await exited
      return signal
    }
  }
}

/** Runs the server expecting it to exit on its own (a refused start): its exit code and output, stdout and stderr apart. */
export const runUntilExit = (env: Record<string, string>, timeoutMs = 60_000, runtime: "node" | "deno" = "node") =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    const command = serverCommand(runtime)
    const child = spawn(command[0]!, command.slice(1), {
      cwd: root,
      env: { ...process.env, HOST: "127.0.0.1", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      fail(new Error(`server did not exit in time:\n${stdout}${stderr}`))
    }, timeoutMs)
    child.once("exit", (code) => {
      clearTimeout(timer)
      done({ code, stdout, stderr })
    })
  })
